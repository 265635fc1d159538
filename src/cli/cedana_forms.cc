#include "cli/cedana_forms.h"

#include <fmt/format.h>

namespace cedana::cli {
namespace {

using Args = std::vector<std::string>;

// The value of `--name V` or `--name=V` in `args` from `from` on, taken out; "" when absent.
std::string TakeOption(Args* args, size_t from, const std::string& name) {
  for (size_t i = from; i < args->size(); ++i) {
    const std::string& a = (*args)[i];
    if (a == name && i + 1 < args->size()) {
      std::string v = (*args)[i + 1];
      args->erase(args->begin() + static_cast<long>(i), args->begin() + static_cast<long>(i) + 2);
      return v;
    }
    if (a.rfind(name + "=", 0) == 0) {
      std::string v = a.substr(name.size() + 1);
      args->erase(args->begin() + static_cast<long>(i));
      return v;
    }
  }
  return "";
}

bool TakeFlag(Args* args, const std::string& name) {
  for (size_t i = 1; i < args->size(); ++i) {
    if ((*args)[i] == "--") return false;  // the workload's own arguments follow
    if ((*args)[i] == name) {
      args->erase(args->begin() + static_cast<long>(i));
      return true;
    }
  }
  return false;
}

// Replaces args[at, at + n) with `with`.
void Replace(Args* args, size_t at, size_t n, const Args& with) {
  args->erase(args->begin() + static_cast<long>(at), args->begin() + static_cast<long>(at + n));
  args->insert(args->begin() + static_cast<long>(at), with.begin(), with.end());
}

}  // namespace

Result<TranslatedCommand> TranslateCedanaForms(const std::vector<std::string>& argv) {
  TranslatedCommand out;
  Args a = argv;
  if (a.size() < 2) {
    out.argv = a;
    return out;
  }
  if (a[1] != "version") {
    out.init_config = TakeFlag(&a, "--init-config");
    out.merge_config = TakeFlag(&a, "--merge-config");
  }
  auto at = [&](size_t i) { return i < a.size() ? a[i] : std::string(); };
  const std::string cmd = at(1), sub = at(2);
  if (cmd == "dump" && sub == "process") {
    if (at(3).empty()) return InvalidArgumentError("usage: cedana dump process PID");
    Replace(&a, 2, 2, {"--pid", at(3)});
  } else if (cmd == "dump" && sub == "slurm") {
    if (std::string jid = TakeOption(&a, 3, "--jid"); !jid.empty()) a.insert(a.begin() + 3, jid);
  } else if (cmd == "run" && sub == "process") {
    Replace(&a, 2, 1, {});
    // Our run takes the command after `--`; flags of ours before it stay ours.
    size_t first = 2;
    while (first < a.size() && a[first].rfind("-", 0) == 0 && a[first] != "--") {
      bool takes_value =
          a[first] == "--label" || a[first] == "-l" || a[first] == "--output" || a[first] == "-o";
      first += takes_value ? 2 : 1;
    }
    if (first < a.size() && a[first] != "--") a.insert(a.begin() + static_cast<long>(first), "--");
  } else if (cmd == "restore" && sub == "process") {
    std::string path = TakeOption(&a, 3, "--path");
    // <store>/<owner>/<label>/<id>: the checkpoint's own directory, in a local store (an
    // absolute path) or in S3 (s3://bucket[/prefix]).
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    std::string store = p, id;
    for (int level = 0; level < 3 && !store.empty(); ++level) {
      size_t slash = store.rfind('/');
      if (level == 0 && slash != std::string::npos) id = store.substr(slash + 1);
      store = slash == std::string::npos ? "" : store.substr(0, slash);
    }
    const bool s3 = store.rfind("s3://", 0) == 0 && store.size() > 5;
    const bool local = !store.empty() && store[0] == '/' && p.find("/./") == std::string::npos &&
                       p.find("/../") == std::string::npos;
    if (id.empty() || id == "." || id == ".." || !(s3 || local))
      return InvalidArgumentError(
          fmt::format("usage: cedana restore process --path DIR, DIR a checkpoint's directory "
                      "<checkpoint dir>/<owner>/<label>/<id> (got \"{}\")",
                      path));
    Replace(&a, 2, 1, {"--dir", store, id});
  } else if (cmd == "job") {
    if (sub == "list") Replace(&a, 1, 2, {"ps"});
    else if (sub == "inspect") Replace(&a, 1, 2, {"ps", "--json"});
    else if (sub == "kill") Replace(&a, 1, 2, {"kill"});
    else return InvalidArgumentError("usage: cedana job list|inspect ID|kill ID");
  } else if (cmd == "checkpoint") {
    if (sub == "list") Replace(&a, 1, 2, {"checkpoints"});
    else if (sub == "inspect" && !at(3).empty())
      Replace(&a, 1, 3, {"checkpoints", "--json", "--id", at(3)});
    else return InvalidArgumentError("usage: cedana checkpoint list|inspect ID");
  }
  out.argv = std::move(a);
  return out;
}

}  // namespace cedana::cli
