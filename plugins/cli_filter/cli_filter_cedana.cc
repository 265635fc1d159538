// cli_filter/cedana: runs inside sbatch/srun/salloc before a job is submitted. It checks the
// checkpoint label the job will get (CEDANA_CHECKPOINT from the --export option, else from the
// submitting environment) and refuses the submission with a message saying what a label may
// contain, so the user learns it at once rather than from a failed checkpoint later.
// An --export naming only CEDANA_* assignments becomes ALL with them set in the environment, so
// that enabling cedana adds variables to a job instead of taking its environment away
// (CedanaOnlyExport).
// The batch script's earlier --export lines are recovered by job_submit/cedana in slurmctld.
// Quick, no I/O beyond stderr; never throws.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

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
// Opaque: options are read through slurm_option_get().
typedef struct slurm_opt slurm_opt_t;

// Exported by libslurm/libslurmfull; not declared in the public headers.
void slurm_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
char* slurm_option_get(slurm_opt_t* opt, const char* name);  // xmalloc'd copy or NULL
int slurm_option_set(slurm_opt_t* opt, const char* name, const char* value, bool early);
void slurm_xfree(void** ptr);

CEDANA_PLUGIN_EXPORT extern const char plugin_name[] = "cedana cli filter plugin";
CEDANA_PLUGIN_EXPORT extern const char plugin_type[] = "cli_filter/cedana";
CEDANA_PLUGIN_EXPORT extern const uint32_t plugin_version = CEDANA_SLURM_VERSION_NUMBER;
}

namespace cedana::slurm::cli_filter {
namespace {

constexpr const char* kPrefix = "cli_filter/cedana";

template <typename F>
int Guard(const char* hook, F&& body) noexcept {
  return plugins::HookGuard(kPrefix, hook, SLURM_SUCCESS, std::forward<F>(body));
}

// The option's value as a string ("" when unset), freeing SLURM's copy.
std::string OptionValue(slurm_opt_t* opt, const char* name) {
  char* value = slurm_option_get(opt, name);
  if (value == nullptr) return "";
  std::string out = value;
  slurm_xfree(reinterpret_cast<void**>(&value));
  return out;
}

// A label that could never be checkpointed is refused at once, with what a label may contain.
int CheckLabel(const std::string& export_value) {
  CedanaJobSettings settings;
  ApplyExportValue(export_value, "--export", &settings);
  if (!settings.label_set) {
    // Not named in --export: the job gets the submitting environment's value (if exported).
    if (const char* env = std::getenv(std::string(kCheckpointVar).c_str())) {
      settings.label = env;
      settings.label_set = true;
    }
  }
  if (!settings.label_set) return SLURM_SUCCESS;
  Status valid = ValidateLabel(settings.label);
  if (valid.ok()) return SLURM_SUCCESS;
  std::fprintf(stderr, "%s: %s: %s\n", kPrefix, std::string(kCheckpointVar).c_str(),
               valid.message().c_str());
  return SLURM_ERROR;
}

int PreSubmit(slurm_opt_t* opt, int offset) {
  if (opt == nullptr) return SLURM_SUCCESS;
  std::string export_value = OptionValue(opt, "export");
  if (CheckLabel(export_value) != SLURM_SUCCESS) return SLURM_ERROR;
  // `--export=CEDANA_ENABLE=1` adds the variable, as the docs mean it, instead of exporting
  // nothing else (a job without PATH, whose every srun fails): the variables go into this
  // process's environment and the option becomes ALL, so the job is exactly what it would be
  // without the line, plus them. This runs before sbatch/srun/salloc read their environment for
  // the job and set SLURM_EXPORT_ENV from the option (which they skip for ALL).
  auto vars = CedanaOnlyExport(export_value);
  if (vars.empty()) return SLURM_SUCCESS;
  for (const auto& [name, value] : vars) ::setenv(name.c_str(), value.c_str(), 1);
  if (slurm_option_set(opt, "export", "ALL", false) != SLURM_SUCCESS)
    std::fprintf(stderr,
                 "%s: cannot set --export=ALL; the job gets only the variables of --export=%s\n",
                 kPrefix, export_value.c_str());
  return SLURM_SUCCESS;
}

}  // namespace
}  // namespace cedana::slurm::cli_filter

extern "C" {

CEDANA_PLUGIN_EXPORT int cli_filter_p_setup_defaults(slurm_opt_t* opt, bool early) noexcept {
  return SLURM_SUCCESS;
}

CEDANA_PLUGIN_EXPORT int cli_filter_p_pre_submit(slurm_opt_t* opt, int offset) noexcept {
  return cedana::slurm::cli_filter::Guard(
      "pre_submit", [&] { return cedana::slurm::cli_filter::PreSubmit(opt, offset); });
}

CEDANA_PLUGIN_EXPORT void cli_filter_p_post_submit(int offset, uint32_t jobid,
                                                   uint32_t stepid) noexcept {}

}  // extern "C"
