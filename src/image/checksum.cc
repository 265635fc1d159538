#include "image/checksum.h"

#include <blake3.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdlib>

#include "common/hex.h"

namespace cedana::image {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  // Allocation failure here means the process is out of memory; nothing sensible to return.
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) std::abort();
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::Update(const void* data, size_t size) {
  if (size > 0) EVP_DigestUpdate(ctx_, data, size);
}

std::string Sha256::FinalHex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_, digest, &len);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), len));
}

std::string Sha256Hex(std::string_view data) {
  Sha256 sha;
  sha.Update(data.data(), data.size());
  return sha.FinalHex();
}

struct Hasher::Blake3 {
  blake3_hasher state;
};

std::string Blake3Hex(std::string_view data) {
  Hasher hasher(Digest::kBlake3);
  hasher.Update(data.data(), data.size());
  return hasher.FinalHex();
}

std::string DigestHex(Digest digest, std::string_view data) {
  return digest == Digest::kBlake3 ? Blake3Hex(data) : Sha256Hex(data);
}

std::string_view DigestName(Digest digest) {
  return digest == Digest::kBlake3 ? "blake3" : "sha256";
}

std::optional<Digest> ParseDigest(std::string_view name) {
  if (name == "blake3") return Digest::kBlake3;
  if (name == "sha256") return Digest::kSha256;
  return std::nullopt;
}

Hasher::Hasher(Digest digest) {
  if (digest == Digest::kBlake3) {
    blake3_ = std::make_unique<Blake3>();
    blake3_hasher_init(&blake3_->state);
  } else {
    sha256_ = std::make_unique<Sha256>();
  }
}

Hasher::~Hasher() = default;

void Hasher::Update(const void* data, size_t size) {
  if (size == 0) return;
  if (blake3_) {
    blake3_hasher_update(&blake3_->state, data, size);
  } else {
    sha256_->Update(data, size);
  }
}

std::string Hasher::FinalHex() {
  if (!blake3_) return sha256_->FinalHex();
  unsigned char digest[BLAKE3_OUT_LEN];
  blake3_hasher_finalize(&blake3_->state, digest, sizeof digest);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::string HmacSha256Hex(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(mac), len));
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace cedana::image
