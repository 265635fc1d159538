// What the processes cedana-slurm becomes in a job's task share: the environment SLURM started
// it with, and exec'ing the task's own program with it when cedana stands aside. Stateless.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace cedana::job_proxy {

// The environment SLURM started us with, without the variables named in `without`. A
// cedana-slurm carrying file capabilities (the seeds' setcap for unprivileged mode) runs as a
// secure exec, and glibc then removes LD_LIBRARY_PATH, TMPDIR, LOCPATH and the like from
// `environ`; the task must still get them, so they are read back from /proc/self/environ,
// which keeps the strings execve passed.
std::vector<std::string> StartEnvironment(std::initializer_list<std::string_view> without = {});

// execvpe(program, argv, env). Returns only when that failed, with errno set.
void ExecTask(const std::vector<std::string>& argv, std::vector<std::string> env,
              const std::string& program);

}  // namespace cedana::job_proxy
