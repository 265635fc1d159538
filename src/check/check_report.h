// CheckReport: what `cedana check` found on a node, one finding per thing a checkpoint or a
// restore depends on, each with what to do about it. A finding that fails means a checkpoint or
// a restore cannot work here; a warning means some jobs or features will not (TCP connections,
// the controller's policies); skipped means it could not be looked at from here (not root, no
// SLURM on this node).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cedana::check {

enum class Verdict { kOk, kWarn, kFail, kSkipped };
// "ok", "warn", "FAIL", "skip": as the report prints them.
const char* VerdictName(Verdict verdict);

struct Finding {
  std::string name;  // "criu", "checkpoint dir", "slurm plugins"
  Verdict verdict = Verdict::kOk;
  std::string detail;  // what was found: "4.1.1 at /usr/local/bin/criu"
  std::string fix;     // what to do; "" when nothing is to be done
};

struct CheckReport {
  std::vector<Finding> findings;
  // No finding failed: a checkpoint and a restore can work on this node.
  bool CanCheckpoint() const;
  int Count(Verdict verdict) const;
};

// The report as the terminal shows it: a line per finding, its fix below it, and the summary.
std::string RenderText(const CheckReport& report);
// {"can_checkpoint": bool, "findings": [{"name", "verdict", "detail", "fix"}]}; verdicts in
// lower case.
nlohmann::json ToJson(const CheckReport& report);

}  // namespace cedana::check
