#include "daemon/srun_steps.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "common/fd_relay.h"
#include "common/log.h"
#include "common/srun_relay.h"
#include "common/subprocess.h"
#include "common/unique_fd.h"
#include "daemon/cgroup_join.h"
#include "daemon/step_parts.h"
#include "engine/process_tree.h"

namespace cedana::daemon {
namespace {

using protocol::DaemonRequest;
using protocol::Message;

const std::string kRelayEq = std::string(kSrunRelayVar) + "=";
const std::string kStepEq = std::string(kStepVar) + "=";
// How long a checkpoint waits for the workload's steps that are starting (a relay, a task proxy).
constexpr std::chrono::seconds kStepsSettleWait{10};
// What the shells around srun and around a step's task (its keeper) run: the command, then its
// exit status as one line into the status pipe at fd 3, which the command does not inherit.
constexpr const char* kStatusShell = "\"$@\" 3>&-; echo $? >&3";

std::string EnvValue(const std::vector<std::string>& env, std::string_view key_eq) {
  for (const std::string& kv : env)
    if (kv.starts_with(key_eq)) return kv.substr(key_eq.size());
  return "";
}

int EnvInt(const std::vector<std::string>& env, std::string_view key_eq) {
  std::string v = EnvValue(env, key_eq);
  int n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  return ec == std::errc() ? n : 0;
}

std::string Readlink(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink(path, ec);
  return ec ? "" : p.string();
}

std::string PidNamespaceOf(pid_t pid) { return Readlink(fmt::format("/proc/{}/ns/pid", pid)); }

// The descriptor of process `pid` that is the pipe `ino`; -1 if none is.
int FdOfPipe(pid_t pid, uint64_t ino) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(fmt::format("/proc/{}/fd", pid), ec)) {
    struct stat st {};
    if (::stat(e.path().c_str(), &st) == 0 && S_ISFIFO(st.st_mode) && st.st_ino == ino)
      return std::atoi(e.path().filename().c_str());
  }
  return -1;
}

// The inode of the pipe at `fd` of process `pid`; 0 if that is no pipe.
uint64_t PipeInodeOf(pid_t pid, int fd) {
  struct stat st {};
  if (::stat(fmt::format("/proc/{}/fd/{}", pid, fd).c_str(), &st) != 0 || !S_ISFIFO(st.st_mode))
    return 0;
  return st.st_ino;
}

Result<UniqueFd> PidfdOf(pid_t pid) {
  UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!fd.valid()) return ErrnoStatus(errno, fmt::format("process {}", pid));
  return fd;
}

// A copy of descriptor `fd` of the process `pidfd` names (root's right, as for a debugger).
Result<UniqueFd> TakeFd(int pidfd, pid_t pid, int fd) {
  UniqueFd copy(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, fd, 0)));
  if (!copy.valid())
    return ErrnoStatus(errno, fmt::format("taking descriptor {} of process {}", fd, pid));
  return copy;
}

// The resource limits of `pid`, to be set in what we start for it.
std::vector<std::pair<int, std::pair<uint64_t, uint64_t>>> LimitsOf(pid_t pid) {
  std::vector<std::pair<int, std::pair<uint64_t, uint64_t>>> out;
  for (int r = 0; r < RLIM_NLIMITS; ++r) {
    rlimit l{};
    if (::prlimit(pid, static_cast<__rlimit_resource>(r), nullptr, &l) == 0)
      out.push_back({r, {l.rlim_cur, l.rlim_max}});
  }
  return out;
}

