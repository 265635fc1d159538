// Catalog: what the controller knows, in its database: API tokens (hashed), node daemons, SLURM
// jobs (from libslurm, plus which of them a node daemon manages), the checkpoint index (a cache
// of the checkpoint storage, which stays the source of truth), policies and operations (dumps
// and restores the controller asked node daemons for). Typed queries over Database; the same
// SQL runs on SQLite and PostgreSQL. Thread-safe (Database is).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/phase_durations.h"
#include "common/result.h"
#include "controller/catalog/database.h"

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

struct OperationRecord {
  int64_t id = 0;
  std::string kind;  // dump | restore
  std::optional<int64_t> job_id;
  std::optional<std::string> checkpoint_id;
  std::string node;
  std::optional<int64_t> policy_id;
  std::string owner;
  std::string state;  // queued | running | done | failed
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

class Catalog {
 public:
  // Takes a migrated database.
  explicit Catalog(std::unique_ptr<Database> db);
  Database& db() { return *db_; }

  // Tokens. CreateToken returns the id and the token text, which is stored only hashed.
  Result<std::pair<int64_t, std::string>> CreateToken(const std::string& user, bool admin);
  // kNotFound for an unknown token.
  Result<TokenRecord> FindToken(const std::string& token);
  Result<std::vector<TokenRecord>> ListTokens();
  Status DeleteToken(int64_t id);  // kNotFound

  Status TouchNode(const std::string& name, const std::string& version);
  Result<std::vector<NodeRecord>> ListNodes();

  // Replaces the job table with what libslurm reported now (one transaction).
  Status SyncJobs(const std::vector<JobRecord>& jobs);
  // Writes only what changed since the last look (watch/slurm_jobs.h, DiffJobs): new or changed
  // jobs, and the ids of jobs slurmctld forgot (with their notices and events). One transaction.
  Status UpdateJobs(const std::vector<JobRecord>& changed, const std::vector<int64_t>& removed);
  // Replaces what node `agent_node` manages.
  Status SyncManagedJobs(const std::string& agent_node, const std::vector<ManagedJob>& jobs);
  Result<std::vector<JobRecord>> ListJobs(const std::optional<std::string>& user);
  // Newest job first. kInvalidArgument for an `after` that is not a job id.
  Result<Paged<JobRecord>> ListJobsPage(const JobFilter& filter, const PageRequest& page);
  Result<JobRecord> GetJob(int64_t job_id);  // kNotFound

  // Replaces the index with the checkpoints found in storage (keeps policy_id of known ones).
  // One transaction.
  Status SyncCheckpoints(const std::vector<CheckpointRecord>& found);
  // Writes only what changed since the last refresh: new or changed checkpoints, and the ids
  // of vanished ones. One transaction.
  Status UpdateCheckpoints(const std::vector<CheckpointRecord>& changed,
                           const std::vector<std::string>& removed);
  Status UpsertCheckpoint(const CheckpointRecord& c);
  Result<std::vector<CheckpointRecord>> ListCheckpoints(const CheckpointFilter& filter);
  // Newest first. kInvalidArgument for an `after` that no page gave.
  Result<Paged<CheckpointRecord>> ListCheckpointsPage(const CheckpointFilter& filter,
                                                      const PageRequest& page);
  Result<CheckpointRecord> GetCheckpoint(const std::string& id);  // kNotFound
  Status DeleteCheckpoint(const std::string& id);
  Status SetCheckpointPolicy(const std::string& id, int64_t policy_id);

  Result<PolicyRecord> CreatePolicy(const PolicyRecord& p);  // kAlreadyExists for a taken name
  Status UpdatePolicy(const PolicyRecord& p);                // kNotFound, kAlreadyExists
  Status DeletePolicy(int64_t id);                           // kNotFound
  Result<PolicyRecord> GetPolicy(int64_t id);                // kNotFound
  Result<std::vector<PolicyRecord>> ListPolicies(const std::optional<std::string>& owner);
  Status SetPolicyLastRun(int64_t id, int64_t ms);

  Result<OperationRecord> CreateOperation(const OperationRecord& op);
  // Marks node's queued operations running and returns them.
  Result<std::vector<OperationRecord>> ClaimOperations(const std::string& node);
  Status UpdateOperation(const OperationRecord& op);
  Result<OperationRecord> GetOperation(int64_t id);  // kNotFound
  Result<std::vector<OperationRecord>> ListOperations(const std::optional<std::string>& owner,
                                                      const std::optional<std::string>& state,
                                                      int limit);
  // The newest operation of kind dump for this job, optionally only from one policy.
  Result<std::optional<OperationRecord>> LastDump(int64_t job_id, std::optional<int64_t> policy_id);
  // Operations queued or running for longer than `stale_ms` become failed (their node is gone).
  Status FailStaleOperations(int64_t stale_ms);

  // Maintenance windows (catalog_maintenance.cc).
  Status UpsertWindow(const WindowRecord& w);
  Result<std::vector<WindowRecord>> ListWindows();  // newest start first
  Status AddMove(const MoveRecord& m);
  // Every move, or only those of one user's jobs.
  Result<std::vector<MoveRecord>> ListMoves(const std::optional<std::string>& user);

  // A job's events (catalog_job_events.cc), each kept once per (job, kind, run): the first
  // report of it stays, except that a node daemon's word on a start adds which checkpoint it
  // resumed from. They go with the job, as its notice does.
  Status RecordJobEvents(const std::vector<JobEvent>& events);
  Status RecordRunStarts(const std::vector<JobEvent>& starts);
  Result<std::vector<JobEvent>> ListJobEvents(int64_t job_id);  // oldest first

  // The figures of /metrics (catalog_figures.cc); nodes seen at or after `recent_since_ms` count
  // as recent.
  Result<CatalogFigures> Figures(int64_t recent_since_ms);

 private:
  // A strictly increasing millisecond stamp: a sync deletes the rows older than its stamp, so
  // two syncs within one millisecond must still get different stamps.
  int64_t NextStamp();
  Status UpsertJob(const JobRecord& j, int64_t stamp);

  std::unique_ptr<Database> db_;
  std::atomic<int64_t> last_stamp_{0};
};

std::string SelectorToJson(const PolicySelector& s);
Result<PolicySelector> SelectorFromJson(const std::string& json);

}  // namespace cedana::controller
