// libFuzzer entry point of the daemon_request fuzz target (fuzz_input.h; built with
// CEDANA_FUZZ=ON).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cedana::fuzz::RunDaemonRequestInput(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
