// Small text helpers shared by the slurm.conf editor and the batch script reader. Stateless.
#pragma once

#include <cctype>
#include <string_view>

namespace cedana::slurm {

// ASCII case-insensitive equality (SLURM keys and option values are case-insensitive).
inline bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace cedana::slurm
