#include "common/config.h"

#include <unistd.h>

#include <functional>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/bounded_json.h"
#include "common/cedana_config_compat.h"
#include "common/checkpoint_streams.h"
#include "common/fs.h"

extern char** environ;

namespace cedana {
namespace {

using Setter = std::function<Status(Config&, const std::string& text)>;
using Getter = std::function<std::string(const Config&)>;

// How a key's value is written in the JSON file.
enum class JsonKind { kString, kInteger, kBool };

struct KeySpec {
  ConfigKeyInfo info;
  Setter set;
  Getter get;
  JsonKind kind = JsonKind::kString;
  bool secret = false;
};

Status BadValue(const std::string& key, const std::string& value, const std::string& valid) {
  return InvalidArgumentError(
      fmt::format("config key {}: invalid value \"{}\" (valid: {})", key, value, valid));
}

// Where a key's value lives in a Config: a member, or a member of one of its sections.
template <typename T>
class Field {
 public:
  Field(T Config::*member)  // NOLINT(google-explicit-constructor): the table reads better
      : ref_([member](Config& c) -> T& { return c.*member; }),
        get_([member](const Config& c) -> const T& { return c.*member; }) {}
  template <typename Section>
  Field(Section Config::*section, T Section::*member)
      : ref_([=](Config& c) -> T& { return (c.*section).*member; }),
        get_([=](const Config& c) -> const T& { return (c.*section).*member; }) {}

  T& Ref(Config& c) const { return ref_(c); }
  const T& Get(const Config& c) const { return get_(c); }
  T Default() const { return get_(Config{}); }

