// Host test for job_submit_cedana.so: defines the slurmctld symbols the plugin uses, dlopen()s
// the built plugin and calls its hooks with hand-built job descriptions.
#include <dlfcn.h>

#include <csignal>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace {
std::vector<std::string> g_log;

void Record(const char* level, const char* fmt, va_list ap) {
  char buf[2048];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  g_log.push_back(std::string(level) + ": " + buf);
}
}  // namespace

// Stand-ins for libslurmfull's exports; -rdynamic makes them visible to the plugin.
extern "C" {
void slurm_info(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Record("info", fmt, ap);
  va_end(ap);
}
void slurm_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Record("error", fmt, ap);
  va_end(ap);
}
char* slurm_xstrdup(const char* str) { return str ? strdup(str) : nullptr; }
slurm_conf_t slurm_conf;  // slurmctld's configuration: JobFileAppend=0 unless a test sets it
// Same contract as SLURM's env_array_overwrite: replace NAME=... or append; NULL-terminated.
int slurm_env_array_overwrite(char*** array_ptr, const char* name, const char* value) {
  std::string entry = std::string(name) + "=" + value;
  size_t n = 0;
  char** env = *array_ptr;
  for (; env != nullptr && env[n] != nullptr; ++n) {
    if (std::strncmp(env[n], name, std::strlen(name)) == 0 && env[n][std::strlen(name)] == '=') {
      free(env[n]);
      env[n] = strdup(entry.c_str());
      return 1;
    }
  }
  env = static_cast<char**>(realloc(env, (n + 2) * sizeof(char*)));
  env[n] = strdup(entry.c_str());
  env[n + 1] = nullptr;
  *array_ptr = env;
  return 1;
}
}

namespace {

using SubmitFn = int (*)(job_desc_msg_t*, uint32_t, char**);

class JobSubmitPlugin : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    handle_ = dlopen(CEDANA_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
  }
  void SetUp() override {
    ASSERT_NE(handle_, nullptr);
    submit_ = reinterpret_cast<SubmitFn>(dlsym(handle_, "job_submit"));
    ASSERT_NE(submit_, nullptr);
    g_log.clear();
  }
  void TearDown() override {
    for (char** e = env_; e != nullptr && *e != nullptr; ++e) free(*e);
    free(env_);
    free(err_);
  }

  // A job description as slurmctld hands it over for sbatch: script + environment.
  job_desc_msg_t Job(const std::string& script, const std::vector<std::string>& env) {
    script_ = script;
    env_ = static_cast<char**>(calloc(env.size() + 1, sizeof(char*)));
    for (size_t i = 0; i < env.size(); ++i) env_[i] = strdup(env[i].c_str());
    job_desc_msg_t job;
    std::memset(&job, 0, sizeof job);
    job.script = script_.data();
    job.environment = env_;
    job.env_size = static_cast<uint32_t>(env.size());
    return job;
  }
  std::vector<std::string> Env(const job_desc_msg_t& job) {
    env_ = job.environment;  // the plugin may have reallocated it
    std::vector<std::string> out;
    for (uint32_t i = 0; i < job.env_size; ++i) out.push_back(job.environment[i]);
    EXPECT_EQ(job.environment[job.env_size], nullptr);
    return out;
  }

