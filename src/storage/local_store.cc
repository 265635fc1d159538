#include "storage/local_store.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/unique_fd.h"

namespace cedana::storage {
namespace {

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

class FileSink : public ByteSink {
 public:
  FileSink(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  Status Write(const void* data, size_t size) override {
    if (!status_.ok()) return status_;
    if (!fd_.valid()) return status_ = FailedPreconditionError("writing " + path_ + " after Close");
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      ssize_t n = ::write(fd_.get(), p, size);
      if (n < 0) {
        if (errno == EINTR) continue;
        return status_ = ErrnoStatus(errno, "writing " + path_);
      }
      p += n;
      size -= static_cast<size_t>(n);
      written_ += static_cast<uint64_t>(n);
    }
    StartWriteback();
    return OkStatus();
  }

  Status Close() override {
    if (!status_.ok()) return status_;
    if (!fd_.valid()) return OkStatus();
    // The manifest (commit point) is written after every stream is closed, so the stream
    // bytes must be on disk before Close() reports success.
    if (::fsync(fd_.get()) != 0) return status_ = ErrnoStatus(errno, "fsync " + path_);
    int fd = fd_.Release();
    if (::close(fd) != 0 && errno != EINTR) return status_ = ErrnoStatus(errno, "closing " + path_);
    return OkStatus();
  }

 private:
  // Write-behind: hands every complete window to the disk as soon as it is written, so the
  // writeback runs beside the compression instead of all at once in Close()'s fsync. Only
  // starts it (never waits): a failure here shows up again, and is reported, by the fsync.
  void StartWriteback() {
    while (written_ - flushed_ >= kWritebackWindow) {
      (void)::sync_file_range(fd_.get(), static_cast<off64_t>(flushed_), kWritebackWindow,
                              SYNC_FILE_RANGE_WRITE);
      flushed_ += kWritebackWindow;
    }
  }

  static constexpr uint64_t kWritebackWindow = 8ull << 20;
  UniqueFd fd_;
  std::string path_;
  Status status_;
  uint64_t written_ = 0, flushed_ = 0;
};

class FileSource : public ByteSource {
 public:
  FileSource(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  Result<size_t> Read(void* data, size_t size) override {
    for (;;) {
      ssize_t n = ::read(fd_.get(), data, size);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return ErrnoStatus(errno, "reading " + path_);
    }
  }
  int FileDescriptor() const override { return fd_.get(); }

 private:
  UniqueFd fd_;
  std::string path_;
};

// Removes `path` if it is an empty directory; anything else (not empty, gone) is fine.
void RemoveDirIfEmpty(const std::string& path) { ::rmdir(path.c_str()); }

// Subdirectories of `path` (or just `only`, when given and present).
Result<std::vector<std::string>> SubDirs(const std::string& path,
                                         const std::optional<std::string>& only) {
  std::vector<std::string> out;
  if (only.has_value()) {
    CEDANA_RETURN_IF_ERROR(ValidateComponent("name", *only));
    if (IsDir(path + "/" + *only)) out.push_back(*only);
    return out;
  }
  auto names = fs::ListDir(path);
  if (!names.has_value()) {
    if (names.error().code() == Code::kNotFound) return out;
    return std::move(names).error();
  }
  for (std::string& name : *names) {
    if (name[0] != '.' && IsDir(path + "/" + name)) out.push_back(std::move(name));
  }
  return out;
}

Status WriteWhole(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "writing " + path);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

// Chunks are written as ".part-<n>-<digest>" files (never listed: not a digest) and renamed to
// their digest once a syncfs made them all durable.
class LocalChunkWriter : public ChunkWriter {
 public:
  explicit LocalChunkWriter(std::string dir) : dir_(std::move(dir)) {}

  Status Put(const std::string& digest, std::string_view bytes) override {
    std::string part = fmt::format("{}/.part-{}-{}", dir_, next_.fetch_add(1), digest);
    UniqueFd fd(::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid()) return ErrnoStatus(errno, "creating " + part);
    CEDANA_RETURN_IF_ERROR(WriteWhole(fd.get(), bytes, part));
    std::lock_guard<std::mutex> lock(mu_);
    pending_.emplace_back(std::move(part), digest);
    return OkStatus();
  }

