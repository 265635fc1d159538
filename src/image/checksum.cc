#include "image/checksum.h"

#include <blake3.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdlib>

#include "common/hex.h"

namespace cedana::image {

struct Hasher::Blake3 {
  blake3_hasher state;
};

std::string DigestHex(Digest digest, std::string_view data) {
  Hasher hasher(digest);
  hasher.Update(data.data(), data.size());
  return hasher.FinalHex();
}

std::string Sha256Hex(std::string_view data) { return DigestHex(Digest::kSha256, data); }

Hasher::Hasher(Digest digest) {
  if (digest == Digest::kBlake3) {
    blake3_ = std::make_unique<Blake3>();
    blake3_hasher_init(&blake3_->state);
    return;
  }
  sha256_ = EVP_MD_CTX_new();
  // Allocation failure here means the process is out of memory; nothing sensible to return.
  if (sha256_ == nullptr || EVP_DigestInit_ex(sha256_, EVP_sha256(), nullptr) != 1) std::abort();
}

Hasher::~Hasher() { EVP_MD_CTX_free(sha256_); }

void Hasher::Update(const void* data, size_t size) {
  if (size == 0) return;
  if (blake3_) {
    blake3_hasher_update(&blake3_->state, data, size);
  } else {
    EVP_DigestUpdate(sha256_, data, size);
  }
}

std::string Hasher::FinalHex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = BLAKE3_OUT_LEN;
  if (blake3_) {
    blake3_hasher_finalize(&blake3_->state, digest, len);
  } else {
    EVP_DigestFinal_ex(sha256_, digest, &len);
  }
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), len));
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
