#include "controller/controller.h"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/label.h"
#include "common/log.h"
#include "common/version.h"
#include "controller/catalog/catalog.h"
#include "controller/http/api_server.h"
#include "controller/maintenance/maintenance_runner.h"
#include "controller/policy/checkpoint_deletion.h"
#include "controller/policy/scheduler.h"
#include "controller/timeline/job_events.h"
#include "controller/watch/checkpoint_indexer.h"
#include "controller/watch/slurm_jobs.h"
#include "image/manifest.h"

namespace cedana::controller {
namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

// Operations whose node had been silent this long are failed (and so not waited for forever).
constexpr int64_t kStaleOperationMs = 30LL * 60 * 1000;

Result<std::unique_ptr<Catalog>> OpenCatalog(const Config& config) {
  CEDANA_ASSIGN_OR_RETURN(auto db, OpenDatabase(config.controller.db_url));
  CEDANA_RETURN_IF_ERROR(Migrate(*db));
  return std::make_unique<Catalog>(std::move(db));
}

// What the watcher thread does; finished operations arrive from API threads.
class Watcher {
 public:
  Watcher(const Config& config, Catalog& catalog, std::string key)
      : config_(config), catalog_(catalog), indexer_(config, catalog, std::move(key)) {}

  void OperationFinished(const OperationRecord& op) {
    std::lock_guard<std::mutex> lock(mu_);
    finished_.push_back(op);
    cv_.notify_one();
  }
  void Poke() {
    std::lock_guard<std::mutex> lock(mu_);
    poked_ = true;
    cv_.notify_one();
  }

  void Run() {
    auto last_jobs = std::chrono::steady_clock::time_point{};
    auto last_index = last_jobs, last_maintenance = last_jobs;
    while (!g_stop) {
      auto now = std::chrono::steady_clock::now();
      if (now - last_jobs >= kJobsEvery) {
        Timed("jobs", kJobsEvery, [this] { SyncJobs(); });
        last_jobs = now;
      }
      if (now - last_maintenance >= std::chrono::seconds(5)) {
        Report("maintenance", RunMaintenanceStep(config_.controller, catalog_));
        last_maintenance = now;
      }
      std::deque<OperationRecord> finished;
      bool poked;
      {
        std::lock_guard<std::mutex> lock(mu_);
        finished.swap(finished_);
        poked = poked_;
        poked_ = false;
      }
      if (poked || !finished.empty() || now - last_index >= kIndexEvery) {
        Timed("index", kIndexEvery, [this] { Report("index", indexer_.Refresh()); });
        last_index = now;
      }
      for (const auto& op : finished) AfterOperation(op);
      Result<int> queued = SchedulePolicies(catalog_, NowMs());
      Report("policy", queued.error());
      Report("operations", catalog_.operations().FailStale(kStaleOperationMs));
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(1),
                   [this] { return poked_ || !finished_.empty() || g_stop; });
    }
  }

 private:
  // Only what changed is written; the whole table again every few minutes, which also sets
  // right what anything else changed in it.
  void SyncJobs() {
    Result<std::optional<SlurmJobs>> loaded = jobs_reader_.Load();
    if (!loaded.has_value()) return Report("slurm", loaded.error());
    if (!loaded->has_value()) return Report("slurm", OkStatus());  // no job changed
    const SlurmJobs& slurm = **loaded;
    const auto now = std::chrono::steady_clock::now();
    const bool full = synced_jobs_.empty() || now - last_full_job_sync_ >= kFullSyncEvery;
    Status synced;
    if (full) {
      synced = catalog_.jobs().Sync(slurm.jobs);
    } else {
      JobChanges changes = DiffJobs(synced_jobs_, slurm.jobs);
      synced = catalog_.jobs().Update(changes.changed, changes.removed);
    }
    std::vector<JobEvent> fresh = recorded_events_.New(slurm.events);
    if (synced.ok()) synced = catalog_.job_events().Record(fresh);
    if (synced.ok()) {
      std::vector<int64_t> ids;
      synced_jobs_.clear();
      for (const JobRecord& j : slurm.jobs) {
        ids.push_back(j.job_id);
        synced_jobs_[j.job_id] = j;
      }
      recorded_events_.Mark(fresh, ids);
      if (full) last_full_job_sync_ = now;
    } else {
      jobs_reader_.Forget();  // the next look reads every job again, changed or not
    }
    Report("slurm", synced);
  }

  // A policy's dump is done: tag the checkpoint with its policy and apply the policy's limit.
  void AfterOperation(const OperationRecord& op) {
    if (op.state != OperationState::kDone || !op.checkpoint_id || !op.policy_id) return;
    Report("index", catalog_.checkpoints().SetPolicy(*op.checkpoint_id, *op.policy_id));
    Result<PolicyRecord> policy = catalog_.policies().Get(*op.policy_id);
    Result<CheckpointRecord> made = catalog_.checkpoints().Get(*op.checkpoint_id);
    if (!policy.has_value() || !made.has_value()) return;
    Report("retention",
           ApplyPolicyRetention(config_.checkpoint_dir, config_.s3, catalog_, *policy, *made));
  }

