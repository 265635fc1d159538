#include "daemon/slurm_job_registry.h"

#include <charconv>

#include "common/fs.h"

namespace cedana::daemon {

Status ValidateJobId(const std::string& job_id) {
  if (job_id.empty() || job_id.size() > 10 || job_id.find_first_not_of("0123456789") != std::string::npos)
    return InvalidArgumentError("job id \"" + job_id + "\" is not a SLURM job number (1 to 10 digits)");
  return OkStatus();
}

Status SlurmJobRegistry::Register(const std::string& job_id, uid_t uid) const {
  CEDANA_RETURN_IF_ERROR(ValidateJobId(job_id));
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(dir_, 0700));
  return fs::WriteFileAtomic(dir_ + "/" + job_id, std::to_string(uid) + "\n", 0600);
}

std::optional<uid_t> SlurmJobRegistry::OwnerOf(const std::string& job_id) const {
  if (!ValidateJobId(job_id).ok()) return std::nullopt;
  Result<std::string> text = fs::ReadFile(dir_ + "/" + job_id);
  if (!text.has_value()) return std::nullopt;
  uid_t uid = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), uid);
  if (ec != std::errc() || end == text->data()) return std::nullopt;
  return uid;
}

}  // namespace cedana::daemon
