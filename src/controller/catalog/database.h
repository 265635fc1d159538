// Database: the catalog's SQL connection, SQLite (one file, the default) or PostgreSQL (large
// sites). Statements use '?' placeholders whatever the driver; values travel as text, integers
// or NULL. One connection per Database, serialized by a mutex: the catalog's load is a few
// queries a second and a few transactions, far below what either engine does on one
// connection. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"

namespace cedana::controller {

using SqlValue = std::variant<std::monostate, int64_t, std::string>;
inline SqlValue SqlNull() { return std::monostate{}; }
template <typename T>
SqlValue SqlOptional(const std::optional<T>& v) {
  return v.has_value() ? SqlValue(*v) : SqlNull();
}

// One result row; columns in SELECT order, NULL as nullopt.
struct SqlRow {
  std::vector<std::optional<std::string>> cells;
  std::string Text(size_t i) const { return cells.at(i).value_or(""); }
  int64_t Int(size_t i) const;
  std::optional<int64_t> OptionalInt(size_t i) const;
};

class Database {
 public:
  virtual ~Database() = default;
  // "sqlite" or "postgres".
  virtual std::string Driver() const = 0;
  // Runs one statement. kAlreadyExists for a unique-constraint violation, kUnavailable when the
  // server cannot be reached, kInternal for SQL errors (our bug; the message names the statement,
  // for the log only).
  virtual Result<std::vector<SqlRow>> Query(std::string_view sql,
                                            const std::vector<SqlValue>& params = {}) = 0;
  Status Exec(std::string_view sql, const std::vector<SqlValue>& params = {}) {
    return Query(sql, params).error();
  }
  // Runs several statements (a migration) in one transaction.
  virtual Status ExecScript(std::string_view sql) = 0;
  // Runs `body`, whose statements go through this Database, as one transaction: committed when
  // it returns OK, rolled back otherwise. Other threads' statements wait until it ends. A sync of
  // 10,000 rows then costs one commit (one fsync) instead of 10,000.
  Status Transaction(const std::function<Status()>& body);

 protected:
  std::recursive_mutex mu_;  // one statement, or one transaction, at a time
};

// A listing's optional filter: " AND <column> = ?" with its value, when it has one.
template <typename T>
void AndEquals(std::string* sql, std::vector<SqlValue>* params, std::string_view column,
               const std::optional<T>& value) {
  if (!value) return;
  *sql += " AND " + std::string(column) + " = ?";
  params->push_back(*value);
}

// "sqlite:///var/lib/cedana/catalog.db", "sqlite::memory:", or a PostgreSQL URI
// ("postgresql://user@host/db", "postgres://..."). kInvalidArgument for another scheme.
Result<std::unique_ptr<Database>> OpenDatabase(const std::string& url);
Result<std::unique_ptr<Database>> OpenSqlite(const std::string& path);
Result<std::unique_ptr<Database>> OpenPostgres(const std::string& conninfo);

// Brings the schema to the newest version; versions already applied are skipped. Forward only.
Status Migrate(Database& db);
// The newest schema version this build knows.
int LatestSchemaVersion();

}  // namespace cedana::controller
