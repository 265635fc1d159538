#include "daemon/lineage_recorder.h"

#include <mutex>

#include "common/fs.h"
#include "common/log.h"
#include "common/system_names.h"
#include "daemon/caller_files.h"
#include "daemon/mpi_scratch.h"
#include "image/lineage.h"

namespace cedana::daemon {

Status RecordFinishedRuns(const NodeContext& node) {
  static std::mutex one_pass;
  std::lock_guard<std::mutex> pass(one_pass);
  CEDANA_ASSIGN_OR_RETURN(auto ids, node.records().List());
  Status first;
  for (const std::string& id : ids) {
    const WorkloadRecords& records = node.records();
    if (fs::Exists(records.LineageMarker(id))) continue;
    Result<WorkloadState> state = records.LoadState(id);
    if (!state.has_value() || state->status != WorkloadStatus::kExited) continue;
    Result<WorkloadSpec> spec = records.LoadSpec(id);
    // The run is over: an empty directory for OpenMPI's files goes (a restore makes it again);
    // one a checkpoint's processes left files in stays for a restore here.
    if (spec.has_value()) RemoveMpiScratchIfEmpty(spec->mpi_scratch_dir);
    // Ended from outside: nothing to record, and nothing to read again every 2 s.
    if (!state->ended_by_itself) {
      (void)fs::WriteFileAtomic(records.LineageMarker(id), "");
      continue;
    }
    if (!spec.has_value()) continue;
    image::LineageEnd end;
    end.owner = UserName(spec->uid);
    end.label = spec->label;
    end.finished_at_ms = state->ended_at_ms;
    end.exit_code = state->exit_code;
    end.workload_id = id;
    end.job_id = spec->job_id;
    end.node = node.hostname();
    Status s = [&]() -> Status {
      // In unprivileged mode the owner's directory of the store is written as the owner.
      const auto [uid, gid] = node.StoreIdentityFor(spec->uid, spec->gid);
      AsFileUser as(uid, gid);
      CEDANA_ASSIGN_OR_RETURN(auto store, node.OpenStore(""));
      return image::WriteLineageEnd(*store, end);
    }();
    if (s.ok()) s = fs::WriteFileAtomic(records.LineageMarker(id), "");
    if (s.ok()) {
      log::Info("lineage: {} (workload {}); the next run of the label starts fresh",
                image::DescribeEnd(end), id);
    } else if (first.ok()) {
      first = s.WithContext("workload " + id);
    }
  }
  return first;
}

}  // namespace cedana::daemon
