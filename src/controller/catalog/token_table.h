// API tokens, stored hashed. Thread-safe (Database is).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "controller/catalog/database.h"
#include "controller/catalog/records.h"

namespace cedana::controller {

class TokenTable {
 public:
  explicit TokenTable(Database& db) : db_(db) {}

  // Returns the id and the token text, which is stored only hashed.
  Result<std::pair<int64_t, std::string>> Create(const std::string& user, bool admin);
  // kNotFound for an unknown token.
  Result<TokenRecord> Find(const std::string& token);
  Result<std::vector<TokenRecord>> List();
  Status Delete(int64_t id);  // kNotFound

 private:
  Database& db_;
};

}  // namespace cedana::controller