// `pid`'s cgroups, as open cgroup.procs files a child writes itself into.
std::vector<UniqueFd> CgroupsOf(pid_t pid) {
  std::vector<UniqueFd> out;
  for (const std::string& f : CgroupProcsFilesOf(pid)) {
    UniqueFd fd(::open(f.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.valid()) out.push_back(std::move(fd));
  }
  return out;
}

std::vector<int> Raw(const std::vector<UniqueFd>& fds) {
  std::vector<int> raw;
  for (const UniqueFd& f : fds) raw.push_back(f.get());
  return raw;
}

// The running, privileged SLURM workload whose PID namespace `pid` is in. A batch script may
// call srun before its supervisor has recorded it as running: starting ones are waited for.
Result<WorkloadSpec> WorkloadOfProcess(NodeContext& node, pid_t pid, WorkloadState* state) {
  const std::string ns = PidNamespaceOf(pid);
  if (ns.empty()) return NotFoundError(fmt::format("process {} is gone", pid));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    bool starting = false;
    CEDANA_ASSIGN_OR_RETURN(auto ids, node.records().List());
    for (const std::string& id : ids) {
      auto st = node.records().LoadState(id);
      if (st.has_value() && st->status == WorkloadStatus::kStarting) starting = true;
      if (!st.has_value() || st->status != WorkloadStatus::kRunning || st->pid <= 0) continue;
      if (PidNamespaceOf(st->pid) != ns) continue;
      auto spec = node.records().LoadSpec(id);
      if (!spec.has_value() || spec->job_id.empty() || spec->unprivileged) break;
      *state = *st;
      return spec;
    }
    if (!starting || std::chrono::steady_clock::now() >= deadline)
      return NotFoundError(fmt::format("process {} is in no SLURM workload of this node", pid));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// The real srun of `step`, through a shell that writes its exit status into `status`, detached:
// it outlives a restart of this daemon, and the status reaches the batch script all the same.
// Its environment is the relay's with the relay out of PATH, and the step's name for its tasks
// unless they run outside the workload; its cgroups and limits are those of `like`. Sets the
// step's srun_pid and srun_pidfd.
Status StartSrun(const WorkloadSpec& spec, JobStep* step, int in, int out, int err, int status,
                 pid_t like) {
  std::vector<std::string> extra;
  if (step->not_captured.empty()) extra.push_back(kStepEq + step->name);
  if (!step->parts.empty()) extra.push_back(fmt::format("{}={}", kStepPartsVar, step->parts));
  subprocess::Command c;
  // A restored workload's spec holds the job's environment in this run (RestoredSpec).
  c.env = SrunEnvironment(step->env, extra,
                          spec.restored_from.empty() ? std::vector<std::string>{} : spec.env);
  CEDANA_ASSIGN_OR_RETURN(std::string srun,
                          subprocess::FindProgram("srun", EnvValue(*c.env, "PATH=")));
  c.argv = {"/bin/sh", "-c", kStatusShell, "srun", srun};
  c.argv.insert(c.argv.end(), step->argv.begin() + 1, step->argv.end());
  c.cwd = step->cwd;
  c.identity = subprocess::Identity{spec.uid, spec.gid, spec.groups};
  c.fds = {{0, in}, {1, out}, {2, err}, {3, status}};
  c.detached = true;
  c.new_session = true;  // its own process group: a checkpoint that stops the job kills it
  std::vector<UniqueFd> cgroups = CgroupsOf(like);
  c.cgroup_procs = Raw(cgroups);
  c.rlimits = LimitsOf(like);
  CEDANA_ASSIGN_OR_RETURN(step->srun_pid, subprocess::Start(c));
  auto pidfd = PidfdOf(step->srun_pid);
  step->srun_pidfd = pidfd.has_value() ? pidfd->Release() : -1;
  return OkStatus();
}

// Why the tasks of a step with this srun command line and environment cannot run inside the
// workload; "" when they can. An MPI launch through SLURM connects each rank to slurmstepd
// (PMI2, PMIx), which a checkpoint cannot include.
std::string WhyNotCaptured(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env) {
  std::string mpi = EnvValue(env, "SLURM_MPI_TYPE=");
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i].starts_with("--mpi=")) mpi = argv[i].substr(6);
    else if (argv[i] == "--mpi" && i + 1 < argv.size()) mpi = argv[i + 1];
  }
  if (!mpi.empty() && mpi != "none")
    return fmt::format(
        "srun --mpi={}: its ranks talk to slurmstepd, which a checkpoint cannot include", mpi);
  return "";
}

// A task's environment says it talks PMI to slurmstepd (the cluster's MpiDefault).
bool TalksPmi(const std::vector<std::string>& env) {
  return std::any_of(env.begin(), env.end(), [](const std::string& kv) {
    return kv.starts_with("PMI_FD=") || kv.starts_with("PMIX_SERVER_URI");
  });
}