  // Runs one watcher's pass; its time goes to the debug log, and a pass longer than its interval
  // (the watcher falls behind) to the warning log, at most every 10 minutes per watcher.
  template <typename Pass>
  void Timed(const char* what, std::chrono::seconds every, Pass pass) {
    const auto start = std::chrono::steady_clock::now();
    pass();
    const auto end = std::chrono::steady_clock::now();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(end - start).count();
    log::Debug("watch: {} took {} ms", what, ms);
    auto& warned = slow_warned_[what];
    if (end - start > every && (warned == std::chrono::steady_clock::time_point{} ||
                                end - warned > std::chrono::minutes(10))) {
      log::Warn("watch: a {} pass took {} ms, longer than its {} s interval", what, ms,
                every.count());
      warned = end;
    }
  }

  // Logs a failure once, and its recovery once, per source: a down slurmctld is not a log flood.
  void Report(const std::string& source, const Status& s) {
    bool was_failing = failing_.count(source) > 0;
    if (!s.ok() && !was_failing) {
      log::Warn("{}: {}", source, s.ToString());
      failing_.insert(source);
    } else if (s.ok() && was_failing) {
      log::Info("{}: working again", source);
      failing_.erase(source);
    }
  }

  const Config& config_;
  Catalog& catalog_;
  CheckpointIndexer indexer_;
  static constexpr auto kJobsEvery = std::chrono::seconds(2);
  static constexpr auto kIndexEvery = std::chrono::seconds(5);
  static constexpr auto kFullSyncEvery = std::chrono::minutes(5);
  std::map<std::string, std::chrono::steady_clock::time_point> slow_warned_;
  RecordedEvents recorded_events_;  // the job watcher's (SyncJobs)
  SlurmJobsReader jobs_reader_;
  std::map<int64_t, JobRecord> synced_jobs_;  // what the catalog's job table holds
  std::chrono::steady_clock::time_point last_full_job_sync_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<OperationRecord> finished_;
  bool poked_ = false;
  std::set<std::string> failing_;
};

}  // namespace

int RunController(const Config& config) {
  log::Info("controller: cedana-slurm {} starting (database {}, checkpoints {})", kVersion,
            config.controller.db_url.rfind("sqlite", 0) == 0 ? config.controller.db_url
                                                             : std::string("postgres"),
            config.checkpoint_dir);
  if (config.auth_token.empty())
    log::Warn(
        "controller: no admin token (CEDANA_AUTH_TOKEN): only user tokens from `cedana-slurm token "
        "create` work");
  Result<std::unique_ptr<Catalog>> catalog = OpenCatalog(config);
  if (!catalog.has_value()) {
    log::Error("controller: {}", catalog.error().ToString());
    return 1;
  }
  std::string key;
  if (Result<std::string> k = image::ReadClusterKey(config.cluster_key_file); k.has_value())
    key = *k;
  else
    log::Warn(
        "controller: cluster key {} not readable: no checkpoint is indexed (only manifests it "
        "verifies are)",
        config.cluster_key_file);

  Watcher watcher(config, **catalog, key);
  ApiServices services;
  services.refresh_checkpoints = [&watcher] { watcher.Poke(); };
  services.operation_finished = [&watcher](const OperationRecord& op) {
    watcher.OperationFinished(op);
  };
  ApiServer api(config, **catalog, services);
  if (Status s = api.Start(); !s.ok()) {
    log::Error("controller: {}", s.ToString());
    return 1;
  }
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::thread watch([&watcher] {
    try {
      watcher.Run();
    } catch (const std::exception& e) {
      log::Error("controller: watcher stopped: internal error: {}", e.what());
      g_stop = true;
    }
  });
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  watcher.Poke();
  watch.join();
  api.Stop();
  log::Info("controller: stopped");
  return 0;
}

int CreateTokenCommand(const Config& config, const std::string& user, bool admin) {
  Result<std::unique_ptr<Catalog>> catalog = OpenCatalog(config);
  if (!catalog.has_value()) {
    std::fprintf(stderr, "cedana-slurm: error: %s\n", catalog.error().ToString().c_str());
    return 1;
  }
  if (Status s = ValidateLabel(user); !s.ok()) {
    std::fprintf(stderr, "cedana-slurm: error: user: %s\n", s.message().c_str());
    return 2;
  }
  Result<std::pair<int64_t, std::string>> t = (*catalog)->tokens().Create(user, admin);
  if (!t.has_value()) {
    std::fprintf(stderr, "cedana-slurm: error: %s\n", t.error().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", t->second.c_str());
  std::fprintf(stderr, "token %lld for %s%s (shown once; stored hashed)\n",
               static_cast<long long>(t->first), user.c_str(), admin ? " (admin)" : "");
  return 0;
}

}  // namespace cedana::controller
