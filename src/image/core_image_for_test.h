// CoreImage: a CRIU core-<tid>.img holding only what image/image_creds.h reads (a task's
// credentials and namespace ids), for tests of the credential checks and of code that runs
// them (a fake CRIU engine). Test-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cedana::image::fixtures {

// A minimal protobuf encoder for the few fields the reader looks at.
inline std::string Varint(uint64_t v) {
  std::string s;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    s.push_back(static_cast<char>(v ? b | 0x80 : b));
  } while (v);
  return s;
}
inline std::string VarintField(uint32_t n, uint64_t v) { return Varint(n << 3) + Varint(v); }
inline std::string BytesField(uint32_t n, const std::string& b) {
  return Varint((n << 3) | 2) + Varint(b.size()) + b;
}
inline std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

struct Creds {
  uint32_t uid = 1000, gid = 1000;
  uint32_t euid = 1000, egid = 1000;
  std::vector<uint32_t> cap_eff, cap_inh, cap_amb;
  std::vector<uint32_t> groups;
  uint32_t net_ns = 0xf0000001;  // task_kobj_ids_entry.net_ns_id
};

inline std::string CoreImage(const Creds& c) {
  std::string creds = VarintField(1, c.uid) + VarintField(2, c.gid) + VarintField(3, c.euid) +
                      VarintField(4, c.egid) + VarintField(5, c.uid) + VarintField(6, c.gid) +
                      VarintField(7, c.uid) + VarintField(8, c.gid);
  for (uint32_t w : c.cap_inh) creds += VarintField(9, w);
  for (uint32_t w : c.cap_eff) creds += VarintField(11, w);
  for (uint32_t w : c.cap_amb) creds += VarintField(19, w);
  for (uint32_t g : c.groups) creds += VarintField(14, g);
  creds += VarintField(13, 0);
  // thread_core_entry: an unrelated field first, then creds (10); core_entry: mtype (1), then
  // thread_core (5).
  std::string thread = VarintField(1, 7) + BytesField(10, creds);
  // task_kobj_ids_entry (core_entry.ids, 4): vm, files, fs, sighand ids, then pid and net ns.
  std::string ids = VarintField(1, 1) + VarintField(2, 2) + VarintField(3, 3) + VarintField(4, 4) +
                    VarintField(5, 0xf0000000) + VarintField(6, c.net_ns);
  std::string core =
      VarintField(1, 1) + BytesField(2, "x86 stuff") + BytesField(4, ids) + BytesField(5, thread);
  return U32(0x54564319) + U32(0x55053847) + U32(static_cast<uint32_t>(core.size())) + core;
}

}  // namespace cedana::image::fixtures
