#include "daemon/node_context.h"

#include <thread>

#include <fmt/format.h>

#include "common/fs.h"

namespace cedana::daemon {

NodeContext::NodeContext(Config config, NodeSeams seams, std::string cluster_key,
                         std::string hostname, std::string criu_version)
    : config_(std::move(config)),
      seams_(std::move(seams)),
      cluster_key_(std::move(cluster_key)),
      hostname_(std::move(hostname)),
      criu_version_(std::move(criu_version)),
      records_(config_.node.state_dir),
      slurm_jobs_(config_.node.state_dir + "/slurm-jobs"),
      dump_queue_({config_.node.checkpoint_parallel_dumps > 0
                       ? config_.node.checkpoint_parallel_dumps
                       : AutoDumpSlots(std::thread::hardware_concurrency()),
                   HalfOfAvailableMemory}) {}

Result<std::unique_ptr<storage::CheckpointStore>> NodeContext::OpenStore(
    const std::string& dir) const {
  return seams_.open_store(dir.empty() ? config_.checkpoint_dir : dir);
}

std::optional<engine::RunAs> NodeContext::CriuIdentityFor(uid_t owner, gid_t gid) const {
  if (!RunsAsOwner(owner)) return std::nullopt;
  return engine::RunAs{owner, gid, GroupsOf(owner, gid)};
}

std::pair<uid_t, gid_t> NodeContext::StoreIdentityFor(uid_t owner, gid_t gid) const {
  if (!RunsAsOwner(owner)) return {0, 0};
  return {owner, gid};
}

std::unique_lock<std::mutex> NodeContext::LockWorkload(const std::string& id) {
  std::mutex* mu;
  {
    std::lock_guard guard(locks_mu_);
    auto& slot = locks_[id];
    if (!slot) slot = std::make_unique<std::mutex>();
    mu = slot.get();
  }
  return std::unique_lock<std::mutex>(*mu);
}

void NodeContext::ClaimWorkDir(const std::string& name) {
  std::lock_guard guard(work_dirs_mu_);
  work_dirs_.insert(name);
}

bool NodeContext::WorkDirClaimed(const std::string& name) const {
  std::lock_guard guard(work_dirs_mu_);
  return work_dirs_.count(name) != 0;
}

void NodeContext::RetireWorkDir(const std::string& name) {
  {
    std::lock_guard guard(work_dirs_mu_);
    work_dirs_.erase(name);
    if (work_dir_remover_) {
      retired_work_dirs_.insert(name);
      // Under the lock: SetWorkDirRemover({}) returns only once no call is in flight.
      work_dir_remover_();
      return;
    }
  }
  (void)fs::RemoveTree(config_.node.work_dir + "/" + name);
}

bool NodeContext::WorkDirRetired(const std::string& name) const {
  std::lock_guard guard(work_dirs_mu_);
  return retired_work_dirs_.count(name) != 0;
}

void NodeContext::SetWorkDirRemover(std::function<void()> wake) {
  std::lock_guard guard(work_dirs_mu_);
  work_dir_remover_ = std::move(wake);
}

bool NodeContext::WorkDirRemoved(const std::string& name) {
  std::lock_guard guard(work_dirs_mu_);
  return retired_work_dirs_.erase(name) != 0;
}

Status CheckOwner(const Caller& caller, uid_t owner, const std::string& what) {
  if (caller.IsRoot() || caller.uid == owner) return OkStatus();
  return PermissionDeniedError(
      fmt::format("{} belongs to {}, not to {}", what, UserName(owner), UserName(caller.uid)));
}

}  // namespace cedana::daemon
