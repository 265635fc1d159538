#include "slurm/node_role.h"

#include "slurm/slurm_install.h"

namespace cedana::slurm {

Result<NodeRole> ParseNodeRole(std::string_view text) {
  if (text == "all") return NodeRole::kAll;
  if (text == "controller") return NodeRole::kController;
  if (text == "worker") return NodeRole::kWorker;
  if (text == "login") return NodeRole::kLogin;
  return InvalidArgumentError("unknown node role \"" + std::string(text) +
                              "\" (valid: " + kNodeRoleNames + ")");
}

std::string_view NodeRoleName(NodeRole role) {
  switch (role) {
    case NodeRole::kAll: return "all";
    case NodeRole::kController: return "controller";
    case NodeRole::kWorker: return "worker";
    case NodeRole::kLogin: return "login";
  }
  return "all";
}

RoleParts PartsOf(NodeRole role) {
  switch (role) {
    case NodeRole::kWorker: return {{kSpankSo, kTaskSo}, {kNodeDaemonUnit}, false, true, true};
    case NodeRole::kController:
      return {{kJobSubmitSo, kCliFilterSo, kSlurmBinary}, {kControllerUnit}, true, false, false};
    case NodeRole::kLogin: return {{kSpankSo, kCliFilterSo}, {}, false, false, true};
    case NodeRole::kAll: break;
  }
  // Today's one-node setup: every file; the units are left to the site (the node daemon and
  // the controller are started by hand or by their own units on a test cluster).
  return {{kSpankSo, kJobSubmitSo, kCliFilterSo, kTaskSo, kSlurmBinary}, {}, true, true, true};
}

}  // namespace cedana::slurm
