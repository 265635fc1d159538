# BLAKE3, the digest of new checkpoints' streams and chunks (src/image/checksum.h). Debian 12
# packages no C library of it, but its Rust crate's package (librust-blake3-dev, from Debian's
# archive like everything else; scripts/setup.sh installs it) ships the reference C
# implementation with its SIMD assembly, which is what the crate itself compiles. We build that
# into a static library.
# BLAKE3_SOURCE_DIR may name another copy of the same C sources.
set(BLAKE3_SOURCE_DIR "" CACHE PATH "Directory with BLAKE3's C sources (blake3.h, blake3.c, ...)")
if(NOT BLAKE3_SOURCE_DIR)
  file(GLOB _blake3_dirs LIST_DIRECTORIES true /usr/share/cargo/registry/blake3-1.*/c)
  if(_blake3_dirs)
    list(SORT _blake3_dirs COMPARE NATURAL ORDER DESCENDING)
    list(GET _blake3_dirs 0 _blake3_newest)
    set(BLAKE3_SOURCE_DIR ${_blake3_newest} CACHE PATH "" FORCE)
  endif()
endif()
if(NOT BLAKE3_SOURCE_DIR OR NOT EXISTS ${BLAKE3_SOURCE_DIR}/blake3_dispatch.c)
  message(FATAL_ERROR "BLAKE3's C sources were not found (they come with Debian's "
                      "librust-blake3-dev: apt-get install librust-blake3-dev, which "
                      "scripts/setup.sh does), or set BLAKE3_SOURCE_DIR")
endif()
message(STATUS "BLAKE3 sources: ${BLAKE3_SOURCE_DIR}")

set(_blake3_sources ${BLAKE3_SOURCE_DIR}/blake3.c ${BLAKE3_SOURCE_DIR}/blake3_dispatch.c
                    ${BLAKE3_SOURCE_DIR}/blake3_portable.c)
set(_blake3_x86_64 FALSE)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64)$")
  set(_blake3_x86_64 TRUE)
  # The assembly of each instruction set; blake3_dispatch.c picks one by CPUID at run time.
  enable_language(ASM)
  foreach(_set sse2 sse41 avx2 avx512)
    list(APPEND _blake3_sources ${BLAKE3_SOURCE_DIR}/blake3_${_set}_x86-64_unix.S)
  endforeach()
endif()
add_library(blake3 STATIC ${_blake3_sources})
if(NOT _blake3_x86_64)  # elsewhere the portable C code only
  target_compile_definitions(blake3 PRIVATE BLAKE3_NO_SSE2 BLAKE3_NO_SSE41 BLAKE3_NO_AVX2
                                            BLAKE3_NO_AVX512 BLAKE3_USE_NEON=0)
endif()
# Someone else's code: built as its authors wrote it, without our warnings.
target_compile_options(blake3 PRIVATE -w)
target_include_directories(blake3 SYSTEM PUBLIC ${BLAKE3_SOURCE_DIR})
