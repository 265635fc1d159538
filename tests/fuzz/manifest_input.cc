#include <string>

#include "fuzz_input.h"
#include "image/manifest.h"

namespace cedana::fuzz {
namespace {
// A cluster key of the length ReadClusterKey accepts.
constexpr std::string_view kClusterKey = "0123456789abcdef0123456789abcdef";
}  // namespace

void RunManifestInput(std::string_view input) {
  Result<image::Manifest> parsed = image::ParseManifest(input);
  if (!parsed.has_value()) {
    CEDANA_FUZZ_CHECK(parsed.error().code() == Code::kInvalidArgument);
    return;
  }
  // What restore and `checkpoints` do with a manifest read from storage.
  Status verified = image::VerifyManifest(*parsed, kClusterKey);
  CEDANA_FUZZ_CHECK(verified.ok() || verified.code() == Code::kPermissionDenied);
  (void)parsed->StoredBytes();

  // The daemon signs, writes, and later re-reads and verifies: text and MAC must survive that.
  image::Manifest signed_manifest = *parsed;
  image::SignManifest(&signed_manifest, kClusterKey);
  CEDANA_FUZZ_CHECK(image::VerifyManifest(signed_manifest, kClusterKey).ok());
  std::string written = image::ManifestToJson(signed_manifest);
  Result<image::Manifest> reread = image::ParseManifest(written);
  CEDANA_FUZZ_CHECK(reread.has_value());
  CEDANA_FUZZ_CHECK(image::ManifestToJson(*reread) == written);
  CEDANA_FUZZ_CHECK(image::VerifyManifest(*reread, kClusterKey).ok());
}

}  // namespace cedana::fuzz
