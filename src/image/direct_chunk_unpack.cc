#include "image/direct_chunk_unpack.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <future>
#include <vector>

#include "common/unique_fd.h"
#include "image/chunk_codec.h"
#include "image/chunk_unpack.h"
#include "image/criu_pipe.h"
#include "image/pack.h"
#include "image/stream_group.h"
#include "image/tar.h"
#include "image/unpack_stream.h"

namespace cedana::image {
namespace {

// Chunks read (and verified) ahead of the one being written to CRIU: a store's latency and the
// digest then overlap CRIU's copy into the process. At most 4 MiB each. Reading a chunk file
// from a cold cache took this VM 0.3-3.7 ms; with 4 ahead the send waited for chunks 0.3 s of a
// 1 GiB restore, with 8 0.1 s (1.43 s against 1.63 s, medians of 4 alternating pairs); 12 were
// no faster.
constexpr size_t kChunksAhead = 8;

// Threads that check an image read in place, each every kChecksPerImage-th chunk: reading
// thousands of small files from a cold cache one at a time took this VM 3.3 s for 4 GiB, four
// at once 2.0 s (a large file: 1.8 s). Eight checked no faster; POSIX_FADV_WILLNEED on every
// chunk file up front made restores slower (5.1-6.4 s against 3.3-5.2 s).
constexpr size_t kChecksPerImage = 4;

// Descriptors left for everything else the daemon has open when an image's chunk files are
// held open (twice over while CRIU is handed copies of them).
constexpr size_t kSpareDescriptors = 1024;

// Threads that open an image's chunk files and read their headers before CRIU may read them in
// place, each a cold read of a small file: one after another, 1,088 files (1 GiB) took 0.09-0.12
// s, eight at once 0.04 s (restores 0.93 s against 1.07 s, medians of 4 alternating pairs).
constexpr size_t kOpeners = 8;

// `size` bytes from the start of `fd` into `*into` (fewer where the file ends).
Status ReadWhole(int fd, size_t size, std::string* into) {
  into->resize(size);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::pread(fd, into->data() + got, size - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "reading a chunk file");
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  into->resize(got);
  return OkStatus();
}

}  // namespace

Result<std::unique_ptr<DirectChunkUnpack>> DirectChunkUnpack::Start(
    storage::CheckpointStore& store, const storage::CheckpointRef& ref, const Manifest& manifest,
    const std::string& images_dir, ProgressFn progress) {
  if (!manifest.chunk_index)
    return FailedPreconditionError("checkpoint " + manifest.id + " is not deduplicated");
  if (manifest.streams.empty()) return InvalidArgumentError("checkpoint has no streams");
  return std::unique_ptr<DirectChunkUnpack>(
      new DirectChunkUnpack(store, ref, manifest, images_dir, std::move(progress)));
}

DirectChunkUnpack::DirectChunkUnpack(storage::CheckpointStore& store, storage::CheckpointRef ref,
                                     const Manifest& manifest, std::string images_dir,
                                     ProgressFn progress)
    : store_(store),
      ref_(std::move(ref)),
      manifest_(manifest),
      images_dir_(std::move(images_dir)),
      progress_fn_(std::move(progress)) {
  uint64_t total = manifest_.chunk_index->raw_bytes;
  for (const StreamInfo& s : manifest_.streams) total += s.raw_bytes;
  progress_ = std::make_unique<ProgressReporter>(progress_fn_, total);
}

Status DirectChunkUnpack::WaitForHeads() {
  const int n = static_cast<int>(manifest_.streams.size());
  std::string path = ref_.Path();
  StreamGroup group([&path](int i) { return fmt::format("stream-{} of {}", i, path); });
  CEDANA_RETURN_IF_ERROR(Fail(group.Run(n, [&](int i) {
    return UnpackStream(i, store_, ref_, manifest_, images_dir_, progress_.get(), group, {});
  })));
  CEDANA_ASSIGN_OR_RETURN(index_, ReadVerifiedIndex(store_, ref_, *manifest_.chunk_index));
  return OkStatus();
}

Status DirectChunkUnpack::CompleteImagesDir() {
  const int threads = std::max<int>(2, static_cast<int>(manifest_.streams.size()));
  return Fail(
      UnpackChunks(store_, ref_, manifest_, images_dir_, threads, progress_.get(), nullptr));
}

DirectChunkUnpack::~DirectChunkUnpack() {
  Cancel();
  WaitForChecks();
}

void DirectChunkUnpack::WaitForChecks() {
  std::vector<std::thread> checks;
  {
    std::lock_guard lock(mu_);
    checks.swap(checks_);
  }
  for (std::thread& t : checks) t.join();
}

Status DirectChunkUnpack::Finish() {
  WaitForChecks();
  progress_->Finish();
  std::lock_guard lock(mu_);
  if (failure_.ok() && unchecked_)
    return AbortedError("restore cancelled before every chunk CRIU read in place was checked");
  return failure_;
}

void DirectChunkUnpack::Cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
}

