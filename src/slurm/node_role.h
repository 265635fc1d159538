// NodeRole: which part of a SLURM cluster this node is, for `cedana slurm setup --node-role`
// (also CEDANA_SLURM_NODE_ROLE). Each role installs the files and restarts the daemons that
// its SLURM programs load; every role makes the same edits to slurm.conf, because SLURM expects
// that file to be identical on every node.
//
//   worker      slurmd: spank_cedana.so and task_cedana.so, the node daemon's unit
//   controller  slurmctld: job_submit_cedana.so, cli_filter_cedana.so, cedana-slurm, the
//               controller's unit
//   login       sbatch/salloc/srun: cli_filter_cedana.so, and spank_cedana.so, which those
//               commands load from plugstack.conf too
//   all         everything above (a one-node cluster; the default)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace cedana::slurm {

enum class NodeRole { kAll, kController, kWorker, kLogin };

// "controller", "worker", "login", "all"; anything else is kInvalidArgument naming the valid
// roles.
Result<NodeRole> ParseNodeRole(std::string_view text);
std::string_view NodeRoleName(NodeRole role);
inline constexpr const char* kNodeRoleNames = "controller, worker, login, all";

// What a role puts on its node.
struct RoleParts {
  std::vector<std::string> files;  // of slurm_install.h's names (kSpankSo, ..., kSlurmBinary)
  std::vector<std::string> units;  // systemd units, by file name (cedana.service, ...)
  bool restart_slurmctld = false;
  bool restart_slurmd = false;
  bool edit_plugstack = false;  // the role's programs read plugstack.conf
};
RoleParts PartsOf(NodeRole role);

}  // namespace cedana::slurm
