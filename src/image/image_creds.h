// The credentials CRIU recorded for every task of a dump (core-<tid>.img: CoreEntry.thread_core
// .creds), read straight from the image files so that what is checked is exactly what a restore
// would recreate. A restore as root gives each task these credentials back, so a tree that held
// more privilege than its owner (a setuid or setgid program, file capabilities) must not become
// a checkpoint of that owner: a later restore would hand the owner a privileged process whose
// files and environment they control (docs/security.md, D8).
//
// The image format (CRIU 4.x): a u32 IMG_COMMON_MAGIC, a u32 image magic, then entries of a u32
// little-endian size followed by that many bytes of protobuf. Only the fields named here are
// read; everything else is skipped by wire type.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace cedana::image {

struct TaskCreds {
  std::string image;  // core-<tid>.img
  uint32_t uid = 0, gid = 0, euid = 0, egid = 0, suid = 0, sgid = 0, fsuid = 0, fsgid = 0;
  // Any bit in the permitted, effective, inheritable or ambient set. (The bounding set is no
  // privilege: it only limits what an exec can gain, and a restore cannot raise it.)
  bool has_capabilities = false;
  std::vector<uint32_t> groups;
  // CRIU's ids of the task's pid, net, ipc, uts, mnt, user, cgroup and time namespaces
  // (core_entry.ids; 0 when not recorded).
  std::array<uint32_t, 8> namespaces{};
};

// Every core-*.img of the images dir but zombies' (they have no credentials). kInternal for an
// image that does not parse (a CRIU whose format changed).
Result<std::vector<TaskCreds>> ReadImageCreds(const std::string& images_dir);

// For a non-root owner: every uid must be the owner's; every gid and every supplementary group
// the owner's primary group or one of `owner_groups` (the owner's groups now, not the task's
// own list); no task may hold capabilities; and every task must be in the same namespaces (one
// that made its own, which an unprivileged user can only do inside a user namespace, would have
// CRIU create namespaces as root). kPermissionDenied naming the first task that does not
// comply. Root owners may hold anything. no_new_privs and seccomp filters are restrictions,
// not privileges; CRIU restores both as dumped.
Status CheckCredsOfOwner(const std::vector<TaskCreds>& tasks, uid_t owner_uid, gid_t owner_gid,
                         const std::vector<gid_t>& owner_groups);

// Both of the above on a CRIU images dir, with the owner's groups from the system's group
// database: what a dump and a restore check.
Status CheckImagesOwnedBy(const std::string& images_dir, uid_t owner_uid, gid_t owner_gid);

}  // namespace cedana::image
