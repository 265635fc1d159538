#include "controller/catalog/catalog.h"

#include "common/unix_time.h"

namespace cedana::controller {

int64_t NowMs() { return UnixMillis(); }

Catalog::Catalog(std::unique_ptr<Database> db)
    : db_(std::move(db)),
      tokens_(*db_),
      nodes_(*db_),
      jobs_(*db_),
      job_events_(*db_),
      checkpoints_(*db_),
      policies_(*db_),
      operations_(*db_),
      maintenance_(*db_) {}

}  // namespace cedana::controller
