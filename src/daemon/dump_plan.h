// DumpPlan: everything a dump decides before it touches the workload, so that bad input never
// freezes it. ResolveDumpTarget reads what is dumped (a workload's records, or a process by
// pid) and checks its owner; PlanDump is then pure validation and naming: the codec, the
// streams, the outside-TCP policy, the identities CRIU and the store are used with, where the
// images go, and the manifest as far as it is known before CRIU runs. The steps that follow
// are in dump_job.cc.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "daemon/dump_job.h"
#include "daemon/node_context.h"
#include "daemon/tcp_policy.h"
#include "image/codec.h"
#include "image/manifest.h"
#include "storage/checkpoint_store.h"

namespace cedana::daemon {

// What is being dumped.
struct DumpTarget {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string label;
  std::string workload_id;  // "" for a process by pid
  std::string job_id;
  std::string tcp;  // the workload's own CEDANA_CHECKPOINT_TCP, if it has one
  uint32_t restart_count = 0;
  nlohmann::json workload;  // what a restore needs (manifest.workload)
};

// kNotFound, kPermissionDenied or kFailedPrecondition (not running): nothing to tell its owner.
Result<DumpTarget> ResolveDumpTarget(const NodeContext& node, const Caller& caller,
                                     const DumpOptions& options);

struct DumpPlan {
  image::Manifest manifest;  // without streams, sizes, times and signature
  storage::CheckpointRef ref;
  int streams = 1;
  OutsideTcp outside_tcp = OutsideTcp::kRefuse;
  bool direct = false;      // checkpoint.direct: CRIU's images go to the store as written
  bool dedup = false;       // checkpoint.dedup: the pages go to the label's chunks
  std::string images_name;  // in the work dir (NodeContext::ClaimWorkDir)
  std::string images_dir;
  std::optional<engine::RunAs> criu_identity;  // unprivileged mode: the owner
  std::pair<uid_t, gid_t> store_identity;      // NodeContext::StoreIdentityFor
};

// kInvalidArgument naming the option that is wrong and what is valid.
Result<DumpPlan> PlanDump(const NodeContext& node, const DumpTarget& target,
                          const DumpOptions& options);

}  // namespace cedana::daemon
