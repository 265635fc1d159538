// Catalog: what the controller knows, in its database, one table per kind of record: API tokens
// (hashed), node daemons, SLURM jobs (from libslurm, plus which of them a node daemon manages)
// and their events, the checkpoint index (a cache of the checkpoint storage, which stays the
// source of truth), policies, operations (dumps and restores the controller asked node daemons
// for) and maintenance windows. Typed queries over one Database; the same SQL runs on SQLite
// and PostgreSQL; a change of several statements is one transaction. Thread-safe (Database is).
#pragma once

#include <cstdint>
#include <memory>

#include "common/result.h"
#include "controller/catalog/checkpoint_index.h"
#include "controller/catalog/database.h"
#include "controller/catalog/job_event_log.h"
#include "controller/catalog/job_table.h"
#include "controller/catalog/maintenance_log.h"
#include "controller/catalog/node_table.h"
#include "controller/catalog/operation_table.h"
#include "controller/catalog/policy_table.h"
#include "controller/catalog/records.h"
#include "controller/catalog/token_table.h"

namespace cedana::controller {

class Catalog {
 public:
  // Takes a migrated database.
  explicit Catalog(std::unique_ptr<Database> db);
  Database& db() { return *db_; }

  TokenTable& tokens() { return tokens_; }
  NodeTable& nodes() { return nodes_; }
  JobTable& jobs() { return jobs_; }
  JobEventLog& job_events() { return job_events_; }
  CheckpointIndex& checkpoints() { return checkpoints_; }
  PolicyTable& policies() { return policies_; }
  OperationTable& operations() { return operations_; }
  MaintenanceLog& maintenance() { return maintenance_; }

  // The figures of /metrics, across the tables in one read (catalog_figures.cc); nodes seen at
  // or after `recent_since_ms` count as recent.
  Result<CatalogFigures> Figures(int64_t recent_since_ms);

 private:
  std::unique_ptr<Database> db_;  // before the tables, which hold a reference to it
  TokenTable tokens_;
  NodeTable nodes_;
  JobTable jobs_;
  JobEventLog job_events_;
  CheckpointIndex checkpoints_;
  PolicyTable policies_;
  OperationTable operations_;
  MaintenanceLog maintenance_;
};

}  // namespace cedana::controller
