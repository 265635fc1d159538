// The srun relay's contract between the node daemon (daemon/srun_steps.h), which puts the relay
// in a batch script's PATH and runs the real srun for it, and the relay and task proxies in
// cedana-slurm (job_proxy/steps.h): the variables they pass, and where the waiter a relay
// becomes keeps its descriptors.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace cedana {

// The relay's directory, set in the batch script's environment beside PATH, so that the daemon
// and a relay that falls back to the real srun can take it out of PATH again.
inline constexpr std::string_view kSrunRelayVar = "CEDANA_SRUN_RELAY";
// The step a task belongs to, in the environment of the tasks of an srun the daemon started.
inline constexpr std::string_view kStepVar = "CEDANA_STEP";
// A step over several nodes: its tasks on the nodes without the batch script run as workloads of
// their own (daemon/step_parts.h), labelled "<job label>.<step>.r<rank>". When the step resumes
// from a checkpoint, its new srun's tasks find their parts here: "<rank>=<label>/<checkpoint id>"
// for each, separated by ';'.
inline constexpr std::string_view kStepPartsVar = "CEDANA_STEP_PARTS";

// The label of the part of step `step` (its lineage: its first run's name) for task `rank`.
inline std::string StepPartLabel(std::string_view job_label, std::string_view step, int rank) {
  return std::string(job_label) + "." + std::string(step) + ".r" + std::to_string(rank);
}
// Whether `label` is a part of step `step`.
inline bool IsPartOfStep(std::string_view label, std::string_view step) {
  return label.find("." + std::string(step) + ".r") != std::string_view::npos;
}
// The rank a part's label names (a restored workload has no environment to read SLURM_PROCID
// from; its label stays).
inline int RankOfStepPart(std::string_view label) {
  const size_t r = label.rfind(".r");
  return r == std::string_view::npos ? 0 : std::atoi(std::string(label.substr(r + 2)).c_str());
}
// One entry of kStepPartsVar's value, and the "<label>/<checkpoint id>" of rank `rank` in it
// ("" when it names none).
inline std::string StepPartsEntry(int rank, std::string_view label, std::string_view id) {
  return std::to_string(rank) + "=" + std::string(label) + "/" + std::string(id);
}
inline std::string StepPartOfRank(std::string_view parts, int rank) {
  const std::string key = std::to_string(rank) + "=";
  while (!parts.empty()) {
    const size_t end = parts.find(';');
    std::string_view entry = parts.substr(0, end);
    if (entry.starts_with(key)) return std::string(entry.substr(key.size()));
    parts = end == std::string_view::npos ? "" : parts.substr(end + 1);
  }
  return "";
}

// The waiter reads srun's exit status from its stdin, with no redirection a shell would move
// descriptors for (a shell keeps a descriptor it redirects at 10 while the command runs); the
// relay's own stdin is kept at 4, and its stdout and stderr stay 1 and 2. A restore gives
// them to the step's new srun.
inline constexpr int kWaiterStatusFd = 0;
inline constexpr int kWaiterStdinFd = 4;
// What the waiter runs (`/bin/sh -c SCRIPT srun`): it exits with the status line srun's shell
// writes, or says that the status was lost. The daemon knows a waiter in a tree by it.
inline constexpr std::string_view kWaiterScript =
    "IFS= read -r s && exit \"$s\"; "
    "echo \"srun: cedana: the step's exit status was lost (its node daemon stopped?)\" >&2; exit 1";

// `path_list` (colon-separated) without the entries equal to `entry`.
inline std::string PathWithout(std::string_view path_list, std::string_view entry) {
  std::string out;
  for (size_t b = 0; b <= path_list.size();) {
    size_t e = std::min(path_list.find(':', b), path_list.size());
    if (std::string_view part = path_list.substr(b, e - b); part != entry) {
      if (!out.empty()) out += ':';
      out += part;
    }
    b = e + 1;
  }
  return out;
}

}  // namespace cedana
