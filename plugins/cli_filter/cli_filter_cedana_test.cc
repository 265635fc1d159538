// Host test for cli_filter_cedana.so: defines the libslurm symbols the plugin uses (options
// come from a map), dlopen()s the built plugin and calls its hooks.
#include <dlfcn.h>
#include <stdlib.h>

#include <cstdarg>
#include <cstring>
#include <map>
#include <string>

#include <gtest/gtest.h>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace {
std::map<std::string, std::string> g_options;  // the fake slurm_opt_t's set options
int g_frees = 0;
}  // namespace

extern "C" {
typedef struct slurm_opt slurm_opt_t;
void slurm_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
}
char* slurm_option_get(slurm_opt_t*, const char* name) {
  auto it = g_options.find(name);
  return it == g_options.end() ? nullptr : strdup(it->second.c_str());
}
int slurm_option_set(slurm_opt_t*, const char* name, const char* value, bool) {
  g_options[name] = value;
  return SLURM_SUCCESS;
}
void slurm_xfree(void** ptr) {
  free(*ptr);
  *ptr = nullptr;
  ++g_frees;
}
}

namespace {

using PreSubmitFn = int (*)(slurm_opt_t*, int);

class CliFilterPlugin : public testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(CEDANA_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    pre_submit_ = reinterpret_cast<PreSubmitFn>(dlsym(handle_, "cli_filter_p_pre_submit"));
    ASSERT_NE(pre_submit_, nullptr);
    g_options.clear();
    g_frees = 0;
    unsetenv("CEDANA_CHECKPOINT");
  }
  void TearDown() override {
    unsetenv("CEDANA_CHECKPOINT");
    if (handle_ != nullptr) dlclose(handle_);
  }
  // Runs pre_submit; returns its code and what it printed to stderr.
  std::pair<int, std::string> PreSubmit() {
    testing::internal::CaptureStderr();
    int rc = pre_submit_(opt_, 0);
    return {rc, testing::internal::GetCapturedStderr()};
  }

  void* handle_ = nullptr;
  PreSubmitFn pre_submit_ = nullptr;
  slurm_opt_t* opt_ = reinterpret_cast<slurm_opt_t*>(&g_options);  // any non-null pointer
};

TEST_F(CliFilterPlugin, Symbols) {
  EXPECT_STREQ(static_cast<const char*>(dlsym(handle_, "plugin_type")), "cli_filter/cedana");
  auto* version = static_cast<const uint32_t*>(dlsym(handle_, "plugin_version"));
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(*version, static_cast<uint32_t>(SLURM_VERSION_NUMBER));
  EXPECT_NE(dlsym(handle_, "cli_filter_p_setup_defaults"), nullptr);
  EXPECT_NE(dlsym(handle_, "cli_filter_p_post_submit"), nullptr);
}

TEST_F(CliFilterPlugin, NoLabelPasses) {
  g_options["export"] = "ALL";
  EXPECT_EQ(PreSubmit(), std::make_pair(SLURM_SUCCESS, std::string()));
  EXPECT_EQ(g_frees, 1);
}

TEST_F(CliFilterPlugin, ValidLabelFromExportPasses) {
  g_options["export"] = "ALL,CEDANA_ENABLE=1,CEDANA_CHECKPOINT=victim";
  setenv("CEDANA_CHECKPOINT", "bad label", 1);  // --export names it: the env does not count
  EXPECT_EQ(PreSubmit(), std::make_pair(SLURM_SUCCESS, std::string()));
}

TEST_F(CliFilterPlugin, InvalidLabelFromExportIsRefused) {
  g_options["export"] = "CEDANA_CHECKPOINT=a/b";
  auto [rc, err] = PreSubmit();
  EXPECT_EQ(rc, SLURM_ERROR);
  EXPECT_EQ(err,
            "cli_filter/cedana: CEDANA_CHECKPOINT: invalid label \"a/b\": a label is 1 to 128 "
            "letters, digits, '.', '_' or '-', and does not start with '.' or '-'\n");
}

TEST_F(CliFilterPlugin, InvalidLabelFromEnvironmentIsRefused) {
  setenv("CEDANA_CHECKPOINT", "-x", 1);
  auto [rc, err] = PreSubmit();
  EXPECT_EQ(rc, SLURM_ERROR);
  EXPECT_NE(err.find("invalid label \"-x\""), std::string::npos) << err;
}

TEST_F(CliFilterPlugin, ValidLabelFromEnvironmentPasses) {
  setenv("CEDANA_CHECKPOINT", "counting", 1);
  EXPECT_EQ(PreSubmit().first, SLURM_SUCCESS);
}

// The seeds' `--export=CEDANA_ENABLE=1` keeps the submission environment (srun needs PATH).
TEST_F(CliFilterPlugin, CedanaOnlyExportKeepsTheEnvironment) {
  unsetenv("CEDANA_ENABLE");
  g_options["export"] = "CEDANA_ENABLE=1,CEDANA_CHECKPOINT=victim";
  EXPECT_EQ(PreSubmit(), std::make_pair(SLURM_SUCCESS, std::string()));
  EXPECT_EQ(g_options["export"], "ALL");
  EXPECT_STREQ(getenv("CEDANA_ENABLE"), "1");
  EXPECT_STREQ(getenv("CEDANA_CHECKPOINT"), "victim");
  unsetenv("CEDANA_ENABLE");
}

TEST_F(CliFilterPlugin, OtherExportsAreLeftAsWritten) {
  unsetenv("CEDANA_ENABLE");
  for (const char* v : {"NONE,CEDANA_ENABLE=1", "ALL", "CEDANA_ENABLE=1,OMP_NUM_THREADS=4"}) {
    g_options["export"] = v;
    EXPECT_EQ(PreSubmit().first, SLURM_SUCCESS);
    EXPECT_EQ(g_options["export"], v);
    EXPECT_EQ(getenv("CEDANA_ENABLE"), nullptr) << v;
  }
  g_options.clear();
  EXPECT_EQ(PreSubmit().first, SLURM_SUCCESS);
  EXPECT_EQ(g_options.count("export"), 0u);  // no --export at all: SLURM's default
}

}  // namespace
