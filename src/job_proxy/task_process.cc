#include "job_proxy/task_process.h"

#include <sys/auxv.h>
#include <unistd.h>

#include <fstream>

extern char** environ;

namespace cedana::job_proxy {
namespace {

bool Named(std::string_view kv, std::initializer_list<std::string_view> names) {
  for (std::string_view name : names)
    if (kv.size() > name.size() && kv.starts_with(name) && kv[name.size()] == '=') return true;
  return false;
}

}  // namespace

std::vector<std::string> StartEnvironment(std::initializer_list<std::string_view> without) {
  std::vector<std::string> env;
  if (::getauxval(AT_SECURE) != 0) {
    std::ifstream in("/proc/self/environ", std::ios::binary);
    for (std::string kv; std::getline(in, kv, '\0');)
      if (!kv.empty() && !Named(kv, without)) env.push_back(kv);
    if (!env.empty()) return env;
  }
  for (char** e = environ; *e; ++e)
    if (!Named(*e, without)) env.emplace_back(*e);
  return env;
}

void ExecTask(const std::vector<std::string>& argv, std::vector<std::string> env,
              const std::string& program) {
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (auto& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  ::execvpe(program.c_str(), args.data(), envp.data());
}

}  // namespace cedana::job_proxy
