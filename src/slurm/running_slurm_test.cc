#include "slurm/running_slurm.h"

#include <gtest/gtest.h>

namespace cedana::slurm {
namespace {

TEST(ScontrolVersion, IsReadFromItsOneLine) {
  EXPECT_EQ(ParseScontrolVersion("slurm 22.05.8\n"), "22.05.8");
  EXPECT_EQ(ParseScontrolVersion("slurm-wlm 22.05.8\n"), "22.05.8");  // Debian's build
  EXPECT_EQ(ParseScontrolVersion("slurmd 22.05.8\n"), "");
  EXPECT_EQ(ParseScontrolVersion("slurm 25.11.0-0rc1\n"), "25.11.0-0rc1");
  EXPECT_EQ(ParseScontrolVersion(""), "");
  EXPECT_EQ(ParseScontrolVersion("scontrol: error: something\n"), "");
  EXPECT_EQ(ParseScontrolVersion("slurm \n"), "");
  EXPECT_EQ(ParseScontrolVersion("scontrol: error: resolve_ctls_from_dns_srv: res_nsearch\n"
                                 "slurm 22.05.8\n"),
            "22.05.8");
}

// An excerpt of `scontrol show config` as SLURM 22.05 prints it.
constexpr char kShowConfig[] =
    "Configuration data as of 2026-12-02T10:00:00\n"
    "AccountingStorageType   = accounting_storage/none\n"
    "CliFilterPlugins        = cli_filter/cedana\n"
    "JobSubmitPlugins        = lua,cedana\n"
    "PlugStackConfig         = /etc/slurm/plugstack.conf\n"
    "PrologSlurmctld         = (null)\n"
    "TaskPlugin              = task/affinity,task/cedana\n"
    "TaskPluginParam         = (null type)\n"
    "\n"
    "Cgroup Support Configuration:\n"
    "Slurmctld(primary) at localhost is UP\n";

TEST(ShowConfig, KeysAndValuesOfItsAssignmentLines) {
  auto config = ParseShowConfig(kShowConfig);
  EXPECT_EQ(config["TaskPlugin"], "task/affinity,task/cedana");
  EXPECT_EQ(config["PlugStackConfig"], "/etc/slurm/plugstack.conf");
  EXPECT_EQ(config["TaskPluginParam"], "(null type)");
  EXPECT_EQ(config.at("PrologSlurmctld"), "") << "unset";
  EXPECT_EQ(config.count("Configuration data as of 2026-12-02T10:00:00"), 0u);
  EXPECT_EQ(config.size(), 7u);
}

TEST(CedanaPlugins, NoneMissingWhenAllAreLoaded) {
  EXPECT_TRUE(MissingCedanaPlugins(ParseShowConfig(kShowConfig),
                                   "# site plugins\nrequired /usr/lib/slurm/spank_cedana.so\n")
                  .empty());
}

TEST(CedanaPlugins, EachMissingOneIsNamed) {
  auto config = ParseShowConfig(kShowConfig);
  config["TaskPlugin"] = "task/affinity";
  config.erase("CliFilterPlugins");
  EXPECT_EQ(MissingCedanaPlugins(config, "# required /usr/lib/slurm/spank_cedana.so\n"),
            (std::vector<std::string>{"task/cedana", "cli_filter/cedana", "spank_cedana.so"}));
  EXPECT_EQ(MissingCedanaPlugins({}, "").size(), 4u);
}

}  // namespace
}  // namespace cedana::slurm
