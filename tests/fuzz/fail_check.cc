#include <cstdio>
#include <cstdlib>

#include "fuzz_input.h"

namespace cedana::fuzz {

void FailCheck(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", condition, file, line);
  std::abort();
}

}  // namespace cedana::fuzz
