#include "controller/catalog/token_table.h"

#include <fmt/format.h>
#include <openssl/rand.h>

#include "common/hex.h"
#include "image/checksum.h"

namespace cedana::controller {
namespace {

std::string HashToken(const std::string& token) { return image::Sha256Hex(token); }

}  // namespace

Result<std::pair<int64_t, std::string>> TokenTable::Create(const std::string& user, bool admin) {
  unsigned char raw[24];
  if (RAND_bytes(raw, sizeof raw) != 1) return InternalError("no random bytes for a token");
  std::string token =
      "cdn_" + HexEncode(std::string_view(reinterpret_cast<const char*>(raw), sizeof raw));
  CEDANA_ASSIGN_OR_RETURN(
      auto rows,
      db_.Query("INSERT INTO tokens (hash, user_name, is_admin, created_ms) VALUES (?, ?, ?, ?) "
                "RETURNING id",
                {HashToken(token), user, int64_t{admin}, NowMs()}));
  return std::make_pair(rows.at(0).Int(0), token);
}

Result<TokenRecord> TokenTable::Find(const std::string& token) {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows, db_.Query("SELECT id, user_name, is_admin, created_ms FROM tokens WHERE hash = ?",
                           {HashToken(token)}));
  if (rows.empty()) return NotFoundError("unknown token");
  return TokenRecord{rows[0].Int(0), rows[0].Text(1), rows[0].Int(2) != 0, rows[0].Int(3)};
}

Result<std::vector<TokenRecord>> TokenTable::List() {
  CEDANA_ASSIGN_OR_RETURN(
      auto rows, db_.Query("SELECT id, user_name, is_admin, created_ms FROM tokens ORDER BY id"));
  std::vector<TokenRecord> out;
  for (const auto& r : rows) out.push_back({r.Int(0), r.Text(1), r.Int(2) != 0, r.Int(3)});
  return out;
}

Status TokenTable::Delete(int64_t id) {
  CEDANA_ASSIGN_OR_RETURN(auto rows,
                          db_.Query("DELETE FROM tokens WHERE id = ? RETURNING id", {id}));
  if (rows.empty()) return NotFoundError(fmt::format("token {} not found", id));
  return OkStatus();
}

}  // namespace cedana::controller