 private:
  std::function<T&(Config&)> ref_;
  std::function<const T&(const Config&)> get_;
};

KeySpec StringKey(std::string key, std::string env, Field<std::string> field, std::string valid,
                  std::string doc, std::function<bool(const std::string&)> ok = {}) {
  KeySpec s;
  s.info = {key, env, valid, field.Default(), std::move(doc)};
  s.set = [=](Config& c, const std::string& v) -> Status {
    if (ok && !ok(v)) return BadValue(key, v, valid);
    field.Ref(c) = v;
    return OkStatus();
  };
  s.get = [=](const Config& c) { return field.Get(c); };
  return s;
}

// A setting that is one of `names` (common/named_values.h).
template <typename E, size_t N>
KeySpec EnumKey(std::string key, std::string env, std::type_identity_t<Field<E>> field,
                const NamedValue<E> (&names)[N], std::string doc) {
  KeySpec s;
  std::string valid = ValueNames(names);
  s.info = {key, env, valid, std::string(NameOf(names, field.Default())), std::move(doc)};
  s.set = [=, &names](Config& c, const std::string& v) -> Status {
    std::optional<E> value = ValueNamed(names, v);
    if (!value) return BadValue(key, v, valid);
    field.Ref(c) = *value;
    return OkStatus();
  };
  s.get = [=, &names](const Config& c) { return std::string(NameOf(names, field.Get(c))); };
  return s;
}

KeySpec IntKey(std::string key, std::string env, Field<int> field, int min, int max,
               std::string doc) {
  KeySpec s;
  s.kind = JsonKind::kInteger;
  std::string valid = fmt::format("an integer from {} to {}", min, max);
  s.info = {key, env, valid, std::to_string(field.Default()), std::move(doc)};
  s.set = [=](Config& c, const std::string& v) -> Status {
    size_t used = 0;
    long n = 0;
    try {
      n = std::stol(v, &used);
    } catch (const std::exception&) {
      return BadValue(key, v, valid);
    }
    if (used != v.size() || n < min || n > max) return BadValue(key, v, valid);
    field.Ref(c) = static_cast<int>(n);
    return OkStatus();
  };
  s.get = [=](const Config& c) { return std::to_string(field.Get(c)); };
  return s;
}

KeySpec BoolKey(std::string key, std::string env, Field<bool> field, std::string doc) {
  KeySpec s;
  s.kind = JsonKind::kBool;
  std::string valid = "0, 1, true, false";
  s.info = {key, env, valid, field.Default() ? "1" : "0", std::move(doc)};
  s.set = [=](Config& c, const std::string& v) -> Status {
    if (v == "1" || v == "true") field.Ref(c) = true;
    else if (v == "0" || v == "false" || v.empty()) field.Ref(c) = false;
    else return BadValue(key, v, valid);
    return OkStatus();
  };
  s.get = [=](const Config& c) { return std::string(field.Get(c) ? "1" : "0"); };
  return s;
}

bool IsCheckpointDir(const std::string& v) {
  return (!v.empty() && v[0] == '/') || (v.rfind("s3://", 0) == 0 && v.size() > 5);
}
bool IsHostPort(const std::string& v) {
  size_t colon = v.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == v.size()) return false;
  for (size_t i = colon + 1; i < v.size(); ++i)
    if (v[i] < '0' || v[i] > '9') return false;
  return v.size() - colon - 1 <= 5;
}
bool IsDatabaseUrl(const std::string& v) {
  return v == "sqlite::memory:" || v.rfind("sqlite:///", 0) == 0 ||
         v.rfind("postgresql://", 0) == 0 || v.rfind("postgres://", 0) == 0;
}
bool IsAbsolute(const std::string& v) { return !v.empty() && v[0] == '/'; }
bool IsAbsoluteOrEmpty(const std::string& v) { return v.empty() || v[0] == '/'; }
bool IsUrlOrEmpty(const std::string& v) {
  return v.empty() || v.rfind("http://", 0) == 0 || v.rfind("https://", 0) == 0;
}

const std::vector<KeySpec>& Specs() {
  static const std::vector<KeySpec> specs = [] {
    std::vector<KeySpec> s;
    s.push_back(StringKey("connection.url", "CEDANA_URL", &Config::url,
                          "empty or an http(s):// URL",
                          "Base URL of the cedana-slurm controller (self-hosted).", IsUrlOrEmpty));
    s.push_back(StringKey("connection.auth_token", "CEDANA_AUTH_TOKEN", &Config::auth_token,
                          "any string", "Bearer token for the controller's API."));
    s.back().secret = true;
    s.push_back(StringKey("checkpoint.dir", "CEDANA_CHECKPOINT_DIR", &Config::checkpoint_dir,
                          "an absolute path or s3://bucket[/prefix]",
                          "Where checkpoints are stored (local dir, NFS, or S3).",
                          IsCheckpointDir));
    s.push_back(IntKey("checkpoint.streams", "CEDANA_CHECKPOINT_STREAMS",
                       {&Config::node, &NodeConfig::checkpoint_streams}, 1, kMaxCheckpointStreams,
                       "Streams per checkpoint, packed and compressed in parallel."));
    s.push_back(EnumKey("checkpoint.compression", "CEDANA_CHECKPOINT_COMPRESSION",
                        {&Config::node, &NodeConfig::checkpoint_compression}, kCodecNames,
                        "Codec of each stream; gzip streams are readable by `gzip -d`."));
    s.push_back(IntKey("checkpoint.keep", "CEDANA_CHECKPOINT_KEEP",
                       {&Config::node, &NodeConfig::checkpoint_keep}, 0, 1000000,
                       "Newest checkpoints kept per label; older ones are deleted. 0 keeps all."));
    s.push_back(BoolKey("checkpoint.direct", "CEDANA_CHECKPOINT_DIRECT",
                        {&Config::node, &NodeConfig::checkpoint_direct},
                        "Direct dumps: CRIU's images go into the checkpoint as CRIU writes them, "
                        "without an images dir on disk."));
    s.push_back(BoolKey("checkpoint.dedup", "CEDANA_CHECKPOINT_DEDUP",
                        {&Config::node, &NodeConfig::checkpoint_dedup},
                        "Deduplicated checkpoints: memory is stored in chunks shared by a label's "
                        "checkpoints, and each checkpoint stores only the chunks that changed."));
    s.push_back(
        IntKey("checkpoint.memory_limit_mib", "CEDANA_CHECKPOINT_MEMORY_LIMIT_MIB",
               {&Config::node, &NodeConfig::checkpoint_memory_limit_mib}, 64, 65536,
               "The daemon's size during a direct dump, in MiB (64 of it, 128 with dedup, for "
               "the daemon itself, half for S3 parts; the rest buffers image data); past it CRIU "
               "waits. Half of it bounds the S3 parts of any dump or restore."));
    s.push_back(IntKey("checkpoint.lz4_acceleration", "CEDANA_CHECKPOINT_LZ4_ACCELERATION",
                       {&Config::node, &NodeConfig::checkpoint_lz4_acceleration}, 1, 64,
                       "lz4's acceleration for checkpoints compressed with lz4: above 1 they are "
                       "faster and store more (1 GiB of typical memory at 4: 6-14 % faster, 12 % "
                       "more stored). 1: lz4's default."));
    s.push_back(IntKey("checkpoint.parallel_dumps", "CEDANA_CHECKPOINT_PARALLEL_DUMPS",
                       {&Config::node, &NodeConfig::checkpoint_parallel_dumps}, 0, 256,
                       "Most dumps the node daemon runs at once; the others wait their turn, "
                       "earliest deadline first. 0: four per core."));
    s.push_back(EnumKey("checkpoint.tcp", "CEDANA_CHECKPOINT_TCP",
                        {&Config::node, &NodeConfig::checkpoint_tcp}, kOutsideTcpNames,
                        "TCP connections to peers outside the job: refuse the checkpoint, restore "
                        "them established, or restore them closed."));
    s.push_back(StringKey("checkpoint.work_dir", "CEDANA_CHECKPOINT_WORK_DIR",
                          {&Config::node, &NodeConfig::work_dir}, "an absolute path",
                          "Local scratch dir for CRIU images dirs while packing/unpacking.",
                          IsAbsolute));
    s.push_back(StringKey("daemon.socket", "CEDANA_DAEMON_SOCKET", &Config::socket_path,
                          "an absolute path", "Unix socket of the node daemon.", IsAbsolute));
    s.push_back(StringKey("daemon.state_dir", "CEDANA_DAEMON_STATE_DIR",
                          {&Config::node, &NodeConfig::state_dir}, "an absolute path",
                          "Workload records and their logs; survives daemon restarts.",
                          IsAbsolute));
    s.push_back(StringKey("daemon.log_file", "CEDANA_DAEMON_LOG_FILE",
                          {&Config::node, &NodeConfig::log_file}, "empty or an absolute path",
                          "Daemon log file (also logged to stderr).", IsAbsoluteOrEmpty));
    s.push_back(EnumKey("daemon.log_level", "CEDANA_LOG_LEVEL", &Config::log_level,
                        log::kLevelNames, "Lowest level that is logged."));
    s.push_back(StringKey("daemon.cluster_key_file", "CEDANA_CLUSTER_KEY_FILE",
                          &Config::cluster_key_file, "an absolute path",
                          "Root-only key that signs checkpoint manifests (created if missing).",
                          IsAbsolute));
    s.push_back(
        StringKey("criu.binary", "CEDANA_CRIU_BINARY", {&Config::node, &NodeConfig::criu_binary},
                  "empty or an absolute path",
                  "CRIU binary; empty searches PATH, /usr/local/bin, /opt/cedana/criu/sbin.",
                  IsAbsoluteOrEmpty));
    s.push_back(IntKey("criu.timeout_seconds", "CEDANA_CRIU_TIMEOUT_SECONDS",
                       {&Config::node, &NodeConfig::criu_timeout_seconds}, 1, 86400,
                       "Deadline of one CRIU dump or restore; past it CRIU is killed and the "
                       "workload thawed."));
    s.push_back(EnumKey("criu.no_breakpoints", "CEDANA_CRIU_NO_BREAKPOINTS",
                        {&Config::node, &NodeConfig::criu_no_breakpoints}, kBreakpointFallbackNames,
                        "CRIU's no-hardware-breakpoint fallback: auto probes at daemon start."));
    s.push_back(StringKey("daemon.node_name", "CEDANA_NODE_NAME",
                          {&Config::node, &NodeConfig::node_name}, "empty or a node name",
                          "This node's name towards the controller; empty means the host name."));
    s.push_back(IntKey("daemon.metrics_port", "CEDANA_DAEMON_METRICS_PORT",
                       {&Config::node, &NodeConfig::daemon_metrics_port}, 0, 65535,
                       "Port on 127.0.0.1 where the node daemon serves /metrics to Prometheus "
                       "(dumps, restores, phases, refusals); 0 = off."));
    s.push_back(IntKey("daemon.peer_port", "CEDANA_DAEMON_PEER_PORT",
                       {&Config::node, &NodeConfig::daemon_peer_port}, 0, 65535,
                       "Port where the node daemon answers the other nodes' daemons (munge "
                       "credentials both ways), for jobs checkpointed over several nodes; the "
                       "same on every node. 0 = off."));
    s.push_back(StringKey("controller.listen", "CEDANA_CONTROLLER_LISTEN",
                          {&Config::controller, &ControllerConfig::listen}, "host:port",
                          "Address of the controller's HTTP server (API, web UI, installer).",
                          IsHostPort));
    s.push_back(StringKey("controller.web_dir", "CEDANA_CONTROLLER_WEB_DIR",
                          {&Config::controller, &ControllerConfig::web_dir}, "an absolute path",
                          "Files of the web UI the controller serves.", IsAbsolute));
    s.push_back(StringKey("controller.bundle_dir", "CEDANA_CONTROLLER_BUNDLE_DIR",
                          {&Config::controller, &ControllerConfig::bundle_dir}, "an absolute path",
                          "Node bundles (<version>.tar.gz) the installer hands out.", IsAbsolute));
    s.push_back(IntKey("controller.maintenance_lead_seconds", "CEDANA_MAINTENANCE_LEAD_SECONDS",
                       {&Config::controller, &ControllerConfig::maintenance_lead_seconds}, 5, 3600,
                       "Seconds before a MAINT reservation starts that its nodes' enabled jobs are "
                       "checkpointed and requeued."));
    s.push_back(StringKey(
        "db.url", "CEDANA_DB_URL", {&Config::controller, &ControllerConfig::db_url},
        "sqlite:///path, sqlite::memory: or postgresql://user:password@host:port/db",
        "The controller's catalog database: SQLite by default, PostgreSQL for large sites.",
        IsDatabaseUrl));
    s.back().secret = true;  // a PostgreSQL URI may carry a password
    s.push_back(StringKey("s3.access_key_id", "AWS_ACCESS_KEY_ID",
                          {&Config::s3, &S3Config::access_key_id}, "any string",
                          "Access key id for s3:// checkpoint dirs."));
    s.push_back(StringKey("s3.secret_access_key", "AWS_SECRET_ACCESS_KEY",
                          {&Config::s3, &S3Config::secret_access_key}, "any string",
                          "Secret access key for s3:// checkpoint dirs."));
    s.back().secret = true;
    s.push_back(StringKey("s3.session_token", "AWS_SESSION_TOKEN",
                          {&Config::s3, &S3Config::session_token}, "any string",
                          "Session token of temporary credentials; empty for none."));
    s.back().secret = true;
    s.push_back(StringKey("s3.region", "AWS_REGION", {&Config::s3, &S3Config::region},
                          "a region name", "Region the requests are signed for.",
                          [](const std::string& v) { return !v.empty(); }));
    s.back().info.env_aliases = {"AWS_DEFAULT_REGION"};
    s.push_back(StringKey("s3.endpoint_url", "AWS_ENDPOINT_URL_S3",
                          {&Config::s3, &S3Config::endpoint_url}, "empty or an http(s):// URL",
                          "S3-compatible endpoint; empty means AWS S3 of s3.region.",
                          IsUrlOrEmpty));
    s.back().info.env_aliases = {"AWS_ENDPOINT_URL"};
    s.push_back(EnumKey("s3.addressing", "CEDANA_S3_ADDRESSING",
                        {&Config::s3, &S3Config::addressing}, kS3AddressingNames,
                        "Bucket in the host name (virtual) or in the path; auto: virtual for AWS, "
                        "path for other endpoints."));
    s.push_back(
        IntKey("s3.part_size_mib", "CEDANA_S3_PART_SIZE_MIB",
               {&Config::s3, &S3Config::part_size_mib}, 5, 1024,
               "Multipart upload part size and download range size, in MiB; a "
               "checkpoint's streams share half of checkpoint.memory_limit_mib for parts."));
    s.push_back(IntKey("s3.max_attempts", "AWS_MAX_ATTEMPTS",
                       {&Config::s3, &S3Config::max_attempts}, 1, 20,
                       "Attempts per S3 request on 5xx and network errors, with backoff."));
    s.push_back(BoolKey("slurm.unprivileged", "CEDANA_SLURM_UNPRIVILEGED",
                        {&Config::node, &NodeConfig::slurm_unprivileged},
                        "Dump and restore SLURM jobs as the job's user instead of root."));
    s.push_back(BoolKey(
        "slurm.requeue_on_timeout", "CEDANA_SLURM_REQUEUE_ON_TIMEOUT",
        {&Config::node, &NodeConfig::slurm_requeue_on_timeout},
        "Requeue jobs that set CEDANA_REQUEUE_ON_TIMEOUT=1 after their time-limit checkpoint."));
    s.push_back(IntKey("slurm.max_restarts", "CEDANA_SLURM_MAX_RESTARTS",
                       {&Config::node, &NodeConfig::slurm_max_restarts}, 0, 1000,
                       "Time-limit requeues of one job at most."));
    s.push_back(IntKey("slurm.timeout_margin_seconds", "CEDANA_SLURM_TIMEOUT_MARGIN_SECONDS",
                       {&Config::node, &NodeConfig::slurm_timeout_margin_seconds}, 5, 3600,
                       "The time-limit checkpoint starts this long plus the last checkpoint's "
                       "duration before the job's end time."));
    return s;
  }();
  return specs;
}

// Keys of ours that were renamed: the old name (and its variable) is still read, with a
// warning that names the new one.
struct FormerName {
  std::string_view key, env, now;
};
constexpr FormerName kFormerNames[] = {
    {"checkpoint.streaming", "CEDANA_CHECKPOINT_STREAMING", "checkpoint.direct"},
};

const KeySpec* FindSpec(const std::string& key) {
  for (const auto& s : Specs())
    if (s.info.key == key) return &s;
  return nullptr;
}

std::string ValidKeys() {
  std::string out;
  for (const auto& s : Specs()) out += (out.empty() ? "" : ", ") + s.info.key;
  return out;
}

// Flattens {"checkpoint": {"dir": "x"}} into "checkpoint.dir" -> "x".
// Every leaf of the file as "section.name" -> its text; nullopt for a value that is no string,
// integer or bool (an array, null, a fraction): an error for a key of ours, nothing for one
// that is ignored.
void FlattenJson(const nlohmann::json& j, const std::string& prefix,
                 std::map<std::string, std::optional<std::string>>* out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    const auto& v = it.value();
    if (v.is_object()) FlattenJson(v, key, out);
    else if (v.is_string()) (*out)[key] = v.get<std::string>();
    else if (v.is_boolean()) (*out)[key] = v.get<bool>() ? "1" : "0";
    else if (v.is_number_integer()) (*out)[key] = v.dump();
    else (*out)[key] = std::nullopt;
  }
}

}  // namespace

