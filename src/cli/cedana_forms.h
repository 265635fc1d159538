// Cedana's command forms, as thin aliases of ours (docs/configuration.md, "Coming from Cedana"):
// a site's scripts written for Cedana run unchanged. The command line is
// rewritten into our form before it is parsed, so every alias behaves exactly as the command
// it names (its flags, errors and exit codes):
//   dump process PID [flags]            dump --pid PID [flags]
//   dump slurm --jid N [flags]          dump slurm N [flags]
//   run process CMD...                  run -- CMD...
//   restore process --path DIR [flags]  restore --dir STORE ID [flags], DIR = STORE/OWNER/LABEL/ID
//   job list | job inspect ID | job kill ID      ps | ps --json ID | kill ID
//   checkpoint list | checkpoint inspect ID      checkpoints | checkpoints --json --id ID
// `--init-config` and `--merge-config` on any command but `version` (whose --init-config is
// its own) are taken out and returned: they write the config file before the command runs.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace cedana::cli {

struct TranslatedCommand {
  std::vector<std::string> argv;  // ours, argv[0] included
  bool init_config = false;       // write the config file afresh first
  bool merge_config = false;      // merge the effective config into the file first
};

// kInvalidArgument for a Cedana form given wrongly (`restore process` without a checkpoint's
// --path), naming the form it expects.
Result<TranslatedCommand> TranslateCedanaForms(const std::vector<std::string>& argv);

}  // namespace cedana::cli