// Where a step's tasks run, from one task's environment: its nodes, and its tasks here and in all.
JobStep PlacementOf(const std::vector<std::string>& env) {
  JobStep p;
  p.nodes = EnvInt(env, "SLURM_STEP_NUM_NODES=");
  p.all_tasks = EnvInt(env, "SLURM_STEP_NUM_TASKS=");
  p.expected_tasks = p.nodes > 1 ? TasksOnNode(EnvValue(env, "SLURM_STEP_TASKS_PER_NODE="),
                                               EnvInt(env, "SLURM_NODEID="))
                                 : p.all_tasks;
  p.node_list = EnvValue(env, "SLURM_STEP_NODELIST=");
  p.node_name = EnvValue(env, "SLURMD_NODENAME=");
  return p;
}

// Holds off a checkpoint of the workload while a request about its steps is served.
class StepRequest {
 public:
  StepRequest(JobSteps& steps, std::string workload_id)
      : steps_(steps), id_(std::move(workload_id)) {}
  Status Begin() {
    Status s = steps_.Begin(id_);
    begun_ = s.ok();
    return s;
  }
  ~StepRequest() {
    if (begun_) steps_.End(id_);
  }

 private:
  JobSteps& steps_;
  std::string id_;
  bool begun_ = false;
};

// Whether the relay `pid` no longer holds its connection to the node daemon: it has become its
// waiter (or is gone).
bool RelaySettled(pid_t pid) {
  const std::string exe = Readlink(fmt::format("/proc/{}/exe", pid));
  return exe.empty() || std::filesystem::path(exe).filename() != "cedana-slurm";
}

// kUnsupported when the tree of `init` has a waiting relay this daemon does not know: it started
// before the daemon restarted (the registry is in memory), and its srun could not be started
// again after a restore. The waiter is known by its script.
Status CheckStepsKnown(NodeContext& node, const std::string& workload_id, pid_t init) {
  auto tree = engine::ProcessTreeOf(init);
  if (!tree.has_value()) return OkStatus();  // gone: the dump says so
  std::set<pid_t> known;
  for (const JobStep& s : node.steps().Running(workload_id)) known.insert(s.relay_pid);
  for (pid_t p : *tree) {
    std::ifstream in(fmt::format("/proc/{}/cmdline", p), std::ios::binary);
    std::vector<std::string> argv;
    for (std::string a; argv.size() < 3 && std::getline(in, a, '\0');) argv.push_back(a);
    if (argv.size() == 3 && argv[2] == kWaiterScript && !known.contains(p))
      return UnsupportedError(fmt::format(
          "a step of the job started before this node daemon did (the relay's process {}): its "
          "srun cannot be started again after a restore, so the job is not checkpointed until "
          "that step ends",
          p));
  }
  return OkStatus();
}

Message Reply(Message fields) { return protocol::OkResult(std::move(fields)); }

}  // namespace

Result<std::string> SrunRelayDir() {
  std::filesystem::path self = Readlink("/proc/self/exe");
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::weakly_canonical(
      self.parent_path().parent_path() / "libexec" / "cedana", ec);
  const std::string relay = (dir / "srun").string();
  if (self.empty() || ec || ::access(relay.c_str(), X_OK) != 0)
    return NotFoundError(
        fmt::format("no srun relay at {} ({}; it is a link to cedana-slurm, "
                    "which `cedana slurm setup` installs)",
                    relay, std::strerror(errno)));
  return dir.string();
}