Status DirectChunkUnpack::Failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

Status DirectChunkUnpack::Fail(Status s) {
  std::lock_guard lock(mu_);
  if (!s.ok() && failure_.ok() && !cancelled_) failure_ = s;
  return s;
}

bool DirectChunkUnpack::Stopped() const {
  std::lock_guard lock(mu_);
  return cancelled_ || !failure_.ok();
}

const ChunkedFile* DirectChunkUnpack::PagesFile(const std::string& name) const {
  for (const ChunkedFile& f : index_.files)
    if (f.name == name) return &f;
  return nullptr;
}

Result<bool> DirectChunkUnpack::Has(const std::string& name) {
  if (!IsSafeImageName(name))
    return InvalidArgumentError("image name \"" + name + "\" is not a file name");
  if (PagesFile(name) != nullptr) return true;
  struct stat st {};
  return ::lstat((images_dir_ + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status DirectChunkUnpack::SendChunks(const ChunkedFile& file, int pipe_fd) {
  // Chunk i is read into buffers[i % size]: that buffer's last chunk, i - size, was written to
  // CRIU before chunk i is started. Declared before `ahead`, so that on an early return the
  // reads still running finish before their buffers go.
  std::vector<ChunkBuffer> buffers(kChunksAhead + 1);
  std::deque<std::future<Result<std::string_view>>> ahead;
  size_t next = 0;
  for (size_t sent = 0; sent < file.chunks.size(); ++sent) {
    // The threads inherit this thread's file-system identity (the store's owner).
    while (next < file.chunks.size() && ahead.size() <= kChunksAhead) {
      const ChunkEntry* chunk = &file.chunks[next];
      ChunkBuffer* buffer = &buffers[next++ % buffers.size()];
      ahead.push_back(std::async(std::launch::async, [this, chunk, buffer] {
        return ReadVerifiedChunk(store_, ref_, *chunk, manifest_.digest, buffer);
      }));
    }
    Result<std::string_view> raw = ahead.front().get();
    ahead.pop_front();
    // Nothing of a chunk reaches CRIU before it matched its digest.
    if (!raw.has_value()) return Fail(raw.error()).WithContext("sending " + file.name);
    CEDANA_RETURN_IF_ERROR(WriteToCriu(pipe_fd, *raw, file.name, [this] { return Stopped(); }));
    progress_->Add(raw->size());
  }
  return OkStatus();
}

std::optional<UniqueFd> DirectChunkUnpack::OpenRawChunk(const ChunkEntry& chunk) {
  // A chunk that cannot be opened here goes through the pipe, whose read reports why.
  auto fd = store_.OpenChunk({ref_.owner, ref_.label, chunk.digest});
  if (!fd.has_value() || !*fd) return std::nullopt;
  struct stat st {};
  char header[kChunkHeaderBytes];
  if (::fstat((*fd)->get(), &st) != 0 ||
      static_cast<uint64_t>(st.st_size) != MaxStoredChunkBytes(chunk.raw_bytes) ||
      ::pread((*fd)->get(), header, sizeof header, 0) != static_cast<ssize_t>(sizeof header) ||
      !StoredRaw(std::string_view(header, sizeof header)))
    return std::nullopt;
  return std::move(**fd);
}

std::optional<std::vector<UniqueFd>> DirectChunkUnpack::OpenRawChunks(const ChunkedFile& file) {
  using Files = std::optional<std::vector<UniqueFd>>;
  rlimit limit{};
  if (file.chunks.empty() || file.chunks.size() > kCriuInPlaceMaxFiles ||
      ::getrlimit(RLIMIT_NOFILE, &limit) != 0 ||
      2 * file.chunks.size() + kSpareDescriptors > limit.rlim_cur)
    return Files();
  std::vector<UniqueFd> files(file.chunks.size());
  std::atomic<size_t> next{0};
  // The threads inherit this thread's file-system identity (the store's owner). The first chunk
  // not stored raw stops them all: the image then goes through the pipe.
  StreamGroup group([&file](int i) { return fmt::format("chunk opener {} of {}", i, file.name); });
  Status opened = group.Run(static_cast<int>(std::min(kOpeners, files.size())), [&](int) {
    for (size_t i = next++; i < files.size() && !group.cancelled(); i = next++) {
      std::optional<UniqueFd> fd = OpenRawChunk(file.chunks[i]);
      if (!fd) return FailedPreconditionError("a chunk is not stored raw");
      files[i] = std::move(*fd);
    }
    return OkStatus();
  });
  if (!opened.ok()) return Files();
  return Files(std::move(files));
}

void DirectChunkUnpack::VerifyInPlace(const ChunkedFile& file, const std::vector<UniqueFd>& files,
                                      size_t first) {
  ChunkBuffer buffer;
  for (size_t i = first; i < file.chunks.size(); i += kChecksPerImage) {
    if (Stopped()) {
      // CRIU may have read the chunks left: the tree must not run on them unchecked.
      std::lock_guard lock(mu_);
      unchecked_ = true;
      return;
    }
    const ChunkEntry& chunk = file.chunks[i];
    Status read = ReadWhole(files[i].get(), MaxStoredChunkBytes(chunk.raw_bytes), &buffer.stored);
    Result<std::string_view> raw = read.ok()
                                       ? VerifyStoredChunk(ref_, chunk, manifest_.digest, &buffer)
                                       : Result<std::string_view>(std::move(read));
    if (!raw.has_value()) {
      (void)Fail(raw.error().WithContext("checking " + file.name + ", read in place"));
      return;
    }
    progress_->Add(chunk.raw_bytes);
  }
}

Result<std::optional<InPlaceImage>> DirectChunkUnpack::InPlace(const std::string& name) {
  const ChunkedFile* pages = PagesFile(name);
  if (pages == nullptr) return std::optional<InPlaceImage>();
  std::lock_guard lock(in_place_mu_);
  auto it = in_place_.find(name);
  if (it == in_place_.end()) {
    it = in_place_.emplace(name, OpenRawChunks(*pages)).first;
    std::lock_guard checks_lock(mu_);
    for (size_t first = 0; it->second && first < kChecksPerImage; ++first) {
      checks_.emplace_back(
          [this, pages, &files = *it->second, first] { VerifyInPlace(*pages, files, first); });
    }
  }
  if (!it->second) return std::optional<InPlaceImage>();
  InPlaceImage image;
  const std::vector<UniqueFd>& files = *it->second;
  for (size_t i = 0; i < files.size(); ++i) {
    // A copy of the very open file the check reads (both read by offset only).
    UniqueFd copy(::fcntl(files[i].get(), F_DUPFD_CLOEXEC, 0));
    if (!copy.valid()) return ErrnoStatus(errno, "handing " + name + "'s chunk files to criu");
    image.files.push_back(std::move(copy));
    image.runs.push_back({i, kChunkHeaderBytes, pages->chunks[i].raw_bytes});
  }
  return std::optional<InPlaceImage>(std::move(image));
}

Status DirectChunkUnpack::Send(const std::string& name, int pipe_fd) {
  if (!IsSafeImageName(name))
    return InvalidArgumentError("image name \"" + name + "\" is not a file name");
  CEDANA_RETURN_IF_ERROR(PrepareCriuPipe(pipe_fd, name));
  if (const ChunkedFile* pages = PagesFile(name)) return SendChunks(*pages, pipe_fd);

  // Every other image was unpacked and verified by WaitForHeads.
  return SendImageFileToCriu(pipe_fd, images_dir_, name, [this] { return Stopped(); });
}

}  // namespace cedana::image
