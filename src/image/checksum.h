// Checksums of checkpoint data: the digest of a checkpoint's streams and chunks (Digest:
// BLAKE3 for new checkpoints, SHA-256 in older ones; hex in the manifest and the chunk index),
// SHA-256 (the chunk index file, S3 payloads, tokens) and HMAC-SHA256 (the manifest MAC keyed
// with the cluster key). The hashers are not thread-safe (one user per object); the free
// functions are.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/named_values.h"

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace cedana::image {

// Which digest a checkpoint's streams (and their heads) carry, and names its chunks by; the
// manifest names it.
enum class Digest { kSha256, kBlake3 };
// What new checkpoints use: BLAKE3 with a 256-bit output, a cryptographic hash that runs 2.5x as
// fast as SHA-256 (with SHA-NI) on one core of the machines we measure on, since it hashes 16
// blocks at once with AVX-512. Restores hash every stored byte, so this is CPU they do not take
// from CRIU.
inline constexpr Digest kNewDigest = Digest::kBlake3;

inline constexpr NamedValue<Digest> kDigestNames[] = {{"sha256", Digest::kSha256},
                                                      {"blake3", Digest::kBlake3}};
inline std::string_view DigestName(Digest digest) { return NameOf(kDigestNames, digest); }
inline std::optional<Digest> ParseDigest(std::string_view name) {
  return ValueNamed(kDigestNames, name);
}

// A streaming digest of the algorithm given (SHA-256 by OpenSSL, with SHA-NI where the CPU has
// it).
class Hasher {
 public:
  explicit Hasher(Digest digest);
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void Update(const void* data, size_t size);
  // Lowercase hex of the digest (64 chars). Call once; the object is then spent.
  std::string FinalHex();

 private:
  struct Blake3;
  EVP_MD_CTX* sha256_ = nullptr;  // one of the two
  std::unique_ptr<Blake3> blake3_;
};

// Lowercase hex of the digest of `data`.
std::string DigestHex(Digest digest, std::string_view data);
std::string Sha256Hex(std::string_view data);
// Lowercase hex HMAC-SHA256 of `data` keyed with `key`.
std::string HmacSha256Hex(std::string_view key, std::string_view data);
// Compares in time independent of where the strings differ (for MACs).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace cedana::image
