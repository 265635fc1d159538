#include "common/job_id.h"

namespace cedana {

Status ValidateJobId(const std::string& job_id) {
  if (job_id.empty() || job_id.size() > 10 ||
      job_id.find_first_not_of("0123456789") != std::string::npos)
    return InvalidArgumentError("job id \"" + job_id +
                                "\" is not a SLURM job number (1 to 10 digits)");
  return OkStatus();
}

}  // namespace cedana
