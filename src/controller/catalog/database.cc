#include "controller/catalog/database.h"

#include <fmt/format.h>

namespace cedana::controller {

int64_t SqlRow::Int(size_t i) const { return OptionalInt(i).value_or(0); }

std::optional<int64_t> SqlRow::OptionalInt(size_t i) const {
  const auto& cell = cells.at(i);
  if (!cell.has_value() || cell->empty()) return std::nullopt;
  try {
    return std::stoll(*cell);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Status Database::Transaction(const std::function<Status()>& body) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  CEDANA_RETURN_IF_ERROR(Exec("BEGIN"));
  Status s = body();
  if (s.ok()) s = Exec("COMMIT");
  if (!s.ok()) (void)Exec("ROLLBACK");
  return s;
}

Result<std::unique_ptr<Database>> OpenDatabase(const std::string& url) {
  constexpr std::string_view kSqlite = "sqlite://";
  if (url == "sqlite::memory:") return OpenSqlite(":memory:");
  if (url.rfind(kSqlite, 0) == 0) return OpenSqlite(url.substr(kSqlite.size()));
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0)
    return OpenPostgres(url);
  return InvalidArgumentError(
      fmt::format("database URL \"{}\" (valid: sqlite:///path/catalog.db, sqlite::memory:, "
                  "postgresql://user:password@host:port/dbname)",
                  url));
}

}  // namespace cedana::controller