std::vector<std::string> SrunEnvironment(const std::vector<std::string>& relay_env,
                                         const std::vector<std::string>& extra,
                                         const std::vector<std::string>& job_now) {
  const std::string relay_dir = EnvValue(relay_env, kRelayEq);
  std::map<std::string, std::string, std::less<>> now;  // SLURM_* of this run, by "NAME="
  for (const std::string& kv : job_now)
    if (const size_t eq = kv.find('='); kv.starts_with("SLURM_") && eq != std::string::npos)
      now[kv.substr(0, eq + 1)] = kv;
  std::vector<std::string> env;
  for (const std::string& kv : relay_env) {
    if (kv.starts_with(kRelayEq) || kv.starts_with(kStepEq)) continue;
    if (auto it = now.find(std::string_view(kv).substr(0, kv.find('=') + 1)); it != now.end())
      env.push_back(it->second);
    else if (!relay_dir.empty() && kv.starts_with("PATH="))
      env.push_back("PATH=" + PathWithout(std::string_view(kv).substr(5), relay_dir));
    else env.push_back(kv);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

void AddSrunRelay(const std::string& relay_dir, std::vector<std::string>* env) {
  bool had_path = false;
  for (std::string& kv : *env)
    if (kv.starts_with("PATH=")) {
      kv = fmt::format("PATH={}:{}", relay_dir, kv.substr(5));
      had_path = true;
    }
  if (!had_path) env->push_back(fmt::format("PATH={}:/usr/local/bin:/usr/bin:/bin", relay_dir));
  env->push_back(kRelayEq + relay_dir);
}

Result<Message> HandleSrun(NodeContext& node, const Caller& caller, const DaemonRequest& req) {
  WorkloadState state;
  CEDANA_ASSIGN_OR_RETURN(WorkloadSpec spec, WorkloadOfProcess(node, caller.pid, &state));
  CEDANA_RETURN_IF_ERROR(CheckOwner(caller, spec.uid, "workload " + spec.id));
  if (req.argv.empty()) return InvalidArgumentError("srun: no arguments");
  StepRequest request(node.steps(), spec.id);
  CEDANA_RETURN_IF_ERROR(request.Begin());

  CEDANA_ASSIGN_OR_RETURN(UniqueFd relay, PidfdOf(caller.pid));
  std::vector<UniqueFd> fds;
  for (int fd : {0, 1, 2, req.caller_fds[0]}) {
    CEDANA_ASSIGN_OR_RETURN(UniqueFd f, TakeFd(relay.get(), caller.pid, fd));
    fds.push_back(std::move(f));
  }
  JobStep step;
  step.name = NewId("st-");
  step.lineage = step.name;
  step.workload_id = spec.id;
  step.relay_pid = caller.pid;
  step.argv = req.argv;
  step.env = req.env;
  step.cwd = req.cwd;
  step.not_captured = WhyNotCaptured(req.argv, req.env);
  if (Status s = StartSrun(spec, &step, fds[0].get(), fds[1].get(), fds[2].get(), fds[3].get(),
                           caller.pid);
      !s.ok())
    return s.WithContext("running srun for workload " + spec.id);
  log::Info("srun: workload {}: step {} (`{}`) as pid {}{}", spec.id, step.name,
            fmt::join(req.argv, " "), step.srun_pid,
            step.not_captured.empty() ? "" : ", its tasks outside the workload");
  Message reply = {{"step", step.name}, {"captured", step.not_captured.empty()}};
  node.steps().Add(std::move(step));
  return Reply(std::move(reply));
}

Result<Message> HandleStepTask(NodeContext& node, const Caller& caller, const DaemonRequest& req) {
  std::optional<JobStep> step = node.steps().Find(req.step);
  // Not a step of this node's daemon: a task on another node than the batch script's. It runs
  // as a workload of its own, which its proxy asks for (daemon/step_parts.h).
  if (!step.has_value()) return Reply({{"mode", "workload"}});
  CEDANA_ASSIGN_OR_RETURN(WorkloadSpec spec, node.records().LoadSpec(step->workload_id));
  CEDANA_ASSIGN_OR_RETURN(WorkloadState state, node.records().LoadState(step->workload_id));
  CEDANA_RETURN_IF_ERROR(CheckOwner(caller, spec.uid, "step " + step->name));
  if (state.status != WorkloadStatus::kRunning)
    return FailedPreconditionError(
        fmt::format("the job's workload {} is {}", spec.id, StatusName(state.status)));
  StepRequest request(node.steps(), spec.id);
  CEDANA_RETURN_IF_ERROR(request.Begin());
  if (step->restored) {
    node.steps().Place(step->name, PlacementOf(req.env));
    auto it = step->keepers.find(req.task);
    if (it == step->keepers.end()) return Reply({{"mode", "done"}});
    const StepKeeper& k = it->second;
    return Reply({{"mode", "attach"},
                  {"pid", k.pid},
                  {"fds", {k.pipe_fds[0], k.pipe_fds[1], k.pipe_fds[2]}}});
  }
  if (TalksPmi(req.env)) {
    node.steps().NotCaptured(step->name,
                             "its tasks talk PMI to slurmstepd (the cluster's MpiDefault), which "
                             "a checkpoint cannot include");
    return Reply({{"mode", "run"}});
  }
  if (req.argv.empty()) return InvalidArgumentError("step_task: no command");

  CEDANA_ASSIGN_OR_RETURN(UniqueFd proxy, PidfdOf(caller.pid));
  CEDANA_ASSIGN_OR_RETURN(UniqueFd init, PidfdOf(state.pid));
  std::vector<UniqueFd> fds;
  subprocess::Command c;
  for (int i = 0; i < 4; ++i) {
    if (req.caller_fds[i] < 0) continue;
    CEDANA_ASSIGN_OR_RETURN(UniqueFd f, TakeFd(proxy.get(), caller.pid, req.caller_fds[i]));
    c.fds.emplace_back(i, f.get());
    fds.push_back(std::move(f));
  }
  c.argv = {"/bin/sh", "-c", kStatusShell, "cedana-task"};
  c.argv.insert(c.argv.end(), req.argv.begin(), req.argv.end());
  c.env = req.env;
  c.cwd = req.cwd;
  c.identity = subprocess::Identity{spec.uid, spec.gid, spec.groups};
  c.new_session = true;  // its session must be inside the namespace CRIU dumps
  c.join_namespaces_of = init.get();
  std::vector<UniqueFd> cgroups = CgroupsOf(state.pid);
  c.cgroup_procs = Raw(cgroups);
  c.rlimits = LimitsOf(caller.pid);
  Result<pid_t> keeper = subprocess::Start(c);
  if (!keeper.has_value())
    return keeper.error().WithContext(
        fmt::format("starting task {} of step {} in workload {}", req.task, step->name, spec.id));
  StepKeeper k;
  k.pid = *keeper;
  for (int i = 0; i < 3; ++i) k.pipe_inos[i] = InodeOf(fds[fds.size() - 3 + i].get());
  node.steps().AddKeeper(step->name, req.task, k, PlacementOf(req.env));
  return Reply({{"mode", "keeper"}, {"pid", *keeper}});
}

nlohmann::json DescribeSteps(NodeContext& node, const std::string& workload_id) {
  nlohmann::json steps = nlohmann::json::array();
  for (const JobStep& s : node.steps().Running(workload_id)) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& [rank, k] : s.keepers) {
      const pid_t ns_pid = engine::NamespacePid(k.pid);
      if (ns_pid == 0) continue;  // its task has ended
      nlohmann::json pipes = nlohmann::json::array();
      for (int i = 0; i < 3; ++i) {
        const int fd = FdOfPipe(k.pid, k.pipe_inos[i]);
        if (fd < 0) break;
        pipes.push_back({{"fd", fd}, {"ino", k.pipe_inos[i]}});
      }
      if (pipes.size() != 3) continue;  // it is ending: its pipes are closing
      tasks.push_back({{"rank", rank}, {"ns_pid", ns_pid}, {"pipes", pipes}});
    }
    steps.push_back({{"argv", s.argv},
                     {"lineage", s.lineage},
                     {"nodes", s.nodes},
                     {"all_tasks", s.all_tasks},
                     {"node_list", s.node_list},
                     {"node_name", s.node_name},
                     {"env", s.env},
                     {"cwd", s.cwd},
                     {"relay_ns_pid", engine::NamespacePid(s.relay_pid)},
                     {"status_ino", PipeInodeOf(s.relay_pid, kWaiterStatusFd)},
                     {"tasks", tasks}});
  }
  return steps;
}

