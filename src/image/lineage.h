// Lineage: how a label's last run ended, kept in the store beside the label's checkpoints
// (storage::kLineageName). A run that ends by itself (its program exited, whatever the status)
// finishes its label's lineage: a later restore by label starts fresh instead of resuming the
// finished run's stale mid-point, and that run's checkpoints are listed as such until retention
// removes them (they can still be restored by id). Checkpoints made after the end belong to a
// new run. A run ended from outside (preemption, scancel, a time limit, a kill, a node failure)
// leaves its lineage open. Value types and stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "common/result.h"
#include "storage/checkpoint_store.h"

namespace cedana::image {

struct LineageEnd {
  std::string owner;  // user name
  std::string label;
  int64_t finished_at_ms = 0;  // when the run's program exited
  int exit_code = 0;
  std::string workload_id;  // the run's last workload
  std::string job_id;       // its SLURM job, if any
  std::string node;
};

std::string LineageEndToJson(const LineageEnd& end);
// kInvalidArgument naming the field that is missing or of the wrong type.
Result<LineageEnd> ParseLineageEnd(const std::string& json);

// Whether a checkpoint made at `created_at_ms` belongs to a run that has since finished.
bool OfFinishedRun(int64_t created_at_ms, const std::optional<LineageEnd>& end);

// "label L: its last run finished at 2026-12-01 12:00:00 UTC (exit 0)".
std::string DescribeEnd(const LineageEnd& end);
// kNotFound naming the end: a restore by label found only the finished run's checkpoints.
Status FinishedRunError(const LineageEnd& end);
// Whether `s` is FinishedRunError's (a fresh start to report as such, not a failed restore).
bool IsFinishedRun(const Status& s);

// The store's record of owner/label; nullopt when there is none (an open lineage).
Result<std::optional<LineageEnd>> ReadLineageEnd(storage::CheckpointStore& store,
                                                 const std::string& owner,
                                                 const std::string& label);
Status WriteLineageEnd(storage::CheckpointStore& store, const LineageEnd& end);

// The lineage records of a store's labels, each read once: a listing asks for every checkpoint.
// Not thread-safe; lives for one listing.
class LineageEnds {
 public:
  explicit LineageEnds(storage::CheckpointStore& store) : store_(store) {}
  Result<std::optional<LineageEnd>> Of(const std::string& owner, const std::string& label);
  // Of, where a record that cannot be read counts as an open lineage: said once per label in
  // the log (its message starts with `who`).
  std::optional<LineageEnd> OrOpen(const std::string& owner, const std::string& label,
                                   const char* who);

 private:
  struct Entry {
    Status status;
    std::optional<LineageEnd> end;
  };
  storage::CheckpointStore& store_;
  std::map<std::pair<std::string, std::string>, Entry> read_;
};

}  // namespace cedana::image
