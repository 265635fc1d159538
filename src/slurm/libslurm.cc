#include "slurm/libslurm.h"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>

extern "C" {
#include <slurm/slurm.h>
}

namespace cedana::slurm {

Status InitLibslurm() {
  const char* conf = std::getenv("SLURM_CONF");
  std::string path = conf != nullptr && *conf != '\0' ? conf : "/etc/slurm/slurm.conf";
  if (::access(path.c_str(), R_OK) != 0)
    return FailedPreconditionError("no SLURM configuration at " + path + ": SLURM is not watched");
  static std::once_flag init;
  std::call_once(init, [] { slurm_init(nullptr); });
  return OkStatus();
}

}  // namespace cedana::slurm
