// spank_cedana.so: the SPANK plugin (docs/slurm.md). For a job with CEDANA_ENABLE=1 it makes the
// batch step's task run `cedana-slurm` (the job proxy) instead of the batch script; the proxy
// asks the node daemon to run the script as a managed workload (or to restore the newest
// checkpoint of the job's label) and stands in for it until it ends. The plugin itself only
// rewrites argv and sets two variables (for the tasks of a step an enabled batch script started
// through cedana's srun relay too: they become task proxies): it never blocks, never talks to CRIU,
// and never fails a job (any problem is logged and the job runs as without the plugin).
//
// plugstack.conf arguments: proxy=/path/to/cedana-slurm (default /usr/local/bin/cedana-slurm).
#include <unistd.h>

#include "hook_guard.h"

#include <cstring>
#include <string>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

// Symbols SLURM looks up. SPANK_PLUGIN() gives them internal linkage in C++ (docs/architecture.md,
// "Code conventions"), so they are defined by hand with C linkage.
#define CEDANA_EXPORT __attribute__((visibility("default")))
extern "C" {
CEDANA_EXPORT extern const char plugin_name[] = "cedana";
CEDANA_EXPORT extern const char plugin_type[] = "spank";
CEDANA_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
CEDANA_EXPORT extern const unsigned int spank_plugin_version = 1;
}

namespace {

constexpr const char* kDefaultProxy = "/usr/local/bin/cedana-slurm";

bool IsTrue(const char* v) { return std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0; }

std::string ProxyPath(int ac, char** av) {
  for (int i = 0; i < ac; ++i)
    if (std::strncmp(av[i], "proxy=", 6) == 0) return av[i] + 6;
  return kDefaultProxy;
}

int BecomeProxy(spank_t sp, int ac, char** av, const char* mode_var);

// Runs in the task child as the job user, just before execve of the batch script.
int TaskInit(spank_t sp, int ac, char** av) {
  char enable[16] = "";
  if (spank_getenv(sp, "CEDANA_ENABLE", enable, sizeof enable) != ESPANK_SUCCESS || !IsTrue(enable))
    return ESPANK_SUCCESS;  // not enabled: the job runs exactly as without the plugin
  uint32_t step = 0;
  if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS) return ESPANK_SUCCESS;
  if (step != SLURM_BATCH_SCRIPT) {
    // An srun step runs unmanaged, outside the workload's PID namespace: what the node daemon
    // set for that namespace only (CEDANA_ADDED_ENV, comma-separated names) is taken out again.
    char added[256] = "";
    if (spank_getenv(sp, "CEDANA_ADDED_ENV", added, sizeof added) == ESPANK_SUCCESS) {
      for (char *save = nullptr, *name = strtok_r(added, ",", &save); name;
           name = strtok_r(nullptr, ",", &save))
        spank_unsetenv(sp, name);
      spank_unsetenv(sp, "CEDANA_ADDED_ENV");
    }
    // A step the node daemon started for the srun relay of an enabled batch script: its task
    // becomes a task proxy, whose command the daemon runs inside the job's processes so that
    // the job's checkpoints include it (docs/architecture.md, "srun steps").
    char step_name[64] = "";
    if (spank_getenv(sp, "CEDANA_STEP", step_name, sizeof step_name) != ESPANK_SUCCESS)
      return ESPANK_SUCCESS;
    return BecomeProxy(sp, ac, av, "CEDANA_SLURM_STEP_TASK");
  }
  return BecomeProxy(sp, ac, av, "CEDANA_SLURM_ATTACH");
}

// Makes the task exec the proxy, which finds its mode in `mode_var` (=1) and the task's own
// argv[0] in CEDANA_SLURM_ORIG_ARGV0.
int BecomeProxy(spank_t sp, int ac, char** av, const char* mode_var) {
  std::string proxy = ProxyPath(ac, av);
  if (::access(proxy.c_str(), X_OK) != 0) {
    slurm_error("spank/cedana: %s is not executable; job runs without checkpointing",
                proxy.c_str());
    return ESPANK_SUCCESS;
  }
  int argc = 0;
  char** argv = nullptr;
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 || !argv)
    return ESPANK_SUCCESS;
  // argc cannot grow: the proxy gets the original argv[0] through the environment.
  if (spank_setenv(sp, "CEDANA_SLURM_ORIG_ARGV0", argv[0], 1) != ESPANK_SUCCESS ||
      spank_setenv(sp, mode_var, "1", 1) != ESPANK_SUCCESS) {
    slurm_error("spank/cedana: cannot set the proxy's environment; job runs without checkpointing");
    return ESPANK_SUCCESS;
  }
  argv[0] = strdup(proxy.c_str());  // the task execs right after this; nothing to free
  return ESPANK_SUCCESS;
}

template <typename F>
int Guard(const char* hook, F&& f) noexcept {
  return cedana::plugins::HookGuard("spank/cedana", hook, ESPANK_SUCCESS, std::forward<F>(f));
}

}  // namespace

extern "C" CEDANA_EXPORT int slurm_spank_task_init(spank_t sp, int ac, char** av) noexcept {
  return Guard("task_init", [&] { return TaskInit(sp, ac, av); });
}