  Status Publish() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.empty()) return OkStatus();
    UniqueFd dir(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir.valid()) return ErrnoStatus(errno, "opening " + dir_);
    if (::syncfs(dir.get()) != 0) return ErrnoStatus(errno, "syncing " + dir_);
    for (const auto& [part, digest] : pending_) {
      std::string path = dir_ + "/" + digest;
      if (::rename(part.c_str(), path.c_str()) != 0) return ErrnoStatus(errno, "renaming " + part);
    }
    pending_.clear();
    if (::fsync(dir.get()) != 0) return ErrnoStatus(errno, "fsync " + dir_);
    return OkStatus();
  }

 private:
  const std::string dir_;
  std::atomic<uint64_t> next_{0};
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> pending_;  // guarded by mu_
};

}  // namespace

LocalStore::LocalStore(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string LocalStore::CheckpointDir(const CheckpointRef& ref) const {
  return root_ + "/" + ref.Path();
}

// The probe goes where the owner's checkpoints go: on a root_squash export with per-user
// directories only <root>/<owner> is writable by the job's user (unprivileged mode).
Status LocalStore::CheckWritable(const std::string& owner) {
  if (fs::Exists(root_) && !IsDir(root_)) {
    return FailedPreconditionError("checkpoint dir " + root_ + " is not a directory");
  }
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(root_)) << "checkpoint dir " << root_ << " is not usable";
  std::string dir = root_;
  if (!owner.empty()) {
    CEDANA_RETURN_IF_ERROR(ValidateRef(CheckpointRef{owner, "probe", "probe"}));
    dir += "/" + owner;
    CEDANA_RETURN_IF_ERROR(fs::MakeDirs(dir, 0700))
        << "checkpoint dir " << root_ << " is not writable";
  }
  std::string probe = dir + "/.cedana-write-test.XXXXXX";
  int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    return ErrnoStatus(errno, "checkpoint dir " + dir + " is not writable");
  }
  UniqueFd owned(fd);
  ::unlink(probe.c_str());
  if (::write(owned.get(), "x", 1) != 1) {
    return ErrnoStatus(errno, "checkpoint dir " + dir + " is not writable");
  }
  return OkStatus();
}

Result<std::unique_ptr<ByteSink>> LocalStore::CreateStream(const CheckpointRef& ref, int index) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  if (index < 0) return InvalidArgumentError("negative stream index " + std::to_string(index));
  std::string dir = CheckpointDir(ref);
  // A checkpoint holds a job's memory: only its writer (root) reads it from the store.
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(dir, 0700));
  std::string path = dir + "/" + StreamName(index);
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd.valid()) return ErrnoStatus(errno, "creating " + path);
  return std::unique_ptr<ByteSink>(std::make_unique<FileSink>(std::move(fd), std::move(path)));
}

Status LocalStore::Commit(const CheckpointRef& ref, const std::string& manifest_json) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  std::string dir = CheckpointDir(ref);
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(dir, 0700));
  return fs::WriteFileAtomic(dir + "/" + kManifestName, manifest_json, 0600);
}

Status LocalStore::Delete(const CheckpointRef& ref) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  // The manifest goes first: a crash part-way leaves an uncommitted dir, never a committed
  // checkpoint with missing streams.
  std::string dir = CheckpointDir(ref);
  if (::unlink((dir + "/" + kManifestName).c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "removing " + dir + "/" + kManifestName);
  }
  CEDANA_RETURN_IF_ERROR(fs::RemoveTree(dir));
  RemoveDirIfEmpty(root_ + "/" + ref.owner + "/" + ref.label);
  RemoveDirIfEmpty(root_ + "/" + ref.owner);
  return OkStatus();
}

Result<std::unique_ptr<ByteSource>> LocalStore::OpenStream(const CheckpointRef& ref, int index) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  std::string path = CheckpointDir(ref) + "/" + StreamName(index);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "opening " + path);
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<ByteSource>(std::make_unique<FileSource>(std::move(fd), std::move(path)));
}

