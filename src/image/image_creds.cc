#include "image/image_creds.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/system_names.h"

namespace cedana::image {
namespace {

constexpr uint32_t kImgCommonMagic = 0x54564319;
constexpr uint32_t kCoreMagic = 0x55053847;
// Field numbers in CRIU's images/core.proto and creds.proto.
constexpr uint32_t kCoreTaskCore = 3;      // core_entry.tc
constexpr uint32_t kCoreIds = 4;           // core_entry.ids (task_kobj_ids_entry)
constexpr uint32_t kIdsFirstNs = 5;        // pid_ns_id .. time_ns_id are fields 5 to 12
constexpr uint32_t kCoreThreadCore = 5;    // core_entry.thread_core
constexpr uint32_t kThreadCoreCreds = 10;  // thread_core_entry.creds
constexpr uint32_t kTaskCoreState = 1;     // task_core_entry.task_state
constexpr uint64_t kTaskDead = 2;          // CRIU's TASK_DEAD: a zombie

// A protobuf field: its number, wire type, and value (varint or bytes).
struct Field {
  uint32_t number = 0;
  int wire = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      auto b = static_cast<uint8_t>(data_[pos_++]);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  bool Next(Field* f) {
    uint64_t key = 0;
    if (!Varint(&key)) return false;
    f->number = static_cast<uint32_t>(key >> 3);
    f->wire = static_cast<int>(key & 7);
    switch (f->wire) {
      case 0: return Varint(&f->varint);
      case 1: return Skip(8);
      case 5: return Skip(4);
      case 2: {
        uint64_t len = 0;
        if (!Varint(&len) || len > data_.size() - pos_) return false;
        f->bytes = data_.substr(pos_, len);
        pos_ += len;
        return true;
      }
      default: return false;  // groups (3, 4) are not used by CRIU's protos
    }
  }

