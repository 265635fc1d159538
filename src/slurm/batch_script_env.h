// Batch script environment: which CEDANA_* settings a job asked for, recovered from its batch
// script's leading #SBATCH lines and from its environment. SLURM 22.05 keeps only the last
// `#SBATCH --export=` line, so a script with one line for CEDANA_ENABLE and one for
// CEDANA_CHECKPOINT loses the first; job_submit/cedana uses this to put it back.
// Pure functions on strings; no I/O, no allocation beyond the results. Thread-safe.
// Linked into slurmctld (job_submit) and sbatch (cli_filter): never throws on bad input.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cedana::slurm {

inline constexpr std::string_view kEnableVar = "CEDANA_ENABLE";
inline constexpr std::string_view kCheckpointVar = "CEDANA_CHECKPOINT";
inline constexpr std::string_view kRecoveredVar = "CEDANA_RECOVERED";
// Set by job_submit/cedana on a job it gave SLURM's preemption notice (SIGUSR1 to the batch
// step), for the job proxy.
inline constexpr std::string_view kPreemptNoticeVar = "CEDANA_PREEMPT_NOTICE";
// Set by job_submit/cedana on a job whose output it opens in append mode (SLURM would truncate
// the files again at every requeue, losing what the job printed before): the job proxy
// truncates them at the job's first start, as SLURM would have.
inline constexpr std::string_view kOutputAppendVar = "CEDANA_OUTPUT_APPEND";

struct CedanaJobSettings {
  bool enable = false;      // CEDANA_ENABLE is "1", "true", "yes" or "on" (case-insensitive)
  bool enable_set = false;  // CEDANA_ENABLE appeared at all
  std::string label;        // CEDANA_CHECKPOINT (not validated here: see cedana::ValidateLabel)
  bool label_set = false;   // CEDANA_CHECKPOINT appeared at all
  // Where each value came from, e.g. "CEDANA_ENABLE=1 (#SBATCH line 8)", in order found.
  std::vector<std::string> notes;
};

// The arguments of the #SBATCH lines in the script's leading comment block, split as sbatch
// splits them (whitespace, "double quotes", backslash escapes, `#` starts a trailing comment).
// Parsing stops at the first line that is neither blank nor a comment, as sbatch's does.
// Each inner vector is one #SBATCH line; `line_numbers` (optional) gets their 1-based numbers.
std::vector<std::vector<std::string>> SbatchDirectives(std::string_view script,
                                                       std::vector<int>* line_numbers = nullptr);

// Applies one --export value ("CEDANA_ENABLE=1", "ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=x") to
// `settings`: later assignments override earlier ones. Items without '=' (ALL, NONE, names to
// copy from the submission environment) are ignored. `origin` is used in the notes.
void ApplyExportValue(std::string_view value, std::string_view origin, CedanaJobSettings* settings);

// The assignments of an --export value that names only CEDANA_* assignments
// ("CEDANA_ENABLE=1", "CEDANA_ENABLE=1,CEDANA_CHECKPOINT=x"), in order; empty for anything else
// (ALL, NONE, other variables, names without '=': the user chose them). SLURM reads such a
// value as "export nothing else": the job would lose PATH, HOME and the rest of the submission
// environment, and every `srun` in it (which inherits the list through SLURM_EXPORT_ENV) would
// fail to find its command. What the docs mean by these lines is "add these variables", so
// cli_filter/cedana sets them in the submitting environment and makes the value ALL.
std::vector<std::pair<std::string, std::string>> CedanaOnlyExport(std::string_view value);

// CEDANA_ENABLE / CEDANA_CHECKPOINT from every `--export=V` and `--export V` in the leading
// #SBATCH lines; the last one of each wins, as it would if SLURM merged them.
CedanaJobSettings ParseBatchScript(std::string_view script);

// The same two variables from an environment of "KEY=VALUE" strings (a job's env array).
CedanaJobSettings ParseEnvironment(const std::vector<std::string>& env);
// The same for a C array of `count` entries (nulls skipped), as in job_desc_msg_t.
CedanaJobSettings ParseEnvironment(const char* const* env, size_t count);

// `explicit_env` wins over `script` for each variable it sets; notes are concatenated.
CedanaJobSettings Merge(const CedanaJobSettings& script, const CedanaJobSettings& explicit_env);

// True for "1", "true", "yes", "on" (any case).
bool ParseEnableValue(std::string_view value);

}  // namespace cedana::slurm