// The regular file at `rel` below the root, read-only. Owners' directories may be theirs to
// change (unprivileged mode): the whole of `rel` is resolved without symlinks, and opened
// O_NONBLOCK so that a FIFO in its place cannot block us. kNotFound when it is missing. `*st`
// is its stat.
Result<UniqueFd> LocalStore::OpenBelowRoot(const std::string& rel, struct stat* st) const {
  const std::string path = root_ + "/" + rel;
  UniqueFd root(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return ErrnoStatus(errno, "opening checkpoint dir " + root_);
  UniqueFd fd(
      fs::OpenNoSymlinks(root.get(), rel, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, true));
  if (!fd.valid()) {
    if (errno == ENOENT) return NotFoundError(path + " does not exist");
    if (errno == ELOOP || errno == EXDEV)
      return InvalidArgumentError(path + " is reached through a symlink; refusing it");
    return ErrnoStatus(errno, "opening " + path);
  }
  if (::fstat(fd.get(), st) != 0) return ErrnoStatus(errno, "stat " + path);
  if (!S_ISREG(st->st_mode)) return InvalidArgumentError(path + " is not a regular file");
  return fd;
}

// A small file below the root (a manifest, a lineage record, a chunk) at `rel`, opened as
// OpenBelowRoot opens it.
Result<std::string> LocalStore::ReadSmallFile(const std::string& rel, std::string_view what,
                                              size_t max_bytes) const {
  std::string data;
  CEDANA_RETURN_IF_ERROR(ReadSmallFileInto(rel, what, max_bytes, &data));
  return data;
}

Status LocalStore::ReadSmallFileInto(const std::string& rel, std::string_view what,
                                     size_t max_bytes, std::string* into) const {
  const std::string path = root_ + "/" + rel;
  struct stat st {};
  CEDANA_ASSIGN_OR_RETURN(UniqueFd fd, OpenBelowRoot(rel, &st));
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return InvalidArgumentError(
        fmt::format("{} is {} bytes, more than {} may be ({})", path, st.st_size, what, max_bytes));
  // Shrinking a string keeps its memory; only what grows past its last size is filled first.
  std::string& data = *into;
  data.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(fd.get(), data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "reading " + path);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  data.resize(got);
  return OkStatus();
}

Result<std::string> LocalStore::ReadManifest(const CheckpointRef& ref) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  Result<std::string> data = ReadSmallFile(ref.Path() + "/" + kManifestName, "a manifest");
  if (!data.has_value() && data.error().code() == Code::kNotFound)
    return NotFoundError("checkpoint " + ref.Path() + " in " + root_ +
                         " is not committed (no manifest.json)");
  return data;
}

Status LocalStore::WriteLineage(const std::string& owner, const std::string& label,
                                const std::string& json) {
  CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", owner));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("label", label));
  std::string dir = root_ + "/" + owner + "/" + label;
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(dir, 0700));
  return fs::WriteFileAtomic(dir + "/" + kLineageName, json, 0600);
}

Result<std::string> LocalStore::ReadLineage(const std::string& owner, const std::string& label) {
  CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", owner));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("label", label));
  return ReadSmallFile(owner + "/" + label + "/" + kLineageName, "a lineage record");
}

Status LocalStore::WriteFile(const CheckpointRef& ref, const std::string& name,
                             std::string_view data) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("file name", name));
  std::string dir = CheckpointDir(ref);
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(dir, 0700));
  return fs::WriteFileAtomic(dir + "/" + name, data, 0600);
}

Result<std::string> LocalStore::ReadFile(const CheckpointRef& ref, const std::string& name,
                                         size_t max_bytes) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("file name", name));
  return ReadSmallFile(ref.Path() + "/" + name, "a checkpoint's " + name, max_bytes);
}

// A chunk's path below the root.
std::string LocalStore::ChunkPath(const ChunkRef& chunk) {
  return chunk.owner + "/" + chunk.label + "/" + kChunksDirName + "/" + chunk.digest;
}

std::string LocalStore::ChunksDir(const std::string& owner, const std::string& label) const {
  return root_ + "/" + owner + "/" + label + "/" + kChunksDirName;
}