 private:
  bool Skip(size_t n) {
    if (n > data_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  std::string_view data_;
  size_t pos_ = 0;
};

// The first field `number` of wire type `wire` in a message, if any.
bool FindField(std::string_view msg, uint32_t number, int wire, Field* out) {
  Reader r(msg);
  while (!r.done()) {
    if (!r.Next(out)) return false;
    if (out->number == number && out->wire == wire) return true;
  }
  return false;
}

// The first length-delimited field `number` of a message, if any.
bool SubMessage(std::string_view msg, uint32_t number, std::string_view* out) {
  Field f;
  if (!FindField(msg, number, 2, &f)) return false;
  *out = f.bytes;
  return true;
}

// A zombie: CRIU dumps it without a parasite, so its core image has no credentials, and a
// restore recreates it only to exit at once.
bool IsZombie(std::string_view core) {
  std::string_view tc;
  Field state;
  return SubMessage(core, kCoreTaskCore, &tc) && FindField(tc, kTaskCoreState, 0, &state) &&
         state.varint == kTaskDead;
}

// Values of a repeated uint32 field, packed (wire 2) or not (wire 0).
void AddRepeated(const Field& f, std::vector<uint32_t>* out) {
  if (f.wire == 0) {
    out->push_back(static_cast<uint32_t>(f.varint));
    return;
  }
  if (f.wire != 2) return;
  Reader packed(f.bytes);
  uint64_t v = 0;
  while (!packed.done() && packed.Varint(&v)) out->push_back(static_cast<uint32_t>(v));
}

bool ParseCreds(std::string_view msg, TaskCreds* c) {
  Reader r(msg);
  Field f;
  std::vector<uint32_t> caps;
  while (!r.done()) {
    if (!r.Next(&f)) return false;
    auto v = static_cast<uint32_t>(f.varint);
    switch (f.number) {
      case 1: c->uid = v; break;
      case 2: c->gid = v; break;
      case 3: c->euid = v; break;
      case 4: c->egid = v; break;
      case 5: c->suid = v; break;
      case 6: c->sgid = v; break;
      case 7: c->fsuid = v; break;
      case 8: c->fsgid = v; break;
      case 9:
      case 10:
      case 11:
      case 19: AddRepeated(f, &caps); break;  // inh, prm, eff, amb
      case 14: AddRepeated(f, &c->groups); break;
      default: break;
    }
  }
  c->has_capabilities = std::any_of(caps.begin(), caps.end(), [](uint32_t w) { return w != 0; });
  return true;
}

uint32_t U32(std::string_view s, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, s.data() + at, 4);
  return v;  // little-endian on the machines CRIU runs on here (x86_64)
}

// The credentials of one task; nullopt for a zombie, which has none.
Result<std::optional<TaskCreds>> ParseCoreImage(const std::string& name, std::string_view img) {
  auto bad = [&](const std::string& why) {
    return InternalError(fmt::format("CRIU image {}: {}", name, why));
  };
  if (img.size() < 12 || U32(img, 0) != kImgCommonMagic || U32(img, 4) != kCoreMagic)
    return bad("not a CRIU core image (magic)");
  uint32_t size = U32(img, 8);
  if (size > img.size() - 12) return bad("entry runs past the end of the file");
  std::string_view core = img.substr(12, size), thread, creds;
  TaskCreds c;
  c.image = name;
  if (std::string_view ids; SubMessage(core, kCoreIds, &ids)) {
    for (uint32_t i = 0; i < c.namespaces.size(); ++i) {
      Field f;
      if (FindField(ids, kIdsFirstNs + i, 0, &f)) c.namespaces[i] = static_cast<uint32_t>(f.varint);
    }
  }
  if (!SubMessage(core, kCoreThreadCore, &thread) ||
      !SubMessage(thread, kThreadCoreCreds, &creds) || !ParseCreds(creds, &c)) {
    if (IsZombie(core)) return std::optional<TaskCreds>();
    return bad("no credentials in the thread's core entry");
  }
  return std::optional<TaskCreds>(std::move(c));
}

}  // namespace

Result<std::vector<TaskCreds>> ReadImageCreds(const std::string& images_dir) {
  CEDANA_ASSIGN_OR_RETURN(std::vector<std::string> names, fs::ListDir(images_dir));
  std::vector<TaskCreds> out;
  for (const std::string& n : names) {
    if (n.rfind("core-", 0) != 0 || n.size() < 9 || n.compare(n.size() - 4, 4, ".img") != 0)
      continue;
    CEDANA_ASSIGN_OR_RETURN(std::string data, fs::ReadFile(images_dir + "/" + n));
    CEDANA_ASSIGN_OR_RETURN(std::optional<TaskCreds> c, ParseCoreImage(n, data));
    if (c) out.push_back(std::move(*c));
  }
  if (out.empty()) return InternalError("no core-*.img in " + images_dir + ": not a CRIU dump");
  return out;
}

Status CheckCredsOfOwner(const std::vector<TaskCreds>& tasks, uid_t owner_uid, gid_t owner_gid,
                         const std::vector<gid_t>& owner_groups) {
  if (owner_uid == 0) return OkStatus();
  auto owners = [&](uint32_t g) {
    return g == owner_gid ||
           std::find(owner_groups.begin(), owner_groups.end(), g) != owner_groups.end();
  };
  static constexpr const char* kNamespaces[] = {"pid", "net",  "ipc",    "uts",
                                                "mnt", "user", "cgroup", "time"};
  for (const TaskCreds& t : tasks) {
    for (uint32_t u : {t.uid, t.euid, t.suid, t.fsuid})
      if (u != owner_uid)
        return PermissionDeniedError(fmt::format(
            "{} runs with uid {} (a setuid program?), not its owner's {}: a checkpoint of it would "
            "give the owner that identity back on restore",
            t.image, u, owner_uid));
    for (uint32_t g : {t.gid, t.egid, t.sgid, t.fsgid})
      if (!owners(g))
        return PermissionDeniedError(fmt::format(
            "{} runs with gid {} (a setgid program?), which is not one of its owner's groups",
            t.image, g));
    for (uint32_t g : t.groups)
      if (!owners(g))
        return PermissionDeniedError(fmt::format(
            "{} holds supplementary group {}, which its owner is not in (now)", t.image, g));
    for (size_t i = 0; i < t.namespaces.size(); ++i)
      if (t.namespaces[i] != tasks.front().namespaces[i])
        return PermissionDeniedError(fmt::format(
            "{} is in a {} namespace of its own (the tree made one): a restore would create it "
            "as root",
            t.image, kNamespaces[i]));
    if (t.has_capabilities)
      return PermissionDeniedError(fmt::format(
          "{} holds capabilities (a program with file capabilities?) that its owner does not have",
          t.image));
  }
  return OkStatus();
}

Status CheckImagesOwnedBy(const std::string& images_dir, uid_t owner_uid, gid_t owner_gid) {
  // Root's trees may hold any identity, so there is nothing to check; not parsing the images
  // also keeps a dump shape CRIU writes that we do not know yet from failing root's dumps.
  if (owner_uid == 0) return OkStatus();
  CEDANA_ASSIGN_OR_RETURN(std::vector<TaskCreds> tasks, ReadImageCreds(images_dir));
  return CheckCredsOfOwner(tasks, owner_uid, owner_gid, GroupsOf(owner_uid, owner_gid));
}

}  // namespace cedana::image
