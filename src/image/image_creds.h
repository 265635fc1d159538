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

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace cedana::image {

struct TaskCreds {
  std::string image;  // core-<tid>.img
  uint32_t uid = 0, gid = 0, euid = 0, egid = 0, suid = 0, sgid = 0, fsuid = 0, fsgid = 0;
  bool has_capabilities = false;  // any bit in the permitted or effective set
  std::vector<uint32_t> groups;
};

// Every core-*.img of the images dir but zombies' (they have no credentials). kInternal for an
// image that does not parse (a CRIU whose format changed).
Result<std::vector<TaskCreds>> ReadImageCreds(const std::string& images_dir);

// For a non-root owner: every uid must be the owner's, every gid the owner's primary group or
// one of the task's supplementary groups, and no task may hold capabilities. kPermissionDenied
// naming the first task that does not comply. Root owners may hold anything.
Status CheckCredsOfOwner(const std::vector<TaskCreds>& tasks, uid_t owner_uid, gid_t owner_gid);

// Both of the above on a CRIU images dir: what a dump and a restore check.
Status CheckImagesOwnedBy(const std::string& images_dir, uid_t owner_uid, gid_t owner_gid);

}  // namespace cedana::image
