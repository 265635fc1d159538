// job_submit/cedana: runs in slurmctld for every submission. SLURM 22.05 keeps only the last
// `#SBATCH --export=` line of a batch script, so a script that sets CEDANA_ENABLE and
// CEDANA_CHECKPOINT on two lines (as the docs' victim.sbatch does) loses one of them. This
// plugin reads the script's #SBATCH lines again, adds back the CEDANA_* variables the job's
// environment lacks (the explicit environment wins), records what it added in
// CEDANA_RECOVERED, and rejects a submission whose checkpoint label is invalid. An enabled job
// without a --signal of its own gets SLURM's notice of preemption: SIGUSR1 to its batch step
// when a preemption begins (with SlurmctldParameters=preempt_send_user_signal, which `cedana
// slurm setup` adds; never before its time limit), marked CEDANA_PREEMPT_NOTICE=USR1 for the
// job proxy, which then need not ask slurmctld about its job twice a second. An enabled job
// whose owner did not choose an open mode (and whose site does not append by default) has its
// output opened in append mode, marked CEDANA_OUTPUT_APPEND=1: SLURM truncates a requeued job's
// output files when it starts again, and a resumed job's output would lose all it printed
// before; the proxy truncates them at the job's first start instead.
// Quick and without I/O (it runs inside slurmctld's submission path); never throws.
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "common/label.h"
#include "slurm/batch_script_env.h"

#include "hook_guard.h"

static_assert(CEDANA_SLURM_VERSION_NUMBER == SLURM_VERSION_NUMBER,
              "CMake read a different SLURM version than the header being compiled against");

#define CEDANA_PLUGIN_EXPORT __attribute__((visibility("default")))

extern "C" {
// Opaque in the public headers; job_modify only passes it through.
typedef struct job_record job_record_t;

// Exported by slurmctld (libslurmfull); not declared in the public headers.
void slurm_info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void slurm_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
char* slurm_xstrdup(const char* str);
int slurm_env_array_overwrite(char*** array_ptr, const char* name, const char* value);
extern slurm_conf_t slurm_conf;

CEDANA_PLUGIN_EXPORT extern const char plugin_name[] = "cedana job submit plugin";
CEDANA_PLUGIN_EXPORT extern const char plugin_type[] = "job_submit/cedana";
CEDANA_PLUGIN_EXPORT extern const uint32_t plugin_version = CEDANA_SLURM_VERSION_NUMBER;
}

namespace cedana::slurm::job_submit {
namespace {

constexpr const char* kPrefix = "job_submit/cedana";

template <typename F>
int Guard(const char* hook, F&& body) noexcept {
  return plugins::HookGuard(kPrefix, hook, SLURM_SUCCESS, std::forward<F>(body));
}

uint32_t CountEnv(char** env) {
  uint32_t n = 0;
  while (env != nullptr && env[n] != nullptr) ++n;
  return n;
}

int Submit(job_desc_msg_t* job, uint32_t submit_uid, char** err_msg) {
  if (job == nullptr) return SLURM_SUCCESS;
  CedanaJobSettings script =
      job->script != nullptr ? ParseBatchScript(job->script) : CedanaJobSettings{};
  CedanaJobSettings env = ParseEnvironment(job->environment, job->env_size);
  CedanaJobSettings merged = Merge(script, env);

  if (merged.label_set) {
    Status valid = ValidateLabel(merged.label);
    if (!valid.ok()) {
      std::string msg = std::string(kCheckpointVar) + ": " + valid.message();
      slurm_info("%s: uid %u: rejected submission: %s", kPrefix, submit_uid, msg.c_str());
      if (err_msg != nullptr) *err_msg = slurm_xstrdup(msg.c_str());
      return SLURM_ERROR;
    }
  }

  if (merged.enable && job->warn_signal == 0) {
    job->warn_signal = SIGUSR1;
    job->warn_flags = KILL_JOB_BATCH;  // the batch step (the proxy) only, as --signal=B:
    job->warn_time = 0;                // at a preemption only, not before the time limit
    slurm_env_array_overwrite(&job->environment, std::string(kPreemptNoticeVar).c_str(), "USR1");
    job->env_size = CountEnv(job->environment);
  }
  if (merged.enable && job->open_mode == 0 && slurm_conf.job_file_append == 0) {
    job->open_mode = OPEN_MODE_APPEND;
    slurm_env_array_overwrite(&job->environment, std::string(kOutputAppendVar).c_str(), "1");
    job->env_size = CountEnv(job->environment);
  }

  std::vector<std::pair<std::string, std::string>> add;
  if (script.enable_set && !env.enable_set)
    add.emplace_back(std::string(kEnableVar), script.enable ? "1" : "0");
  if (script.label_set && !env.label_set)
    add.emplace_back(std::string(kCheckpointVar), script.label);
  if (add.empty()) return SLURM_SUCCESS;

  std::string recovered;
  for (const auto& [name, value] : add) {
    slurm_env_array_overwrite(&job->environment, name.c_str(), value.c_str());
    recovered += (recovered.empty() ? "" : ",") + name + "=" + value;
  }
  slurm_env_array_overwrite(&job->environment, std::string(kRecoveredVar).c_str(),
                            recovered.c_str());
  job->env_size = CountEnv(job->environment);
  slurm_info("%s: uid %u job %s: recovered %s from #SBATCH --export lines", kPrefix, submit_uid,
             job->name != nullptr ? job->name : "(unnamed)", recovered.c_str());
  return SLURM_SUCCESS;
}

}  // namespace
}  // namespace cedana::slurm::job_submit

extern "C" {

CEDANA_PLUGIN_EXPORT int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid,
                                    char** err_msg) noexcept {
  return cedana::slurm::job_submit::Guard("job_submit", [&] {
    return cedana::slurm::job_submit::Submit(job_desc, submit_uid, err_msg);
  });
}

CEDANA_PLUGIN_EXPORT int job_modify(job_desc_msg_t* job_desc, job_record_t* job_ptr,
                                    uint32_t submit_uid) noexcept {
  return cedana::slurm::job_submit::Guard("job_modify", [] { return SLURM_SUCCESS; });
}

}  // extern "C"
