# Reads the installed SLURM's version from slurm/slurm_version.h into SLURM_VERSION_NUMBER
# (0x160508) and SLURM_VERSION_STRING (22.05.8). Non-SPANK plugins load only into the exact
# version they were built for; the plugins embed it and `cedana slurm setup` checks it.
if(NOT SLURM_INCLUDE_DIR OR NOT EXISTS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h")
  message(FATAL_ERROR
    "SLURM headers not found (need slurm/slurm.h and slurm/slurm_version.h): install "
    "libslurm-dev, or set SLURM_INCLUDE_DIR to the directory that holds slurm/slurm.h")
endif()
file(STRINGS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h" _slurm_version_line
     REGEX "^#define[ \t]+SLURM_VERSION_NUMBER[ \t]+0x[0-9a-fA-F]+")
if(NOT _slurm_version_line)
  message(FATAL_ERROR "no SLURM_VERSION_NUMBER in ${SLURM_INCLUDE_DIR}/slurm/slurm_version.h")
endif()
string(REGEX REPLACE ".*(0x[0-9a-fA-F]+).*" "\\1" SLURM_VERSION_NUMBER "${_slurm_version_line}")
math(EXPR _slurm_major "(${SLURM_VERSION_NUMBER} >> 16) & 255")
math(EXPR _slurm_minor "(${SLURM_VERSION_NUMBER} >> 8) & 255")
math(EXPR _slurm_micro "${SLURM_VERSION_NUMBER} & 255")
if(_slurm_minor LESS 10)
  set(_slurm_minor "0${_slurm_minor}")  # SLURM writes 22.05.8
endif()
set(SLURM_VERSION_STRING "${_slurm_major}.${_slurm_minor}.${_slurm_micro}" )
set(SLURM_VERSION_NUMBER "${SLURM_VERSION_NUMBER}" )
