// Checksums of checkpoint data: streaming SHA-256 (per-stream integrity, hex in the manifest)
// and HMAC-SHA256 (the manifest MAC keyed with the cluster key). Sha256 is not thread-safe (one
// user per object); the free functions are.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace cedana::image {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(const void* data, size_t size);
  // Lowercase hex of the digest (64 chars). Call once; the object is then spent.
  std::string FinalHex();

 private:
  EVP_MD_CTX* ctx_;
};

std::string Sha256Hex(std::string_view data);
// Lowercase hex HMAC-SHA256 of `data` keyed with `key`.
std::string HmacSha256Hex(std::string_view key, std::string_view data);
// Compares in time independent of where the strings differ (for MACs).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace cedana::image
