// task_cedana.so: the task plugin (TaskPlugin=...,task/cedana). Its one job: when slurmd
// launches a batch job with CEDANA_ENABLE=1, tell the node daemon "job J belongs to uid U"
// (op slurm_job_start) before any process of the job exists; likewise for a step of such a job
// that the node daemon started (CEDANA_STEP), on every node it runs on. slurmd is the only party
// that knows this first-hand (the launch request is authenticated by munge), so the node daemon
// believes a job proxy's job id only when it matches this registration (docs/security.md, D5).
//
// Thin by rule (docs/architecture.md, "Code conventions"): one short unix-socket exchange with a
// hard deadline (daemon_registration.h), so slurmd's launch thread waits at most kDeadline; any
// failure is logged and the job launches anyway (the proxy then runs it unmanaged and says why in
// the job's output). Every other hook of the task plugin API is a no-op: SLURM requires them all to
// be present.
//
// Unlike the SPANK, job_submit and cli_filter plugins this one needs SLURM's internal headers
// (batch_job_launch_msg_t) and a configured source tree's config.h: scripts/setup.sh fetches
// and configures the installed slurm-wlm's source (CEDANA_SLURM_SOURCE_ROOT).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "hook_guard.h"
#include "task/daemon_registration.h"

extern "C" {
#include "config.h"
#include "src/common/slurm_protocol_defs.h"
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
#include "src/interfaces/cred.h"
#endif
}

static_assert(SLURM_VERSION_NUMBER == CEDANA_SLURM_VERSION_NUMBER,
              "the SLURM source tree does not match the installed SLURM headers");

extern "C" void slurm_info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#define CEDANA_EXPORT __attribute__((visibility("default")))
extern "C" {
CEDANA_EXPORT extern const char plugin_name[] = "cedana task plugin";
CEDANA_EXPORT extern const char plugin_type[] = "task/cedana";
CEDANA_EXPORT extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

constexpr const char* kPrefix = "task/cedana";
constexpr const char* kDefaultSocket = "/run/cedana/cedana.sock";
constexpr auto kDeadline = std::chrono::milliseconds(1500);

// The value of NAME in a KEY=VALUE array, or nullptr.
const char* EnvValue(char** env, uint32_t count, const char* name) {
  size_t n = std::strlen(name);
  for (uint32_t i = 0; env && i < count; ++i)
    if (env[i] && std::strncmp(env[i], name, n) == 0 && env[i][n] == '=') return env[i] + n + 1;
  return nullptr;
}

bool IsTrue(const char* v) {
  return v && (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0);
}

// The job's user. SLURM 22.05 sends it in the launch request; 23.11 deprecated that field for
// the job credential's, which slurmctld signed (the credential is verified before this hook).
template <typename LaunchMsg>
bool JobUid(LaunchMsg* req, uint32_t* uid) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
  slurm_cred_arg_t* arg = req->cred ? slurm_cred_get_args(req->cred) : nullptr;
  if (!arg) return false;
  *uid = arg->uid;
  slurm_cred_unlock_args(req->cred);
#else
  *uid = req->uid;
#endif
  return true;
}

// Registers job `job_id` of the request's user with the node daemon, saying why in slurmd's log.
template <typename LaunchMsg>
void Register(LaunchMsg* req, uint32_t job_id, const char* what) {
  uint32_t uid = 0;
  if (!JobUid(req, &uid)) {
    slurm_error(
        "%s: job %u: no job credential to read the user from; the %s runs without "
        "checkpointing",
        kPrefix, job_id, what);
    return;
  }
  const char* env_socket = std::getenv("CEDANA_DAEMON_SOCKET");
  std::string socket_path = env_socket && *env_socket ? env_socket : kDefaultSocket;
  std::string error = cedana::plugins::RegisterBatchJob(socket_path, job_id, uid, kDeadline);
  if (error.empty())
    slurm_info("%s: job %u of uid %u registered with the node daemon (%s)", kPrefix, job_id, uid,
               what);
  else
    slurm_error("%s: job %u: %s; the %s runs without checkpointing", kPrefix, job_id, error.c_str(),
                what);
}