Status HoldStepsForCheckpoint(NodeContext& node, const std::string& workload_id, pid_t init) {
  CEDANA_RETURN_IF_ERROR(
      node.steps().HoldForCheckpoint(workload_id, kStepsSettleWait, RelaySettled));
  Status known = CheckStepsKnown(node, workload_id, init);
  if (!known.ok()) node.steps().CheckpointDone(workload_id);
  return known;
}

void StopSteps(NodeContext& node, const std::string& workload_id) {
  // srun first: killed, it says nothing; left alone, it would tell the job's output that its
  // tasks failed as their keepers go with the tree.
  for (const JobStep& s : node.steps().Running(workload_id)) {
    // Its shell leads a process group of its own (a session started just for it).
    const pid_t group = s.srun_pid > 0 ? ::getpgid(s.srun_pid) : -1;
    if (group > 1 && group != ::getpgrp()) ::kill(-group, SIGKILL);
  }
  node.steps().Forget(workload_id);
}

std::vector<StepPipe> StepPipesOf(const nlohmann::json& steps) {
  std::vector<StepPipe> pipes;
  if (!steps.is_array()) return pipes;
  auto add = [&](const nlohmann::json& j, const char* key, bool tree_reads) {
    if (uint64_t ino = j.value(key, uint64_t{0}); ino != 0) pipes.push_back({ino, tree_reads});
  };
  for (const nlohmann::json& s : steps) {
    add(s, "status_ino", true);
    for (const nlohmann::json& t : s.value("tasks", nlohmann::json::array()))
      for (const nlohmann::json& p : t.value("pipes", nlohmann::json::array()))
        add(p, "ino", false);
  }
  return pipes;
}