  static std::string Victim() {
    std::ifstream in(std::string(CEDANA_SLURM_TESTDATA) + "/victim.sbatch");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  static void* handle_;
  SubmitFn submit_ = nullptr;
  std::string script_;
  char** env_ = nullptr;
  char* err_ = nullptr;
};
void* JobSubmitPlugin::handle_ = nullptr;

TEST_F(JobSubmitPlugin, ExportsSlurmSymbols) {
  EXPECT_STREQ(static_cast<const char*>(dlsym(handle_, "plugin_type")), "job_submit/cedana");
  EXPECT_STREQ(static_cast<const char*>(dlsym(handle_, "plugin_name")), "cedana job submit plugin");
  auto* version = static_cast<const uint32_t*>(dlsym(handle_, "plugin_version"));
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(*version, static_cast<uint32_t>(SLURM_VERSION_NUMBER));
  EXPECT_NE(dlsym(handle_, "job_modify"), nullptr);
}

TEST_F(JobSubmitPlugin, VictimScriptGetsCedanaEnableBack) {
  // sbatch kept only the last --export line: CEDANA_CHECKPOINT=victim.
  job_desc_msg_t job = Job(Victim(), {"CEDANA_CHECKPOINT=victim", "SLURM_GET_USER_ENV=1"});
  ASSERT_EQ(submit_(&job, 1000, &err_), SLURM_SUCCESS);
  EXPECT_EQ(err_, nullptr);
  EXPECT_EQ(Env(job),
            (std::vector<std::string>{"CEDANA_CHECKPOINT=victim", "SLURM_GET_USER_ENV=1",
                                      "CEDANA_PREEMPT_NOTICE=USR1", "CEDANA_OUTPUT_APPEND=1",
                                      "CEDANA_ENABLE=1", "CEDANA_RECOVERED=CEDANA_ENABLE=1"}));
  ASSERT_EQ(g_log.size(), 1u);
  EXPECT_NE(g_log[0].find("job_submit/cedana: uid 1000"), std::string::npos) << g_log[0];
}

TEST_F(JobSubmitPlugin, EnabledJobGetsSlurmsPreemptionNotice) {
  job_desc_msg_t job = Job("#!/bin/bash\nhostname\n", {"CEDANA_ENABLE=1"});
  ASSERT_EQ(submit_(&job, 1000, &err_), SLURM_SUCCESS);
  EXPECT_EQ(job.warn_signal, SIGUSR1);
  EXPECT_EQ(job.warn_flags, KILL_JOB_BATCH);
  EXPECT_EQ(job.warn_time, 0);
  EXPECT_EQ(Env(job), (std::vector<std::string>{"CEDANA_ENABLE=1", "CEDANA_PREEMPT_NOTICE=USR1",
                                                "CEDANA_OUTPUT_APPEND=1"}));
}

TEST_F(JobSubmitPlugin, EnabledJobAppendsToItsOutputAcrossRequeues) {
  job_desc_msg_t job = Job("#!/bin/bash\nhostname\n", {"CEDANA_ENABLE=1"});
  ASSERT_EQ(submit_(&job, 1000, &err_), SLURM_SUCCESS);
  EXPECT_EQ(job.open_mode, OPEN_MODE_APPEND);
  EXPECT_EQ(Env(job).back(), "CEDANA_OUTPUT_APPEND=1");
}

TEST_F(JobSubmitPlugin, TruncateModeTheOwnerChoseIsKept) {
  job_desc_msg_t job = Job("#!/bin/bash\nhostname\n", {"CEDANA_ENABLE=1"});
  job.open_mode = OPEN_MODE_TRUNCATE;  // --open-mode=truncate
  ASSERT_EQ(submit_(&job, 1000, &err_), SLURM_SUCCESS);
  EXPECT_EQ(job.open_mode, OPEN_MODE_TRUNCATE);
  EXPECT_EQ(Env(job), (std::vector<std::string>{"CEDANA_ENABLE=1", "CEDANA_PREEMPT_NOTICE=USR1"}));
}

TEST_F(JobSubmitPlugin, AppendModeTheOwnerChoseIsNotMarked) {
  job_desc_msg_t job = Job("#!/bin/bash\nhostname\n", {"CEDANA_ENABLE=1"});
  job.open_mode = OPEN_MODE_APPEND;  // --open-mode=append: the proxy must not empty the files
  ASSERT_EQ(submit_(&job, 1000, &err_), SLURM_SUCCESS);
  EXPECT_EQ(job.open_mode, OPEN_MODE_APPEND);
  EXPECT_EQ(Env(job), (std::vector<std::string>{"CEDANA_ENABLE=1", "CEDANA_PREEMPT_NOTICE=USR1"}));
}

TEST_F(JobSubmitPlugin, ASiteThatAppendsByDefaultIsLeftAlone) {
  slurm_conf.job_file_append = 1;  // JobFileAppend=1: nothing is truncated, at any start
  job_desc_msg_t job = Job("#!/bin/bash\nhostname\n", {"CEDANA_ENABLE=1"});
  ASSERT_EQ(submit_(&job, 1000, &err_), SLURM_SUCCESS);
  slurm_conf.job_file_append = 0;
  EXPECT_EQ(job.open_mode, 0);
  EXPECT_EQ(Env(job), (std::vector<std::string>{"CEDANA_ENABLE=1", "CEDANA_PREEMPT_NOTICE=USR1"}));
}

TEST_F(JobSubmitPlugin, AJobsOwnSignalIsKept) {
  job_desc_msg_t job = Job("#!/bin/bash\nhostname\n", {"CEDANA_ENABLE=1"});
  job.warn_signal = SIGUSR2;  // --signal=USR2@120
  job.warn_time = 120;
  ASSERT_EQ(submit_(&job, 1000, &err_), SLURM_SUCCESS);
  EXPECT_EQ(job.warn_signal, SIGUSR2);
  EXPECT_EQ(job.warn_time, 120);
  EXPECT_EQ(job.warn_flags, 0);
  EXPECT_EQ(Env(job), (std::vector<std::string>{"CEDANA_ENABLE=1", "CEDANA_OUTPUT_APPEND=1"}));
}

TEST_F(JobSubmitPlugin, ExplicitEnvironmentIsNotOverridden) {
  job_desc_msg_t job = Job(Victim(), {"CEDANA_ENABLE=0", "CEDANA_CHECKPOINT=mine"});
  ASSERT_EQ(submit_(&job, 1000, &err_), SLURM_SUCCESS);
  EXPECT_EQ(Env(job), (std::vector<std::string>{"CEDANA_ENABLE=0", "CEDANA_CHECKPOINT=mine"}));
}

TEST_F(JobSubmitPlugin, InvalidLabelIsRejected) {
  job_desc_msg_t job =
      Job("#!/bin/bash\n#SBATCH --export=ALL,CEDANA_CHECKPOINT=../etc\nhostname\n", {"PATH=/bin"});
  ASSERT_EQ(submit_(&job, 1000, &err_), SLURM_ERROR);
  ASSERT_NE(err_, nullptr);
  EXPECT_STREQ(err_,
               "CEDANA_CHECKPOINT: invalid label \"../etc\": a label is 1 to 128 letters, digits, "
               "'.', '_' or '-', and does not start with '.' or '-'");
  EXPECT_EQ(Env(job), std::vector<std::string>{"PATH=/bin"});
}

TEST_F(JobSubmitPlugin, ScriptWithoutCedanaIsUntouched) {
  job_desc_msg_t job = Job("#!/bin/bash\n#SBATCH --export=ALL\n#SBATCH -N 1\nhostname\n",
                           {"PATH=/bin", "HOME=/root"});
  char** before = job.environment;
  ASSERT_EQ(submit_(&job, 0, &err_), SLURM_SUCCESS);
  EXPECT_EQ(job.environment, before);
  EXPECT_EQ(job.env_size, 2u);
  EXPECT_EQ(job.open_mode, 0);
  EXPECT_EQ(Env(job), (std::vector<std::string>{"PATH=/bin", "HOME=/root"}));
  EXPECT_TRUE(g_log.empty());
}

TEST_F(JobSubmitPlugin, SrunWithoutScriptOrEnvironment) {
  job_desc_msg_t job;
  std::memset(&job, 0, sizeof job);
  EXPECT_EQ(submit_(&job, 0, &err_), SLURM_SUCCESS);
  EXPECT_EQ(job.environment, nullptr);
  EXPECT_EQ(submit_(nullptr, 0, &err_), SLURM_SUCCESS);
}

}  // namespace
