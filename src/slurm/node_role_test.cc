#include "slurm/node_role.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "slurm/slurm_install.h"

namespace cedana::slurm {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(NodeRole, ParsesEachRoleAndNamesTheValidOnes) {
  for (NodeRole role :
       {NodeRole::kAll, NodeRole::kController, NodeRole::kWorker, NodeRole::kLogin}) {
    auto parsed = ParseNodeRole(NodeRoleName(role));
    ASSERT_TRUE(parsed.has_value()) << NodeRoleName(role);
    EXPECT_EQ(*parsed, role);
  }
  auto bad = ParseNodeRole("compute");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.error().message().find("\"compute\" (valid: controller, worker, login, all)"),
            std::string::npos)
      << bad.error().message();
}

TEST(NodeRole, EachRoleTakesWhatItsDaemonsLoad) {
  RoleParts worker = PartsOf(NodeRole::kWorker);
  EXPECT_EQ(worker.files, (std::vector<std::string>{kSpankSo, kTaskSo}));
  EXPECT_EQ(worker.units, (std::vector<std::string>{kNodeDaemonUnit}));
  EXPECT_TRUE(worker.restart_slurmd);
  EXPECT_FALSE(worker.restart_slurmctld);

  RoleParts controller = PartsOf(NodeRole::kController);
  EXPECT_EQ(controller.files, (std::vector<std::string>{kJobSubmitSo, kCliFilterSo, kSlurmBinary}));
  EXPECT_EQ(controller.units, (std::vector<std::string>{kControllerUnit}));
  EXPECT_TRUE(controller.restart_slurmctld);
  EXPECT_FALSE(controller.restart_slurmd);
  EXPECT_FALSE(controller.edit_plugstack);

  RoleParts login = PartsOf(NodeRole::kLogin);
  EXPECT_TRUE(Has(login.files, kCliFilterSo));
  EXPECT_TRUE(Has(login.files, kSpankSo)) << "sbatch and srun load plugstack.conf's plugins";
  EXPECT_FALSE(login.restart_slurmctld || login.restart_slurmd);
  EXPECT_TRUE(login.units.empty());

  RoleParts all = PartsOf(NodeRole::kAll);
  EXPECT_EQ(all.files.size(), 5u);
  EXPECT_TRUE(all.restart_slurmctld && all.restart_slurmd && all.edit_plugstack);
}

}  // namespace
}  // namespace cedana::slurm
