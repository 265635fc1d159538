#include "daemon/slurm_job_registry.h"

#include <charconv>

#include "common/fs.h"

namespace cedana::daemon {

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
