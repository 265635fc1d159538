#include "daemon/dump_rollback.h"

#include <signal.h>

#include "common/log.h"
#include "daemon/caller_files.h"
#include "image/chunk_sweep.h"

namespace cedana::daemon {

void DumpRollback::DeleteStored(DumpImages* images, storage::CheckpointStore* store,
                                storage::CheckpointRef ref, uid_t store_uid, gid_t store_gid) {
  images_ = images;
  store_ = store;
  ref_ = std::move(ref);
  store_uid_ = store_uid;
  store_gid_ = store_gid;
}

void DumpRollback::ContinueTree(pid_t root, bool network_locked, std::string dump_log) {
  stopped_root_ = root;
  network_locked_ = network_locked;
  dump_log_ = std::move(dump_log);
}

DumpRollback::~DumpRollback() {
  if (committed_) return;
  if (images_ != nullptr) images_->Abort();
  if (store_ != nullptr) {
    AsFileUser as_owner(store_uid_, store_gid_);
    if (Status s = image::RemoveCheckpoint(*store_, ref_); !s.ok())
      log::Warn("dump: checkpoint {} failed, and deleting what was stored of it failed too: {}",
                checkpoint_id_, s.ToString());
  }
  if (stopped_root_ == 0) return;
  // CRIU left the stopped tree's connections locked: the continued tree needs them.
  if (network_locked_)
    if (Status s = processes_.UndoNetworkLock(dump_log_, stopped_root_); !s.ok())
      log::Warn("dump: checkpoint {}: undoing CRIU's network lock: {}", checkpoint_id_,
                s.ToString());
  int n = processes_.SignalTree(stopped_root_, SIGCONT);
  log::Warn("dump: checkpoint {} failed; continued {} processes of pid {}", checkpoint_id_, n,
            stopped_root_);
}

}  // namespace cedana::daemon