int BatchRequest(batch_job_launch_msg_t* req) {
  if (!req || !IsTrue(EnvValue(req->environment, req->envc, "CEDANA_ENABLE"))) return SLURM_SUCCESS;
  Register(req, req->job_id, "job");
  return SLURM_SUCCESS;
}

// A step the node daemon started for an enabled job's srun relay (CEDANA_STEP in its
// environment): on a node without the batch script its tasks run as workloads of the job
// (docs/architecture.md, "Steps over several nodes"), which the daemon allows only for a job
// slurmd registered here.
int LaunchRequest(launch_tasks_request_msg_t* req) {
  if (!req || EnvValue(req->env, req->envc, "CEDANA_STEP") == nullptr) return SLURM_SUCCESS;
  Register(req, req->step_id.job_id, "step");
  return SLURM_SUCCESS;
}

}  // namespace

// Everything below is the task plugin API: slurmd and slurmstepd resolve all of its symbols when
// they load the plugin, and refuse it when one is missing. The set is that of SLURM 22.05 and of
// 23.11 on (which added pre_launch_priv and dropped the suspend, resume and affinity hooks): a
// symbol a version does not ask for is never looked up. Only the batch and launch requests do
// something.
extern "C" {
CEDANA_EXPORT int init(void) { return SLURM_SUCCESS; }
CEDANA_EXPORT int fini(void) { return SLURM_SUCCESS; }

CEDANA_EXPORT int task_p_slurmd_batch_request(batch_job_launch_msg_t* req) noexcept {
  return cedana::plugins::HookGuard(kPrefix, "slurmd_batch_request", SLURM_SUCCESS,
                                    [&] { return BatchRequest(req); });
}
CEDANA_EXPORT int task_p_slurmd_launch_request(launch_tasks_request_msg_t* req, uint32_t,
                                               char**) noexcept {
  return cedana::plugins::HookGuard(kPrefix, "slurmd_launch_request", SLURM_SUCCESS,
                                    [&] { return LaunchRequest(req); });
}
CEDANA_EXPORT int task_p_slurmd_suspend_job(uint32_t) { return SLURM_SUCCESS; }
CEDANA_EXPORT int task_p_slurmd_resume_job(uint32_t) { return SLURM_SUCCESS; }
CEDANA_EXPORT int task_p_pre_setuid(void* /* stepd_step_rec_t */) { return SLURM_SUCCESS; }
CEDANA_EXPORT int task_p_pre_launch(void* /* stepd_step_rec_t */) { return SLURM_SUCCESS; }
CEDANA_EXPORT int task_p_pre_launch_priv(void* /* stepd_step_rec_t */, uint32_t, uint32_t) {
  return SLURM_SUCCESS;
}
CEDANA_EXPORT int task_p_pre_set_affinity(void* /* stepd_step_rec_t */, uint32_t) {
  return SLURM_SUCCESS;
}
CEDANA_EXPORT int task_p_set_affinity(void* /* stepd_step_rec_t */, uint32_t) {
  return SLURM_SUCCESS;
}
CEDANA_EXPORT int task_p_post_set_affinity(void* /* stepd_step_rec_t */, uint32_t) {
  return SLURM_SUCCESS;
}
CEDANA_EXPORT int task_p_post_term(void* /* stepd_step_rec_t */,
                                   void* /* stepd_step_task_info_t */) {
  return SLURM_SUCCESS;
}
CEDANA_EXPORT int task_p_post_step(void* /* stepd_step_rec_t */) { return SLURM_SUCCESS; }
CEDANA_EXPORT int task_p_add_pid(pid_t) { return SLURM_SUCCESS; }
}
