#include "controller/maintenance/maintenance_runner.h"

#include <chrono>
#include <map>

#include <fmt/format.h>

#include "common/log.h"
#include "controller/maintenance/maintenance_planner.h"
#include "controller/watch/slurm_reservations.h"

namespace cedana::controller {
namespace {

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Moves one job: a requeue (its proxy checkpoints on SLURM's SIGTERM), or a leave-running
// checkpoint when the cluster cannot requeue.
MoveRecord Move(Catalog& catalog, const PlannedMove& m, bool requeue_enabled) {
  MoveRecord rec{0, m.window, m.job.job_id, m.job.user, "", "", 0};
  if (requeue_enabled) {
    Status s = RequeueSlurmJob(m.job.job_id);
    rec.action = s.ok() ? "requeued" : "failed";
    rec.detail = s.ok()
                     ? fmt::format("requeued off {}; it checkpoints as SLURM ends it", m.job.node)
                     : s.message();
    return rec;
  }
  OperationRecord op;
  op.kind = OperationKind::kDump;
  op.job_id = m.job.job_id;
  op.node = m.job.agent_node;
  op.owner = m.job.user;
  op.reason = "maintenance";
  Result<OperationRecord> created = catalog.operations().Create(op);
  rec.action = created.has_value() ? "checkpointed" : "failed";
  rec.detail =
      created.has_value()
          ? fmt::format("checkpoint queued on {} (operation {}); not requeued: JobRequeue=0",
                        m.job.agent_node, created->id)
          : created.error().message();
  return rec;
}

}  // namespace

Status RunMaintenanceStep(const ControllerConfig& config, Catalog& catalog) {
  MaintenanceInputs in;
  CEDANA_ASSIGN_OR_RETURN(in.reservations, LoadSlurmReservations());
  bool any_maint = false;
  for (const auto& r : in.reservations) any_maint = any_maint || r.maint;
  CEDANA_ASSIGN_OR_RETURN(in.known, catalog.maintenance().ListWindows());
  std::map<std::string, const WindowRecord*> before;
  bool any_open = false;
  for (const WindowRecord& k : in.known) {
    before[k.name] = &k;
    any_open = any_open || k.status == "scheduled" || k.status == "active";
  }
  // Past windows only need their status closed; jobs, moves and JobRequeue matter only while
  // SLURM reports a MAINT reservation (this runs every 5 s).
  if (!any_maint && !any_open) return OkStatus();
  if (any_maint) {
    CEDANA_ASSIGN_OR_RETURN(in.requeue_enabled, SlurmJobRequeueEnabled());
    CEDANA_ASSIGN_OR_RETURN(in.jobs, catalog.jobs().List(std::nullopt));
    CEDANA_ASSIGN_OR_RETURN(in.moves, catalog.maintenance().ListMoves(std::nullopt));
  }
  in.now = NowSeconds();
  in.lead_seconds = config.maintenance_lead_seconds;

  MaintenancePlan plan = PlanMaintenance(in, HostListsOverlap);
  for (const WindowRecord& w : plan.windows) {
    auto it = before.find(w.name);
    const WindowRecord* was = it == before.end() ? nullptr : it->second;
    CEDANA_RETURN_IF_ERROR(catalog.maintenance().UpsertWindow(w));
    if (!was || was->status != w.status)
      log::Info("maintenance: window {} on {} is {}", w.name, w.nodes, w.status);
    if (!w.warnings.empty() && (!was || was->warnings != w.warnings))
      log::Warn("maintenance: {}", w.warnings);
  }
  for (const PlannedMove& m : plan.moves) {
    MoveRecord rec = Move(catalog, m, in.requeue_enabled);
    if (rec.action == "failed")
      log::Warn("maintenance: window {}: job {} of {} could not be moved: {}", m.window,
                m.job.job_id, m.job.user, rec.detail);
    else
      log::Info("maintenance: window {}: job {} of {} {}", m.window, m.job.job_id, m.job.user,
                rec.detail);
    CEDANA_RETURN_IF_ERROR(catalog.maintenance().AddMove(rec));
  }
  return OkStatus();
}

}  // namespace cedana::controller
