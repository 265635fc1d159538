// UnpackToImagesDir: N stored streams -> CRIU's images dir, verifying every stored byte.
#include <fcntl.h>

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/checkpoint_streams.h"
#include "common/fs.h"
#include "image/chunk_unpack.h"
#include "image/pack.h"
#include "image/stream_group.h"
#include "image/stream_taps.h"
#include "image/tar.h"
#include "image/unpack_stream.h"

namespace cedana::image {
namespace {

// `seen`: what the stream's reader found first, for an admin looking for what was altered.
Status ChecksumMismatch(const Status& seen = OkStatus()) {
  if (seen.ok()) return AbortedError("checksum mismatch (stored data altered or truncated)");
  return AbortedError("checksum mismatch (stored data altered or truncated; first seen as: " +
                      seen.message() + ")");
}

bool Matches(HashingSource* stored, const StreamInfo& want) {
  return stored->bytes() == want.stored_bytes && stored->FinalHex() == want.digest;
}

// Reads `in` to its end: the tar reader stops at the first end-of-archive block, but the
// stored-bytes hash must see (and the decoder must check) every byte.
Status DrainToEnd(storage::ByteSource* in) {
  std::vector<char> buf(64 * 1024);
  for (;;) {
    CEDANA_ASSIGN_OR_RETURN(size_t n, in->Read(buf.data(), buf.size()));
    if (n == 0) return OkStatus();
  }
}

}  // namespace

// One stream's pipeline: store -> stored-bytes hash -> decompressor -> [head check] -> raw
// counter -> tar.
Status UnpackStream(int index, storage::CheckpointStore& store, const storage::CheckpointRef& ref,
                    const Manifest& manifest, const std::string& images_dir,
                    ProgressReporter* progress, const StreamGroup& group,
                    const StreamFollower& follower) {
  const StreamInfo& want = manifest.streams[index];
  CEDANA_ASSIGN_OR_RETURN(auto store_source, store.OpenStream(ref, index));
  if (follower.stored_file && manifest.CodecOf(want) == Codec::kNone &&
      store_source->FileDescriptor() >= 0) {
    // The same open file: what is served from it later is what this stream hashes.
    UniqueFd again(::fcntl(store_source->FileDescriptor(), F_DUPFD_CLOEXEC, 0));
    if (!again.valid()) return ErrnoStatus(errno, "duplicating the descriptor of a stream");
    follower.stored_file(std::move(again));
  }
  auto hashing = std::make_unique<HashingSource>(std::move(store_source), manifest.digest);
  HashingSource* stored = hashing.get();
  std::unique_ptr<storage::ByteSource> decoded =
      DecompressingSource(manifest.CodecOf(want), std::move(hashing));
  if (follower.head_verified)
    decoded = std::make_unique<HeadVerifyingSource>(std::move(decoded), want.head, manifest.digest,
                                                    follower.head_verified);
  CountingSource raw(std::move(decoded), progress, group.cancel_flag());
  TarReader tar(&raw, follower.observer);
  Status s = tar.ExtractAll(images_dir).error();
  if (s.ok()) s = DrainToEnd(&raw);
  if (!s.ok()) {
    // A corrupt frame or tar header usually means the stored bytes changed; say so when the
    // hash of the whole stream confirms it. Local failures (disk full) are reported as is.
    bool data_error = s.code() == Code::kAborted || s.code() == Code::kInvalidArgument;
    if (data_error && !group.cancelled() && stored->Drain().ok() && !Matches(stored, want)) {
      return ChecksumMismatch(s);
    }
    return s;
  }
  if (!Matches(stored, want)) return ChecksumMismatch();
  return OkStatus();
}

Status UnpackToImagesDir(storage::CheckpointStore& store, const storage::CheckpointRef& ref,
                         const Manifest& manifest, const std::string& images_dir,
                         const ProgressFn& progress_fn) {
  int n = static_cast<int>(manifest.streams.size());
  if (n < 1 || n > kMaxCheckpointStreams) {
    return InvalidArgumentError(
        fmt::format("streams must be between 1 and {}, got {}", kMaxCheckpointStreams, n));
  }
  if (!fs::Exists(images_dir)) {
    // Images hold the process's memory: readable by the owner only.
    CEDANA_RETURN_IF_ERROR(fs::MakeDirs(images_dir, 0700)) << "creating images dir";
  }
  CEDANA_ASSIGN_OR_RETURN(auto existing, fs::ListDir(images_dir));
  if (!existing.empty()) {
    return FailedPreconditionError(fmt::format("images dir {} is not empty", images_dir));
  }
  uint64_t total = manifest.chunk_index ? manifest.chunk_index->raw_bytes : 0;
  for (const StreamInfo& s : manifest.streams) total += s.raw_bytes;

  ProgressReporter progress(progress_fn, total);
  std::string path = ref.Path();
  StreamGroup group([&path](int i) { return fmt::format("stream-{} of {}", i, path); });
  CEDANA_RETURN_IF_ERROR(group.Run(n, [&](int i) {
    return UnpackStream(i, store, ref, manifest, images_dir, &progress, group, {});
  }));
  // As many readers as the dump had writers: the streams say how parallel the store was meant
  // to be read (at least two, for a store whose latency each read waits for).
  CEDANA_RETURN_IF_ERROR(
      UnpackChunks(store, ref, manifest, images_dir, std::max(2, n), &progress, nullptr));
  progress.Finish();
  return OkStatus();
}

}  // namespace cedana::image