void ResumeSteps(NodeContext& node, const WorkloadSpec& spec, pid_t init_pid,
                 const nlohmann::json& steps) {
  if (!steps.is_array()) return;
  for (const nlohmann::json& s : steps) {
    const auto argv = s.value("argv", std::vector<std::string>{});
    const std::string what = fmt::format("step `{}` of workload {}", fmt::join(argv, " "), spec.id);
    const pid_t waiter = engine::TreeProcessWithNamespacePid(init_pid, s.value("relay_ns_pid", 0));
    if (argv.empty() || waiter == 0) {
      log::Warn("restore: {}: its srun relay was not restored; the step is not resumed", what);
      continue;
    }
    JobStep step;
    step.name = NewId("st-");
    step.lineage = s.value("lineage", step.name);
    step.parts = PartsVariable(s.value("parts", nlohmann::json::array()));
    // Where its tasks ran; its tasks here say where they run now as they attach (Place).
    step.nodes = s.value("nodes", 1);
    step.all_tasks = s.value("all_tasks", 0);
    step.node_list = s.value("node_list", "");
    step.node_name = s.value("node_name", "");
    step.workload_id = spec.id;
    step.relay_pid = waiter;
    step.argv = argv;
    step.env = s.value("env", std::vector<std::string>{});
    step.cwd = s.value("cwd", "/");
    step.restored = true;
    for (const nlohmann::json& t : s.value("tasks", nlohmann::json::array())) {
      StepKeeper k;
      k.pid = engine::TreeProcessWithNamespacePid(init_pid, t.value("ns_pid", 0));
      const nlohmann::json pipes = t.value("pipes", nlohmann::json::array());
      if (k.pid == 0 || pipes.size() != 3) continue;
      // Where its pipes are, and which pipes they are now (the supervisor's): the next
      // checkpoint finds them by inode.
      for (int i = 0; i < 3; ++i) {
        k.pipe_fds[i] = pipes[i].value("fd", -1);
        k.pipe_inos[i] = PipeInodeOf(k.pid, k.pipe_fds[i]);
      }
      step.keepers[t.value("rank", 0)] = k;
    }
    // The waiter's stdio are what the relay had (a pipe to the job's output, or to another
    // process of the script): the new srun's. Its status pipe is a new one (the supervisor's);
    // a second write end is opened through /proc. If srun cannot start, the script reads 1.
    UniqueFd status(::open(fmt::format("/proc/{}/fd/{}", waiter, kWaiterStatusFd).c_str(),
                           O_WRONLY | O_CLOEXEC));
    Status started = [&]() -> Status {
      if (!status.valid()) return ErrnoStatus(errno, "opening the relay's status pipe");
      CEDANA_ASSIGN_OR_RETURN(UniqueFd pidfd, PidfdOf(waiter));
      std::vector<UniqueFd> fds;
      for (int fd : {kWaiterStdinFd, 1, 2}) {
        CEDANA_ASSIGN_OR_RETURN(UniqueFd f, TakeFd(pidfd.get(), waiter, fd));
        fds.push_back(std::move(f));
      }
      return StartSrun(spec, &step, fds[0].get(), fds[1].get(), fds[2].get(), status.get(), waiter);
    }();
    if (!started.ok()) {
      log::Warn("restore: {}: {}", what, started.ToString());
      if (status.valid() && ::write(status.get(), "1\n", 2) < 0) {
      }
      continue;
    }
    log::Info("restore: {}: resumed as step {} (srun pid {}, {} task(s) to attach)", what,
              step.name, step.srun_pid, step.keepers.size());
    node.steps().Add(std::move(step));
  }
}

}  // namespace cedana::daemon
