// Checksums of checkpoint data: the streams' digest (StreamHasher: BLAKE3 for new checkpoints,
// SHA-256 in older ones; hex in the manifest), SHA-256 (chunk names, the chunk index) and
// HMAC-SHA256 (the manifest MAC keyed with the cluster key). The hashers are not thread-safe
// (one user per object); the free functions are.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
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

// BLAKE3 with a 256-bit output: a cryptographic hash that runs 2.5x as fast as SHA-256 (with
// SHA-NI) on one core of the machines we measure on, since it hashes 16 blocks at once with
// AVX-512. Restores hash every stored byte, so this is CPU they do not take from CRIU.
class Blake3 {
 public:
  Blake3();
  ~Blake3();
  Blake3(const Blake3&) = delete;
  Blake3& operator=(const Blake3&) = delete;

  void Update(const void* data, size_t size);
  // Lowercase hex of the digest (64 chars). Call once; the object is then spent.
  std::string FinalHex();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Which digest a checkpoint's streams (and their heads) carry; its name is the manifest's key.
enum class StreamDigest { kSha256, kBlake3 };
// What new checkpoints use.
inline constexpr StreamDigest kNewStreamDigest = StreamDigest::kBlake3;

std::string_view StreamDigestName(StreamDigest digest);  // "sha256", "blake3"
std::optional<StreamDigest> ParseStreamDigest(std::string_view name);

// A streaming digest of the algorithm given.
class StreamHasher {
 public:
  explicit StreamHasher(StreamDigest digest);
  void Update(const void* data, size_t size);
  // Lowercase hex of the digest (64 chars). Call once; the object is then spent.
  std::string FinalHex();

 private:
  std::unique_ptr<Sha256> sha256_;
  std::unique_ptr<Blake3> blake3_;
};

std::string Sha256Hex(std::string_view data);
std::string Blake3Hex(std::string_view data);
// Lowercase hex HMAC-SHA256 of `data` keyed with `key`.
std::string HmacSha256Hex(std::string_view key, std::string_view data);
// Compares in time independent of where the strings differ (for MACs).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace cedana::image
