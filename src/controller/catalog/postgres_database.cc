// PostgreSQL driver of Database (libpq). '?' placeholders become $1, $2, ...; the connection is
// re-established once when the server dropped it.
#include <libpq-fe.h>

#include <mutex>

#include <fmt/format.h>

#include "controller/catalog/database.h"

namespace cedana::controller {
namespace {

std::string NumberPlaceholders(std::string_view sql) {
  std::string out;
  int n = 0;
  bool in_string = false;
  for (char c : sql) {
    if (c == '\'') in_string = !in_string;
    if (c == '?' && !in_string) out += "$" + std::to_string(++n);
    else out += c;
  }
  return out;
}

class PostgresDatabase : public Database {
 public:
  PostgresDatabase(std::string conninfo, PGconn* conn)
      : conninfo_(std::move(conninfo)), conn_(conn) {}
  ~PostgresDatabase() override { PQfinish(conn_); }

  std::string Driver() const override { return "postgres"; }

  Result<std::vector<SqlRow>> Query(std::string_view sql,
                                    const std::vector<SqlValue>& params) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    CEDANA_RETURN_IF_ERROR(EnsureConnected());
    std::string text = NumberPlaceholders(sql);
    std::vector<std::string> storage(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      if (std::holds_alternative<int64_t>(params[i])) {
        storage[i] = std::to_string(std::get<int64_t>(params[i]));
        values[i] = storage[i].c_str();
      } else if (std::holds_alternative<std::string>(params[i])) {
        storage[i] = std::get<std::string>(params[i]);
        values[i] = storage[i].c_str();
      }
    }
    PGresult* res = PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), nullptr,
                                 values.data(), nullptr, nullptr, 0);
    struct Clear {
      PGresult* r;
      ~Clear() { PQclear(r); }
    } clear{res};
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) return ErrorOf(res, sql);
    std::vector<SqlRow> rows;
    int n = PQntuples(res), cols = PQnfields(res);
    for (int r = 0; r < n; ++r) {
      SqlRow row;
      for (int c = 0; c < cols; ++c) {
        if (PQgetisnull(res, r, c)) row.cells.emplace_back(std::nullopt);
        else row.cells.emplace_back(std::string(PQgetvalue(res, r, c), PQgetlength(res, r, c)));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Status ExecScript(std::string_view sql) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    CEDANA_RETURN_IF_ERROR(EnsureConnected());
    std::string script = "BEGIN;\n" + std::string(sql) + "\nCOMMIT;";
    PGresult* res = PQexec(conn_, script.c_str());
    Status s = PQresultStatus(res) == PGRES_COMMAND_OK ? OkStatus() : ErrorOf(res, "migration");
    PQclear(res);
    if (!s.ok()) PQclear(PQexec(conn_, "ROLLBACK"));
    return s;
  }

 private:
  Status EnsureConnected() {
    if (PQstatus(conn_) == CONNECTION_OK) return OkStatus();
    PQreset(conn_);
    if (PQstatus(conn_) == CONNECTION_OK) return OkStatus();
    return UnavailableError(fmt::format("postgres: {}", PQerrorMessage(conn_)));
  }

  Status ErrorOf(PGresult* res, std::string_view sql) {
    const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    std::string msg = fmt::format("postgres: {}", PQresultErrorMessage(res));
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    std::string code = state ? state : "";
    if (code == "23505") return AlreadyExistsError(msg);  // unique_violation
    if (code.rfind("08", 0) == 0 || PQstatus(conn_) != CONNECTION_OK) return UnavailableError(msg);
    return InternalError(fmt::format("{} in: {}", msg, sql));
  }

  const std::string conninfo_;
  PGconn* conn_;
};

}  // namespace

Result<std::unique_ptr<Database>> OpenPostgres(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = conn ? PQerrorMessage(conn) : "out of memory";
    PQfinish(conn);
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    return UnavailableError("connecting to the catalog database (postgres): " + msg);
  }
  PQclear(PQexec(conn, "SET client_min_messages TO WARNING"));
  return std::unique_ptr<Database>(std::make_unique<PostgresDatabase>(conninfo, conn));
}

}  // namespace cedana::controller
