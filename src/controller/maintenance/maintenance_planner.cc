#include "controller/maintenance/maintenance_planner.h"

#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace cedana::controller {
namespace {

std::string StatusAt(const SlurmReservation& r, int64_t now) {
  if (now < r.start_time) return "scheduled";
  if (now < r.end_time) return "active";
  return "completed";
}

std::string WarningsFor(const SlurmReservation& r, bool requeue_enabled) {
  std::string w;
  if (r.max_start_delay <= 0)
    w += fmt::format(
        "reservation {} has no MaxStartDelay: jobs get no extra time to checkpoint before the "
        "window; set one (scontrol update ReservationName={} MaxStartDelay=5)\n",
        r.name, r.name);
  if (!requeue_enabled)
    w += "slurm.conf has JobRequeue=0: enabled jobs on the window's nodes are only checkpointed, "
         "not requeued, and run into the window; set JobRequeue=1 and run `scontrol reconfigure`\n";
  if (!w.empty()) w.pop_back();
  return w;
}

}  // namespace

MaintenancePlan PlanMaintenance(const MaintenanceInputs& in, const HostOverlap& overlap) {
  MaintenancePlan plan;
  std::map<std::string, const WindowRecord*> known;
  for (const auto& w : in.known) known[w.name] = &w;
  std::set<std::pair<std::string, int64_t>> moved;
  for (const auto& m : in.moves) moved.insert({m.window, m.job_id});

  std::set<std::string> reported;
  for (const SlurmReservation& r : in.reservations) {
    if (!r.maint) continue;
    reported.insert(r.name);
    WindowRecord w{r.name,
                   r.nodes,
                   r.start_time,
                   r.end_time,
                   r.max_start_delay,
                   StatusAt(r, in.now),
                   WarningsFor(r, in.requeue_enabled)};
    auto k = known.find(r.name);
    if (k == known.end() || !(*k->second == w)) plan.windows.push_back(w);

    // Jobs move from lead_seconds before the start until the end (a controller that was down
    // at the start still moves what it finds running there).
    if (in.now < r.start_time - in.lead_seconds || in.now >= r.end_time) continue;
    for (const JobRecord& j : in.jobs) {
      if (j.state != "RUNNING" || !j.enabled || j.agent_node.empty()) continue;
      if (moved.count({r.name, j.job_id}) || !overlap(j.node, r.nodes)) continue;
      plan.moves.push_back({r.name, j});
    }
  }
  // A window SLURM no longer reports ended, or was deleted before its end.
  for (const WindowRecord& w : in.known) {
    if (reported.count(w.name) || (w.status != "scheduled" && w.status != "active")) continue;
    WindowRecord gone = w;
    gone.status = in.now >= w.end_time ? "completed" : "cancelled";
    plan.windows.push_back(gone);
  }
  return plan;
}

}  // namespace cedana::controller
