// Checkpoint labels (CEDANA_CHECKPOINT=<label>): what a label may contain. Shared by the
// daemon, the CLI and the SLURM plugins (which reject bad labels at submission). Stateless.
#pragma once

#include <string>

#include "common/status.h"

namespace cedana {

// Letters, digits, '.', '_' and '-', 1..128 chars, not starting with '.' or '-'.
// kInvalidArgument with a message that says what a label may contain.
Status ValidateLabel(const std::string& label);

}  // namespace cedana
