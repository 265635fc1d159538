// The node daemons that reported, and when last. Thread-safe (Database is).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "controller/catalog/database.h"
#include "controller/catalog/records.h"

namespace cedana::controller {

class NodeTable {
 public:
  explicit NodeTable(Database& db) : db_(db) {}

  Status Touch(const std::string& name, const std::string& version);
  Result<std::vector<NodeRecord>> List();

 private:
  Database& db_;
};

}  // namespace cedana::controller
