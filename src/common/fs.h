// Small filesystem helpers that return Status instead of throwing. Stateless; thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace cedana::fs {

Result<std::string> ReadFile(const std::string& path);
// How far a write must have reached when WriteFileAtomic returns.
enum class Durability {
  kOnDisk,      // the file and its directory fsynced: it survives a machine crash
  kUntilCrash,  // left to the kernel's writeback: for records of processes, which a machine
                // crash ends anyway; an fsync under a restore's reads can wait a quarter second
};
// Writes `data` to a temporary file beside `path`, fsyncs it (kOnDisk), renames it over `path`
// and fsyncs the directory (kOnDisk): readers see the old content or the new one, never a part.
Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode = 0644,
                       Durability durability = Durability::kOnDisk);
// mkdir -p: the directories it creates get `mode`; existing ones keep theirs.
Status MakeDirs(const std::string& path, mode_t mode = 0755);
// rm -rf; a missing path is fine.
Status RemoveTree(const std::string& path);
// Names in a directory (no "." or ".."), sorted.
Result<std::vector<std::string>> ListDir(const std::string& path);
bool Exists(const std::string& path);
Status FsyncPath(const std::string& path);
// Whether `path` is on tmpfs or ramfs: what is written there takes memory.
bool IsInMemoryFileSystem(const std::string& path);
// Total bytes of the regular files under `path`.
Result<uint64_t> TreeSize(const std::string& path);
// openat2(dir, rel, flags) that follows no symlink anywhere on the way (and, with `beneath`,
// never leaves `dir`). An invalid fd with errno set on failure: ELOOP for a symlink, EXDEV for
// a path leaving `dir`.
int OpenNoSymlinks(int dir, const std::string& rel, int flags, bool beneath);

}  // namespace cedana::fs
