// Tar: the archive format inside each stream. A minimal POSIX ustar writer and reader for
// regular files of one flat directory (a CRIU images dir has no subdirectories). GNU tar
// extracts what the writer produces (`gzip -d <stream-0 | tar -x`). Sizes of 8 GiB and more
// use the GNU base-256 size field, which GNU tar and bsdtar read. Not thread-safe: one writer
// or reader per stream.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/byte_io.h"

namespace cedana::image {

inline constexpr size_t kTarBlockSize = 512;
inline constexpr size_t kTarMaxNameLength = 100;

// Bytes an archive entry for a file of `size` bytes takes (header plus padded data).
uint64_t TarEntrySize(uint64_t file_size);
// Bytes of the end-of-archive marker (two zero blocks).
inline constexpr uint64_t kTarTrailerSize = 2 * kTarBlockSize;

// A large file can travel as parts, each its own entry "<name>@<offset>" (offset in bytes,
// 16 decimal digits, so that the parts of a file sort in order): the parts of one file may
// sit in different streams, which are packed and unpacked in parallel. By hand,
// `cat <name>@* > <name>` puts a file back together.
std::string TarPartName(const std::string& name, uint64_t offset);

// An image file name that stays inside its dir: not empty, not ".", no '/', no "..".
bool IsSafeImageName(const std::string& name);

class TarWriter {
 public:
  // `out` is borrowed and must outlive the writer; the writer never closes it.
  explicit TarWriter(storage::ByteSink* out);

  // Appends `dir`/`name` as a regular file. kInvalidArgument for names longer than 100 bytes
  // or containing '/'; kAborted when the file shrinks while it is read.
  Status AddFile(const std::string& dir, const std::string& name);
  // Appends `length` bytes of `dir`/`name` from `offset` as the part entry TarPartName(name,
  // offset). kAborted when the file is shorter than offset + length.
  Status AddFilePart(const std::string& dir, const std::string& name, uint64_t offset,
                     uint64_t length);
  // Appends `size` bytes from memory as the entry `entry_name` (a whole-file name or a
  // TarPartName), mode 0600, owned by uid/gid 0, mtime now: what a direct dump writes, which
  // has no file to take these from. kInvalidArgument for an unsafe or too long name.
  Status AddBytes(const std::string& entry_name, const void* data, uint64_t size);
  // Writes the end-of-archive marker. The archive is incomplete without it.
  Status Finish();

 private:
  // The entry `entry_name` holding `length` bytes of the file from `offset` (whole file when
  // `length` is nullopt).
  Status AddEntry(const std::string& dir, const std::string& name, const std::string& entry_name,
                  uint64_t offset, std::optional<uint64_t> length);
  Status WriteHeader(const std::string& name, uint64_t size, uint32_t mode, uint32_t uid,
                     uint32_t gid, int64_t mtime);
  Status WritePadding(uint64_t size);

  storage::ByteSink* out_;
  std::vector<char> buf_;
};

// An entry of an archive being extracted, as its header describes it.
struct TarEntryHeader {
  std::string file;                     // the file it holds bytes of (a part's file)
  std::optional<uint64_t> part_offset;  // a part (TarPartName): where its bytes go in the file
  uint64_t position = 0;                // where its header starts in the archive
};

// An entry of an archive lying in a file, as its header says: its bytes are the `size` bytes
// kTarBlockSize after header.position.
struct TarListedEntry {
  TarEntryHeader header;
  uint64_t size = 0;
};
// The entries of the archive in the regular file `fd`, read header by header up to the
// end-of-archive marker (each entry's data skipped, so nothing of it is checked); the same
// errors as ExtractAll for a corrupt header, a repeated entry name or an archive that ends early.
Result<std::vector<TarListedEntry>> ListTarEntries(int fd);

// Follows an extraction as it happens (a direct restore serves files while they are written).
// Called on the extracting thread.
class ExtractObserver {
 public:
  virtual ~ExtractObserver() = default;
  // Before the bytes of an entry: `file` (a part's file) from `offset`.
  virtual void EntryStarted(const std::string& file, uint64_t offset) = 0;
  // After `size` bytes of `file` at `offset` were written.
  virtual void Wrote(const std::string& file, uint64_t offset, uint64_t size) = 0;
  // Before anything of an entry is written: whether it may be. An error stops the extraction
  // with it. Default: every entry.
  virtual Status Admit(const TarEntryHeader& entry) { return OkStatus(); }
  // Whether the bytes of an admitted entry of `file` stay in the archive instead of being
  // written into the dir: they are read all the same (whatever hashes the archive sees them),
  // and EntryStarted/Wrote follow them as if written. The observer then serves them from the
  // archive, where an entry's bytes start kTarBlockSize after its header. Default: never.
  virtual bool LeavesInArchive(const std::string& file) { return false; }
};

class TarReader {
 public:
  // `in` is borrowed and must outlive the reader; so must `observer`, when given.
  explicit TarReader(storage::ByteSource* in, ExtractObserver* observer = nullptr);

  // Extracts every entry into `dir` (which must exist) until the end-of-archive marker.
  // Files are created exclusively (O_EXCL): an existing name is kAlreadyExists; a part entry
  // (TarPartName) is written at its offset into its file, which other parts (maybe from other
  // readers, in parallel) share. kInvalidArgument
  // for entries that are not regular files or whose names contain '/' or '..'; kAborted for a
  // corrupt header, an entry name the archive already had, or an archive that ends early.
  // Returns the names extracted.
  Result<std::vector<std::string>> ExtractAll(const std::string& dir);

 private:
  Status ReadFull(void* data, size_t size);
  // `offset` is nullopt for a whole file (created exclusively), else a part's offset.
  Status ExtractFile(const std::string& dir, const std::string& name, uint64_t size, uint32_t mode,
                     std::optional<uint64_t> offset);

  storage::ByteSource* in_;
  ExtractObserver* observer_;
  std::vector<char> buf_;
  uint64_t position_ = 0;  // bytes of the archive read so far
};

}  // namespace cedana::image
