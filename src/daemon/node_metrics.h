// NodeMetrics: what this node daemon did since it started, for the Prometheus scrape on its
// local metrics port (daemon.metrics_port, metrics_server.h): dumps and restores by result and
// reason (a restore's is the reason of the checkpoint it resumed, "unknown" when none did), the
// duration of each of their phases as histograms, the bytes dumps stored, and refusals by cause. A
// refusal is an operation turned down before it touched the workload (its error code says the
// request or the state was wrong: the tree holds a TCP connection, the caller is not its owner,
// ...); a failure is one that went wrong on the way. The counts live in memory: a restarted daemon
// starts from zero, as Prometheus expects of counters. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/phase_durations.h"
#include "common/prometheus_text.h"
#include "common/status.h"

namespace cedana::daemon {

// "ok", "refused" or "failed" for an operation's result (see above).
std::string ResultOf(const Status& status);
// The cause label of a refusal: its code's name, "failed_precondition".
std::string CauseOf(const Status& status);

class NodeMetrics {
 public:
  void RecordDump(const std::string& reason, const Status& result, const PhaseDurations& phases,
                  uint64_t stored_bytes);
  void RecordRestore(const std::string& reason, const Status& result, const PhaseDurations& phases);
  // The text format Prometheus scrapes.
  std::string Text() const;

 private:
  void Record(const std::string& operation, const Status& result, const PhaseDurations& phases);

  using Counts = std::map<std::pair<std::string, std::string>, uint64_t>;  // by two labels

  mutable std::mutex mu_;
  Counts dumps_;                                                           // (result, reason)
  Counts restores_;                                                        // (result, reason)
  Counts refusals_;                                                        // (operation, cause)
  std::map<std::pair<std::string, std::string>, HistogramCounts> phases_;  // (operation, phase)
  uint64_t stored_bytes_ = 0;
};

}  // namespace cedana::daemon
