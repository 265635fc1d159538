#include "controller/watch/slurm_reservations.h"

#include <cerrno>

#include <cstdlib>

#include <fmt/format.h>

#include "slurm/libslurm.h"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace cedana::controller {
namespace {

std::string LastSlurmError() { return slurm_strerror(errno); }

}  // namespace

Result<std::vector<SlurmReservation>> LoadSlurmReservations() {
  CEDANA_RETURN_IF_ERROR(slurm::InitLibslurm());
  reserve_info_msg_t* msg = nullptr;
  if (slurm_load_reservations(0, &msg) != SLURM_SUCCESS || msg == nullptr)
    return UnavailableError("loading reservations from slurmctld: " + LastSlurmError());
  std::vector<SlurmReservation> out;
  for (uint32_t i = 0; i < msg->record_count; ++i) {
    const reserve_info_t& r = msg->reservation_array[i];
    SlurmReservation s;
    s.name = r.name ? r.name : "";
    s.nodes = r.node_list ? r.node_list : "";
    s.start_time = static_cast<int64_t>(r.start_time);
    s.end_time = static_cast<int64_t>(r.end_time);
    s.max_start_delay =
        r.max_start_delay == NO_VAL || r.max_start_delay == INFINITE ? 0 : r.max_start_delay;
    s.maint = (r.flags & RESERVE_FLAG_MAINT) != 0;
    out.push_back(std::move(s));
  }
  slurm_free_reservation_info_msg(msg);
  return out;
}

Result<bool> SlurmJobRequeueEnabled() {
  CEDANA_RETURN_IF_ERROR(slurm::InitLibslurm());
  slurm_conf_t* conf = nullptr;
  if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || conf == nullptr)
    return UnavailableError("loading the configuration from slurmctld: " + LastSlurmError());
  bool enabled = conf->job_requeue != 0;
  slurm_free_ctl_conf(conf);
  return enabled;
}

Status RequeueSlurmJob(int64_t job_id) {
  CEDANA_RETURN_IF_ERROR(slurm::InitLibslurm());
  if (slurm_requeue(static_cast<uint32_t>(job_id), 0) != SLURM_SUCCESS)
    return UnavailableError(fmt::format("requeueing job {}: {}", job_id, LastSlurmError()));
  return OkStatus();
}

// hostlist_t names the struct in SLURM 24.11 (from 23.11 on), the pointer in 22.05.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
using HostList = hostlist_t*;
#else
using HostList = hostlist_t;
#endif

bool HostListsOverlap(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  if (a == "ALL" || b == "ALL") return true;
  HostList in_b = slurm_hostlist_create(b.c_str());
  HostList in_a = slurm_hostlist_create(a.c_str());
  bool overlap = false;
  if (in_a && in_b) {
    while (char* host = slurm_hostlist_shift(in_a)) {
      overlap = overlap || slurm_hostlist_find(in_b, host) >= 0;
      std::free(host);
      if (overlap) break;
    }
  }
  if (in_a) slurm_hostlist_destroy(in_a);
  if (in_b) slurm_hostlist_destroy(in_b);
  return overlap;
}

}  // namespace cedana::controller