uint64_t StreamMemoryOf(const NodeConfig& node) {
  return (static_cast<uint64_t>(node.checkpoint_memory_limit_mib) << 20) / 2;
}

const std::vector<ConfigKeyInfo>& ConfigKeys() {
  static const std::vector<ConfigKeyInfo> keys = [] {
    std::vector<ConfigKeyInfo> k;
    for (const auto& s : Specs()) k.push_back(s.info);
    return k;
  }();
  return keys;
}

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

std::string ConfigPath(const std::map<std::string, std::string>& env) {
  auto it = env.find("CEDANA_CONFIG");
  return it != env.end() && !it->second.empty() ? it->second : kDefaultConfigPath;
}

namespace {

// Defaults < file < environment < overrides. `file_text` is null when there is no file to
// read; `origin` names it.
Result<LoadedConfig> BuildConfig(const std::string_view* file_text, const std::string& origin,
                                 const std::map<std::string, std::string>& env,
                                 const std::map<std::string, std::string>& overrides) {
  LoadedConfig loaded;
  std::map<std::string, std::string> origin_of;
  bool strict = false;  // the file's "strict": true makes an unknown key an error

  // A key of ours, or one of Cedana's aliases of ours (common/cedana_config_compat.h), with
  // its value in our spelling or Cedana's. An unknown key is an error when `unknown_is_error`
  // (a flag, or the file with "strict"), else a warning.
  auto apply = [&](const std::string& key, const std::optional<std::string>& value,
                   const std::string& from, bool unknown_is_error) -> Status {
    const KeySpec* spec = FindSpec(key);
    std::string note;
    if (spec == nullptr)
      if (std::optional<std::string_view> ours = OurKeyForCedanaKey(key)) {
        spec = FindSpec(std::string(*ours));
        note = "Cedana's " + key;
      }
    for (const FormerName& f : kFormerNames)
      if (spec == nullptr && key == f.key) {
        spec = FindSpec(std::string(f.now));
        note = "former name " + key;
        loaded.warnings.push_back(fmt::format(
            "config key {} in {} is now called {}; please rename it", key, from, f.now));
      }
    if (spec == nullptr) {
      if (unknown_is_error)
        return InvalidArgumentError(fmt::format("unknown config key \"{}\" in {} (valid keys: {})",
                                                key, from, ValidKeys()));
      loaded.warnings.push_back(fmt::format(
          "ignoring config key \"{}\" in {}: this cedana has no such key (`cedana config show` "
          "lists them; \"strict\": true in the file makes this an error)",
          key, from));
      return OkStatus();
    }
    if (!value)
      return InvalidArgumentError(
          fmt::format("config key {} in {}: expected a string, integer or bool", key, from));
    std::string text = *value;
    if (std::optional<MappedValue> mapped = OurValueForCedanaSpelling(spec->info.key, text)) {
      text = mapped->value;
      note += (note.empty() ? "" : ", ") + mapped->note;
    }
    CEDANA_RETURN_IF_ERROR(spec->set(loaded.config, text)) << "from " << from;
    origin_of[spec->info.key] = note.empty() ? from : from + " (" + note + ")";
    return OkStatus();
  };

  if (file_text != nullptr) {
    Result<nlohmann::json> parsed = ParseBoundedJson(*file_text);
    if (!parsed.has_value()) return std::move(parsed).error().WithContext("config file " + origin);
    nlohmann::json j = std::move(parsed).value();
    if (!j.is_object())
      return InvalidArgumentError("config file " + origin + " is not a JSON object");
    if (auto it = j.find("strict"); it != j.end()) {
      if (!it->is_boolean())
        return InvalidArgumentError("config file " + origin + ": \"strict\" must be true or false");
      strict = it->get<bool>();
      j.erase(it);
    }
    std::map<std::string, std::optional<std::string>> flat;
    FlattenJson(j, "", &flat);
    for (const auto& [k, v] : flat) CEDANA_RETURN_IF_ERROR(apply(k, v, "file " + origin, strict));
  }
  for (const auto& s : Specs()) {
    std::vector<std::string> names = {s.info.env};
    names.insert(names.end(), s.info.env_aliases.begin(), s.info.env_aliases.end());
    for (const CedanaKeyAlias& a : CedanaKeyAliases())
      if (a.ours == s.info.key && !a.env.empty()) names.emplace_back(a.env);
    for (const FormerName& f : kFormerNames)
      if (f.now == s.info.key) names.emplace_back(f.env);
    for (const std::string& name : names) {
      auto it = env.find(name);
      if (it == env.end()) continue;
      for (const FormerName& f : kFormerNames)
        if (name == f.env)
          loaded.warnings.push_back(fmt::format(
              "environment variable {} is now called {}; please rename it", name, s.info.env));
      CEDANA_RETURN_IF_ERROR(apply(s.info.key, it->second, "env " + name, true));
      break;
    }
  }
  for (const auto& [k, v] : overrides) CEDANA_RETURN_IF_ERROR(apply(k, v, "flag", true));

  for (const auto& s : Specs()) {
    std::string value = s.get(loaded.config);
    if (s.secret && !value.empty()) value = "(set, " + std::to_string(value.size()) + " chars)";
    auto it = origin_of.find(s.info.key);
    loaded.sources.push_back(
        {s.info.key, s.info.env, value, it == origin_of.end() ? "default" : it->second});
  }
  return loaded;
}

}  // namespace

