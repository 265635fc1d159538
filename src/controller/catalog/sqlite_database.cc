// SQLite driver of Database.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include <mutex>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/unique_fd.h"
#include "controller/catalog/database.h"

namespace cedana::controller {
namespace {

class SqliteDatabase : public Database {
 public:
  explicit SqliteDatabase(sqlite3* db) : db_(db) {}
  ~SqliteDatabase() override { sqlite3_close_v2(db_); }

  std::string Driver() const override { return "sqlite"; }

  Result<std::vector<SqlRow>> Query(std::string_view sql,
                                    const std::vector<SqlValue>& params) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
        SQLITE_OK)
      return InternalError(fmt::format("sqlite: {} in: {}", sqlite3_errmsg(db_), sql));
    struct Finalize {
      sqlite3_stmt* s;
      ~Finalize() { sqlite3_finalize(s); }
    } finalize{stmt};
    for (size_t i = 0; i < params.size(); ++i) {
      int index = static_cast<int>(i) + 1;
      const SqlValue& v = params[i];
      if (std::holds_alternative<int64_t>(v)) {
        sqlite3_bind_int64(stmt, index, std::get<int64_t>(v));
      } else if (std::holds_alternative<std::string>(v)) {
        const auto& s = std::get<std::string>(v);
        sqlite3_bind_text(stmt, index, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      } else {
        sqlite3_bind_null(stmt, index);
      }
    }
    std::vector<SqlRow> rows;
    for (;;) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        int ext = sqlite3_extended_errcode(db_);
        std::string msg = fmt::format("sqlite: {}", sqlite3_errmsg(db_));
        if (ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY)
          return AlreadyExistsError(msg);
        if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) return UnavailableError(msg);
        return InternalError(fmt::format("{} in: {}", msg, sql));
      }
      SqlRow row;
      int n = sqlite3_column_count(stmt);
      for (int c = 0; c < n; ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
          row.cells.emplace_back(std::nullopt);
        } else {
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
          row.cells.emplace_back(std::string(text, sqlite3_column_bytes(stmt, c)));
        }
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Status ExecScript(std::string_view sql) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    std::string script = "BEGIN;\n" + std::string(sql) + "\nCOMMIT;";
    char* err = nullptr;
    if (sqlite3_exec(db_, script.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
      return InternalError("sqlite: " + msg);
    }
    return OkStatus();
  }

 private:
  sqlite3* db_;
};

}  // namespace

Result<std::unique_ptr<Database>> OpenSqlite(const std::string& path) {
  if (path != ":memory:") {
    std::string dir = path.substr(0, path.rfind('/'));
    if (!dir.empty()) CEDANA_RETURN_IF_ERROR(fs::MakeDirs(dir)) << "catalog database " << path;
  }
  if (path != ":memory:") {
    // Tokens' hashes, users and every checkpoint's metadata: readable by the controller only.
    // SQLite gives its -wal and -shm files the database file's mode.
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid())
      return UnavailableError(
          fmt::format("opening catalog database {}: {}", path, std::strerror(errno)));
    if (::fchmod(fd.get(), 0600) != 0)
      return UnavailableError(
          fmt::format("making catalog database {} 0600: {}", path, std::strerror(errno)));
  }
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    return UnavailableError(fmt::format("opening catalog database {}: {}", path, msg));
  }
  // WAL: readers (the API) do not wait for the writer (watchers); busy_timeout covers the rest.
  sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000;",
               nullptr, nullptr, nullptr);
  return std::unique_ptr<Database>(std::make_unique<SqliteDatabase>(db));
}

}  // namespace cedana::controller
