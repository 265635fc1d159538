// Config: the configuration of every cedana program (/etc/cedana/config.json,
// docs/configuration.md). Sections say who reads what: `node` is the node daemon's (and its job
// proxy's), `controller` the controller's, `s3` serves every program that opens a store
// (storage::OpenStore takes only it); the few keys more than one program reads are top-level
// members. The sections are the code's grouping; the file's keys are unchanged. Every
// key has an environment override; precedence is defaults < file < environment < command line.
// Parsed, validated, then frozen: the Config value is immutable once loaded and passed down
// explicitly. Every key is listed in docs/configuration.md (a test checks that they agree).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/codec_names.h"
#include "common/log.h"
#include "common/named_values.h"
#include "common/result.h"

namespace cedana {

inline constexpr const char* kDefaultConfigPath = "/etc/cedana/config.json";

// The settings that are one of a few words: the file and the environment spell them, the code
// sees the enum (the names, and so the valid values an error lists, are these tables).
// checkpoint.tcp: what a checkpoint does with a TCP connection to a peer outside the tree
// (daemon/tcp_policy.h).
enum class OutsideTcp { kRefuse, kEstablished, kClose };
inline constexpr NamedValue<OutsideTcp> kOutsideTcpNames[] = {
    {"refuse", OutsideTcp::kRefuse},
    {"established", OutsideTcp::kEstablished},
    {"close", OutsideTcp::kClose}};
// criu.no_breakpoints: CRIU's no-hardware-breakpoint fallback; auto probes at daemon start.
enum class BreakpointFallback { kAuto, kOn, kOff };
inline constexpr NamedValue<BreakpointFallback> kBreakpointFallbackNames[] = {
    {"auto", BreakpointFallback::kAuto},
    {"on", BreakpointFallback::kOn},
    {"off", BreakpointFallback::kOff}};
// s3.addressing: the bucket in the host name (virtual) or in the path; auto: virtual for AWS,
// path for other endpoints.
enum class S3Addressing { kAuto, kPath, kVirtual };
inline constexpr NamedValue<S3Addressing> kS3AddressingNames[] = {
    {"auto", S3Addressing::kAuto},
    {"path", S3Addressing::kPath},
    {"virtual", S3Addressing::kVirtual}};

// s3.*: credentials, endpoint and transfer settings of s3:// checkpoint dirs (docs/storage.md),
// read by every program that opens a store (storage/s3_client.h). Each also reads the AWS SDKs'
// usual environment variables.
struct S3Config {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  std::string region = "us-east-1";
  std::string endpoint_url;  // "" = AWS S3 of region
  S3Addressing addressing = S3Addressing::kAuto;
  int part_size_mib = 16;
  int max_attempts = 5;
};

// controller.* and db.url: the controller's own settings (src/controller).
struct ControllerConfig {
  // controller.listen (CEDANA_CONTROLLER_LISTEN): host:port of the controller's HTTP server.
  std::string listen = "0.0.0.0:8080";
  // controller.web_dir (CEDANA_CONTROLLER_WEB_DIR): the web UI's files.
  std::string web_dir = "/usr/local/share/cedana/web";
  // controller.maintenance_lead_seconds (CEDANA_MAINTENANCE_LEAD_SECONDS): how long before a
  // MAINT reservation starts its nodes' enabled jobs are checkpointed and requeued.
  int maintenance_lead_seconds = 60;
  // controller.bundle_dir (CEDANA_CONTROLLER_BUNDLE_DIR): <version>.tar.gz node bundles.
  std::string bundle_dir = "/usr/local/share/cedana/bundles";
  // db.url (CEDANA_DB_URL): the controller's catalog database (SQLite file or PostgreSQL URI).
  std::string db_url = "sqlite:///var/lib/cedana/catalog.db";
};

// The node daemon's own settings (checkpoint.*, criu.*, slurm.* and most of daemon.*), read on
// the node by the daemon and the job proxy; the controller and the CLI never need them.
struct NodeConfig {
  // checkpoint.streams (CEDANA_CHECKPOINT_STREAMS): streams per checkpoint, 1..64. Default 1.
  int checkpoint_streams = 1;
  // checkpoint.compression (CEDANA_CHECKPOINT_COMPRESSION): none|gzip|lz4|zstd. Default zstd.
  Codec checkpoint_compression = Codec::kZstd;
  // checkpoint.keep (CEDANA_CHECKPOINT_KEEP): newest checkpoints kept per label; 0 = all.
  int checkpoint_keep = 5;
  // checkpoint.direct (CEDANA_CHECKPOINT_DIRECT): direct dumps, CRIU's image files go straight
  // into the streams as CRIU writes them (CRIU's image streamer) instead of through an images
  // dir on disk. Default off (docs/architecture.md, *Direct dumps*: not faster end to end here,
  // and the workload stays frozen longer).
  bool checkpoint_direct = false;
  // checkpoint.dedup (CEDANA_CHECKPOINT_DEDUP): deduplicated checkpoints, the memory pages stored
  // as content-addressed chunks shared by a label's checkpoints (docs/storage.md); with
  // checkpoint.direct they are cut as CRIU hands them over. Default off.
  bool checkpoint_dedup = false;
  // checkpoint.memory_limit_mib (CEDANA_CHECKPOINT_MEMORY_LIMIT_MIB): the daemon's size during a
  // direct dump; 64 MiB of it (128 with dedup) are the daemon's own, half of it the S3 parts'
  // (StreamMemoryOf, in any dump or restore to or from S3), the rest buffers image data
  // (daemon/dump_images.cc). When that is full, CRIU waits (the workload stays frozen longer).
  // 64..65536, default 256.
  int checkpoint_memory_limit_mib = 256;
  // checkpoint.lz4_acceleration (CEDANA_CHECKPOINT_LZ4_ACCELERATION): lz4's fast mode for
  // checkpoints compressed with lz4 (image::CodecLevel): above 1 faster, storing more. 1..64,
  // default 1.
  int checkpoint_lz4_acceleration = 1;
  // checkpoint.parallel_dumps (CEDANA_CHECKPOINT_PARALLEL_DUMPS): most dumps at once on the node
  // (daemon/dump_queue.h); 0 = auto (four per core). 0..256.
  int checkpoint_parallel_dumps = 0;
  // checkpoint.tcp (CEDANA_CHECKPOINT_TCP): refuse|established|close, what a checkpoint does
  // with a TCP connection to a peer outside the tree (daemon/tcp_policy.h). Default refuse.
  OutsideTcp checkpoint_tcp = OutsideTcp::kRefuse;
  // checkpoint.work_dir (CEDANA_CHECKPOINT_WORK_DIR): local scratch for CRIU images dirs.
  std::string work_dir = "/var/lib/cedana/work";
  // daemon.state_dir (CEDANA_DAEMON_STATE_DIR): workload records (survive daemon restarts).
  std::string state_dir = "/run/cedana";
  // daemon.log_file (CEDANA_DAEMON_LOG_FILE): daemon log file, "" = stderr only.
  std::string log_file = "/var/log/cedana/daemon.log";
  // criu.binary (CEDANA_CRIU_BINARY): path of criu; "" = PATH, then /usr/local/bin/criu.
  std::string criu_binary;
  // criu.timeout_seconds (CEDANA_CRIU_TIMEOUT_SECONDS): deadline of one CRIU call, 1..86400.
  int criu_timeout_seconds = 120;
  // criu.no_breakpoints (CEDANA_CRIU_NO_BREAKPOINTS): auto|on|off. auto probes whether hardware
  // breakpoints work and, where they do not, runs CRIU with its no-breakpoint fallback.
  BreakpointFallback criu_no_breakpoints = BreakpointFallback::kAuto;
  // daemon.node_name (CEDANA_NODE_NAME): this node's name towards the controller; "" = host name.
  std::string node_name;
  // daemon.metrics_port (CEDANA_DAEMON_METRICS_PORT): port on 127.0.0.1 where the node daemon
  // serves GET /metrics (daemon/metrics_server.h); 0 = off (the default). 0..65535.
  int daemon_metrics_port = 0;
  // daemon.peer_port (CEDANA_DAEMON_PEER_PORT): port where the node daemon answers the other
  // nodes' daemons (daemon/peer_link.h), for jobs checkpointed over several nodes; the same on
  // every node. 0 = off. Default 6830.
  int daemon_peer_port = 6830;
  // slurm.unprivileged (CEDANA_SLURM_UNPRIVILEGED): dump/restore as the job's user. 0|1.
  bool slurm_unprivileged = false;
  // slurm.requeue_on_timeout (CEDANA_SLURM_REQUEUE_ON_TIMEOUT): the site allows jobs that ask
  // (CEDANA_REQUEUE_ON_TIMEOUT=1) to be requeued after their time-limit checkpoint. 0|1.
  bool slurm_requeue_on_timeout = false;
  // slurm.max_restarts (CEDANA_SLURM_MAX_RESTARTS): time-limit requeues per job at most.
  int slurm_max_restarts = 10;
  // slurm.timeout_margin_seconds (CEDANA_SLURM_TIMEOUT_MARGIN_SECONDS): the time-limit checkpoint
  // starts this long, plus the label's last checkpoint's duration, before the job's end time.
  int slurm_timeout_margin_seconds = 20;
};

// What the S3 part buffers of one checkpoint or restore may hold at once, shared by its streams
// (storage/part_budget.h): half of checkpoint.memory_limit_mib, two 16 MiB parts for each of 4
// streams with the defaults. The other half is the daemon's own and its compressors'; a direct
// dump's image buffers get what is left of the limit beside both (daemon/dump_images.cc).
uint64_t StreamMemoryOf(const NodeConfig& node);

// Every program's settings: what more than one program reads is here, the rest in its
// program's section.
struct Config {
  // connection.url (CEDANA_URL): the controller's base URL, e.g. http://ctl:8080/v1. "" = none.
  // Read by the CLI, `cedana check` and the node daemon's agent.
  std::string url;
  // connection.auth_token (CEDANA_AUTH_TOKEN): bearer token for the controller. Default "".
  std::string auth_token;
  // checkpoint.dir (CEDANA_CHECKPOINT_DIR): absolute path or s3://bucket/prefix. Read by every
  // program that lists, reads or writes checkpoints.
  std::string checkpoint_dir = "/var/lib/cedana/checkpoints";
  // daemon.socket (CEDANA_DAEMON_SOCKET): the node daemon's unix socket (the CLI and the job
  // proxy connect to it).
  std::string socket_path = "/run/cedana/cedana.sock";
  // daemon.log_level (CEDANA_LOG_LEVEL): debug|info|warn|error. Default info.
  log::Level log_level = log::Level::kInfo;
  // daemon.cluster_key_file (CEDANA_CLUSTER_KEY_FILE): root-only key that signs manifests (the
  // node daemon signs, the controller checks).
  std::string cluster_key_file = "/etc/cedana/cluster.key";
  NodeConfig node;
  ControllerConfig controller;
  S3Config s3;
};

// Where a value came from, for `cedana config show`.
struct ConfigSource {
  std::string key;     // "checkpoint.dir"
  std::string env;     // "CEDANA_CHECKPOINT_DIR"
  std::string value;   // as text (secrets masked)
  std::string origin;  // "default", "file <path>", "env CEDANA_X", "flag"
};

struct LoadedConfig {
  Config config;
  std::vector<ConfigSource> sources;
  // Keys the file has that this cedana ignores (Cedana's own that mean nothing here, typos):
  // the services log them at start and `cedana config show` prints them.
  std::vector<std::string> warnings;
};

// One entry of the key table: what docs/configuration.md must list.
struct ConfigKeyInfo {
  std::string key;
  std::string env;
  std::string valid;  // "none|gzip|lz4|zstd", "1..64", "absolute path or s3://bucket/prefix"
  std::string default_value;
  std::string doc;
  // Further environment variables read when `env` is unset, in this order (AWS_DEFAULT_REGION
  // after AWS_REGION).
  std::vector<std::string> env_aliases = {};
};
const std::vector<ConfigKeyInfo>& ConfigKeys();

// Builds the config from defaults, the JSON file at `path` (missing is fine unless
// `require_file`), the environment `env`, then `overrides` (key -> value, from flags).
// Cedana's keys and value spellings are read as ours (common/cedana_config_compat.h). A key of
// the file that is none of ours is a warning (LoadedConfig::warnings), or an error when the
// file says "strict": true. Errors: kInvalidArgument naming the key (or env var) and the valid
// values.
Result<LoadedConfig> LoadConfig(const std::string& path,
                                const std::map<std::string, std::string>& env,
                                const std::map<std::string, std::string>& overrides = {},
                                bool require_file = false);
// LoadConfig with the file's text given instead of read: `text` is the JSON file's content and
// `origin` names it in errors and sources (a path). The same parser LoadConfig uses, without
// file access, for tests and the fuzzer (tests/fuzz). Errors as LoadConfig; never throws on
// any text.
Result<LoadedConfig> LoadConfigText(std::string_view text, const std::string& origin,
                                    const std::map<std::string, std::string>& env,
                                    const std::map<std::string, std::string>& overrides = {});
// The process environment as a map.
std::map<std::string, std::string> ProcessEnvironment();
// The config file path: $CEDANA_CONFIG or /etc/cedana/config.json.
std::string ConfigPath(const std::map<std::string, std::string>& env);
// The JSON text of a config (nested sections), as `cedana version --init-config` writes it.
std::string ConfigToJson(const Config& config);

}  // namespace cedana