Result<LoadedConfig> LoadConfigText(std::string_view text, const std::string& origin,
                                    const std::map<std::string, std::string>& env,
                                    const std::map<std::string, std::string>& overrides) {
  return BuildConfig(&text, origin, env, overrides);
}

Result<LoadedConfig> LoadConfig(const std::string& path,
                                const std::map<std::string, std::string>& env,
                                const std::map<std::string, std::string>& overrides,
                                bool require_file) {
  Result<std::string> file =
      fs::Exists(path) ? fs::ReadFile(path) : Result<std::string>(NotFoundError(path));
  // The file holds secrets and is root's (0600); a non-root client (the CLI, the job proxy)
  // needs none of them and runs on defaults and its environment.
  bool unreadable =
      !file.has_value() && file.error().code() == Code::kPermissionDenied && ::geteuid() != 0;
  if (fs::Exists(path) && !unreadable) {
    CEDANA_ASSIGN_OR_RETURN(std::string text, std::move(file));
    return LoadConfigText(text, path, env, overrides);
  }
  if (require_file)
    return NotFoundError("config file " + path +
                         " does not exist (create it with `cedana version --init-config`)");
  return BuildConfig(nullptr, path, env, overrides);
}

std::string ConfigToJson(const Config& config) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& s : Specs()) {
    const std::string& key = s.info.key;
    size_t dot = key.find('.');
    std::string section = key.substr(0, dot), name = key.substr(dot + 1);
    const std::string value = s.get(config);
    switch (s.kind) {
      case JsonKind::kInteger: j[section][name] = std::stol(value); break;
      case JsonKind::kBool: j[section][name] = value == "1"; break;
      case JsonKind::kString: j[section][name] = value; break;
    }
  }
  return j.dump(2) + "\n";
}

}  // namespace cedana
