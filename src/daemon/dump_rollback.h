// DumpRollback: the one object that undoes a dump that did not commit, whichever step failed.
// Each step arms what it makes undoable; Committed() disarms everything; the destructor undoes
// what is armed, in this order: the image writer stops (its threads may still be writing), what
// was stored of the checkpoint is deleted, and a tree that CRIU left stopped gets its network
// lock undone and is continued. Before CRIU has returned there is no tree to continue: a CRIU
// that fails resumes the tree itself (engine/checkpoint_engine.h).
#pragma once

#include <sys/types.h>

#include <string>

#include "daemon/dump_images.h"
#include "engine/process_control.h"
#include "storage/checkpoint_store.h"

namespace cedana::daemon {

class DumpRollback {
 public:
  DumpRollback(engine::ProcessControl& processes, std::string checkpoint_id)
      : processes_(processes), checkpoint_id_(std::move(checkpoint_id)) {}
  ~DumpRollback();
  DumpRollback(const DumpRollback&) = delete;
  DumpRollback& operator=(const DumpRollback&) = delete;

  // What `images` may have put into `store` under `ref` is deleted, as the store's identity.
  void DeleteStored(DumpImages* images, storage::CheckpointStore* store, storage::CheckpointRef ref,
                    uid_t store_uid, gid_t store_gid);
  // The tree rooted at `root` was left stopped; `dump_log` names CRIU's network lock, if any.
  void ContinueTree(pid_t root, bool network_locked, std::string dump_log);
  void Committed() { committed_ = true; }

 private:
  engine::ProcessControl& processes_;
  const std::string checkpoint_id_;
  bool committed_ = false;
  DumpImages* images_ = nullptr;
  storage::CheckpointStore* store_ = nullptr;
  storage::CheckpointRef ref_;
  uid_t store_uid_ = 0;
  gid_t store_gid_ = 0;
  pid_t stopped_root_ = 0;
  bool network_locked_ = false;
  std::string dump_log_;
};

}  // namespace cedana::daemon