Result<std::unique_ptr<ChunkWriter>> LocalStore::WriteChunks(const std::string& owner,
                                                             const std::string& label) {
  CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", owner));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("label", label));
  std::string dir = ChunksDir(owner, label);
  CEDANA_RETURN_IF_ERROR(fs::MakeDirs(dir, 0700));
  return std::unique_ptr<ChunkWriter>(std::make_unique<LocalChunkWriter>(std::move(dir)));
}

Status LocalStore::ReadChunk(const ChunkRef& chunk, size_t max_bytes, std::string* into) {
  CEDANA_RETURN_IF_ERROR(ValidateChunk(chunk));
  return ReadSmallFileInto(ChunkPath(chunk), "a chunk", max_bytes, into);
}

Result<std::optional<UniqueFd>> LocalStore::OpenChunk(const ChunkRef& chunk) {
  CEDANA_RETURN_IF_ERROR(ValidateChunk(chunk));
  struct stat st {};
  CEDANA_ASSIGN_OR_RETURN(UniqueFd fd, OpenBelowRoot(ChunkPath(chunk), &st));
  return std::optional<UniqueFd>(std::move(fd));
}

Result<std::vector<std::string>> LocalStore::ListChunks(const std::string& owner,
                                                        const std::string& label) {
  CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", owner));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("label", label));
  auto names = fs::ListDir(ChunksDir(owner, label));
  if (!names.has_value()) {
    if (names.error().code() == Code::kNotFound) return std::vector<std::string>{};
    return std::move(names).error();
  }
  std::vector<std::string> digests;
  for (std::string& name : *names)
    if (IsChunkDigest(name)) digests.push_back(std::move(name));
  return digests;
}

Status LocalStore::DeleteChunk(const ChunkRef& chunk) {
  CEDANA_RETURN_IF_ERROR(ValidateChunk(chunk));
  std::string dir = ChunksDir(chunk.owner, chunk.label);
  std::string path = dir + "/" + chunk.digest;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, "removing " + path);
  RemoveDirIfEmpty(dir);
  RemoveDirIfEmpty(root_ + "/" + chunk.owner + "/" + chunk.label);
  RemoveDirIfEmpty(root_ + "/" + chunk.owner);
  return OkStatus();
}

Result<std::vector<CheckpointRef>> LocalStore::List(const std::optional<std::string>& owner,
                                                    const std::optional<std::string>& label) {
  return Walk(owner, label, true);
}

Result<std::vector<CheckpointRef>> LocalStore::ListUncommitted() {
  return Walk(std::nullopt, std::nullopt, false);
}

Result<std::vector<CheckpointRef>> LocalStore::Walk(const std::optional<std::string>& owner,
                                                    const std::optional<std::string>& label,
                                                    bool committed) {
  std::vector<CheckpointRef> refs;
  CEDANA_ASSIGN_OR_RETURN(auto owners, SubDirs(root_, owner));
  for (const std::string& o : owners) {
    std::string owner_dir = root_ + "/" + o;
    auto labels = SubDirs(owner_dir, label);
    // Another owner's directory this reader may not open (0700, read with a user's identity in
    // unprivileged mode): not this reader's checkpoints. Only a listing of all owners skips it.
    if (!labels.has_value() && !owner && labels.error().code() == Code::kPermissionDenied) continue;
    if (!labels.has_value()) return labels.error();
    for (const std::string& l : *labels) {
      std::string label_dir = owner_dir + "/" + l;
      auto ids = SubDirs(label_dir, std::nullopt);
      // A label dir this reader may not open (root's, made before the node switched to
      // unprivileged mode) holds nothing it could restore: its other labels still count.
      if (!ids.has_value() && !label && ids.error().code() == Code::kPermissionDenied) {
        log::Warn("storage: skipping {}: {}", label_dir, ids.error().message());
        continue;
      }
      if (!ids.has_value()) return ids.error();
      for (const std::string& id : *ids) {
        if (fs::Exists(label_dir + "/" + id + "/" + kManifestName) == committed) {
          refs.push_back(CheckpointRef{o, l, id});
        }
      }
    }
  }
  return refs;
}

}  // namespace cedana::storage
