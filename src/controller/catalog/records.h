// The catalog's records: what each of its tables (controller/catalog/*_table.h) stores and
// returns, and the paging and filters of their listings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/named_values.h"
#include "common/phase_durations.h"

namespace cedana::controller {

int64_t NowMs();

struct TokenRecord {
  int64_t id = 0;
  std::string user;
  bool admin = false;
  int64_t created_ms = 0;
};

struct NodeRecord {
  std::string name;
  std::string version;
  int64_t last_seen_ms = 0;
};

struct JobRecord {
  int64_t job_id = 0;
  std::string name, user, partition, node, state;
  int64_t start_time = 0;
  // From the node daemon that manages the job's workload (CEDANA_ENABLE=1 jobs).
  bool enabled = false;
  std::string label;
  std::string agent_node;
  // What its owner should know, from the node daemon: its last checkpoint failed or was
  // refused, or it started fresh although its label had checkpoints. "" when nothing.
  std::string notice;
  int64_t notice_at_ms = 0;
};

// A node daemon's report of one managed SLURM job.
struct ManagedJob {
  int64_t job_id = 0;
  std::string label, user, status;
  std::string notice;  // "" = none (JobRecord::notice)
  int64_t notice_at_ms = 0;
};

// One event of a job's life (controller/timeline/job_events.h names the kinds).
struct JobEvent {
  int64_t job_id = 0;
  std::string kind;
  int64_t run = 0;  // the job's restart count during the run the event belongs to
  int64_t at_ms = 0;
  // started: "resumed" (checkpoint_id says from which) or "fresh", "" when no node daemon said;
  // ended: the job's final state (COMPLETED, CANCELLED, ...); checkpoint: its reason.
  std::string detail;
  std::string checkpoint_id;
  // checkpoint only
  int64_t size = 0, duration_ms = 0, frozen_ms = 0;
};

struct CheckpointRecord {
  std::string id, owner, label;
  std::optional<int64_t> job_id;
  std::string node;
  int64_t created_ms = 0;
  int64_t size = 0;
  int64_t image_size = 0;
  std::string codec;
  int64_t streams = 1;
  std::string state;  // "good": the indexer keeps only manifests whose MAC verifies
  std::string location;
  std::optional<int64_t> policy_id;
  std::string manifest;      // the manifest JSON
  std::string run = "open";  // "finished": its run ended by itself (image/lineage.h)
  // From the manifest: why it was taken ("" before reasons), the job's restarts then, how long
  // the job was stopped for it and how long it took from the request to its commit.
  std::string reason;
  int64_t restart_count = 0, frozen_ms = 0, duration_ms = 0;
};

struct CheckpointFilter {
  std::optional<std::string> owner, label;
  std::optional<int64_t> job_id;
};

struct JobFilter {
  std::optional<std::string> user, state;
  std::optional<bool> enabled;  // managed by a node daemon
};

// One page of a listing, by keyset: `after` is the `next` of the page before ("" = the first),
// so a page costs the same however deep it is and rows added meanwhile do not shift it.
struct PageRequest {
  int limit = 0;  // 0 = every row
  std::string after;
};
template <typename T>
struct Paged {
  std::vector<T> items;
  std::string next;  // "" when this is the last page
};

// What ends a page's query: one row more than the page, which tells that another follows.
inline std::string PageLimitSql(const PageRequest& page) {
  return page.limit > 0 ? " LIMIT " + std::to_string(page.limit + 1) : "";
}
// The page of `items`, read with PageLimitSql: the row past the limit goes, and `next` is the
// cursor of the last row kept.
template <typename T, typename CursorOf>
Paged<T> PageOf(std::vector<T> items, const PageRequest& page, CursorOf cursor_of) {
  Paged<T> out{std::move(items), ""};
  if (page.limit > 0 && out.items.size() > static_cast<size_t>(page.limit)) {
    out.items.pop_back();
    out.next = cursor_of(out.items.back());
  }
  return out;
}

struct PolicySelector {
  std::optional<int64_t> job_id;
  std::string name_pattern, user, partition, label;  // "" = any
};

struct PolicyRecord {
  int64_t id = 0;
  std::string name;
  int64_t interval_seconds = 0;
  bool enabled = true;
  PolicySelector selector;
  std::optional<int64_t> max_checkpoints;
  std::string owner;
  // Created with an admin token: selects every user's jobs. A user's policy selects only the
  // owner's jobs, whatever the user is called.
  bool owner_is_admin = false;
  int64_t created_ms = 0;
  std::optional<int64_t> last_run_ms;
};

// What the controller asks a node daemon for, and how far it got. Words in the database, the
// API and the agent's reports; enums inside.
enum class OperationKind { kDump, kRestore };
inline constexpr NamedValue<OperationKind> kOperationKindNames[] = {
    {"dump", OperationKind::kDump}, {"restore", OperationKind::kRestore}};
enum class OperationState { kQueued, kRunning, kDone, kFailed };
inline constexpr NamedValue<OperationState> kOperationStateNames[] = {
    {"queued", OperationState::kQueued},
    {"running", OperationState::kRunning},
    {"done", OperationState::kDone},
    {"failed", OperationState::kFailed}};
inline bool IsFinal(OperationState s) {
  return s == OperationState::kDone || s == OperationState::kFailed;
}

struct OperationRecord {
  int64_t id = 0;
  OperationKind kind = OperationKind::kDump;
  std::optional<int64_t> job_id;
  std::optional<std::string> checkpoint_id;
  std::string node;
  std::optional<int64_t> policy_id;
  std::string owner;
  OperationState state = OperationState::kQueued;
  std::string phase;
  int64_t done_bytes = 0, total_bytes = 0;
  std::optional<std::string> error;
  int64_t created_ms = 0;
  std::optional<int64_t> finished_ms;
  std::string reason = "manual";  // dump: recorded with its checkpoint (common/checkpoint_reason.h)
  // done: how long each phase of its dump or restore took on the node, in order (ms).
  PhaseDurations phases_ms;
};

// A MAINT reservation as the controller tracks it (controller/maintenance/).
struct WindowRecord {
  std::string name, nodes;
  int64_t start_time = 0, end_time = 0;  // seconds since the epoch
  int64_t max_start_delay = 0;           // seconds, 0 when unset
  std::string status;                    // scheduled | active | completed | cancelled
  std::string warnings;                  // what the administrator should change, one per line
  bool operator==(const WindowRecord&) const = default;
};

// What a maintenance window did to one job.
struct MoveRecord {
  int64_t id = 0;
  std::string window;
  int64_t job_id = 0;
  std::string user;
  std::string action;  // requeued | checkpointed | failed
  std::string detail;
  int64_t at_ms = 0;
};

// What /metrics reports, read from the catalog in one go (catalog_figures.cc).
struct CatalogFigures {
  struct Checkpoint {
    std::string reason;  // "" for checkpoints older than reasons
    int64_t size = 0, duration_ms = 0, frozen_ms = 0;
  };
  std::vector<Checkpoint> checkpoints;  // every indexed checkpoint
  struct Operations {
    std::string kind, state, reason;
    int64_t count = 0;
  };
  std::vector<Operations> operations;  // counts by kind, state and reason
  struct FinishedOperation {
    std::string kind, state;
    int64_t duration_ms = 0;  // created to finished
  };
  std::vector<FinishedOperation> finished;
  std::vector<std::pair<std::string, int64_t>> managed_jobs;  // by status
  int64_t nodes = 0;
  int64_t nodes_recent = 0;  // seen since the `recent_since_ms` asked for
};

}  // namespace cedana::controller
