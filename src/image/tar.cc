#include "image/tar.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <unordered_set>

#include "common/unique_fd.h"

namespace cedana::image {
namespace {

constexpr size_t kIoBufferSize = size_t{1} << 20;

// The ustar header block (POSIX.1-1988).
struct UstarHeader {
  char name[100];
  char mode[8];
  char uid[8];
  char gid[8];
  char size[12];
  char mtime[12];
  char chksum[8];
  char typeflag;
  char linkname[100];
  char magic[6];
  char version[2];
  char uname[32];
  char gname[32];
  char devmajor[8];
  char devminor[8];
  char prefix[155];
  char pad[12];
};
static_assert(sizeof(UstarHeader) == kTarBlockSize);

// Zero-padded octal with a terminating NUL, filling the field.
void PutOctal(char* field, size_t width, uint64_t value) {
  field[width - 1] = '\0';
  for (size_t i = width - 1; i-- > 0;) {
    field[i] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
}

// GNU base-256: high bit of the first byte set, big-endian value in the rest.
void PutBase256(char* field, size_t width, uint64_t value) {
  std::memset(field, 0, width);
  field[0] = static_cast<char>(0x80);
  for (size_t i = width - 1; i > 0 && value > 0; --i) {
    field[i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
}

// Octal when it fits in the field (width - 1 digits), else GNU base-256: sizes of 8 GiB and
// more, uids above 2097151.
void PutNumber(char* field, size_t width, uint64_t value) {
  if (value < (uint64_t{1} << (3 * (width - 1)))) {
    PutOctal(field, width, value);
  } else {
    PutBase256(field, width, value);
  }
}

bool ParseNumber(const char* field, size_t width, uint64_t* out) {
  uint64_t value = 0;
  if (static_cast<unsigned char>(field[0]) & 0x80) {
    if (static_cast<unsigned char>(field[0]) != 0x80) return false;  // negative or too large
    for (size_t i = 1; i < width; ++i) {
      if (value >> 56) return false;
      value = (value << 8) | static_cast<unsigned char>(field[i]);
    }
    *out = value;
    return true;
  }
  size_t i = 0;
  while (i < width && field[i] == ' ') ++i;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i)
    value = (value << 3) | (field[i] - '0');
  if (i < width && field[i] != '\0' && field[i] != ' ') return false;
  *out = value;
  return true;
}

// Sum of the header bytes with the checksum field counted as eight spaces.
uint32_t HeaderChecksum(const UstarHeader& h) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&h);
  uint32_t sum = 0;
  for (size_t i = 0; i < sizeof h; ++i) sum += bytes[i];
  for (char c : h.chksum) sum -= static_cast<unsigned char>(c);
  return sum + sizeof h.chksum * ' ';
}

Status CheckName(const std::string& name) {
  if (!IsSafeImageName(name))
    return InvalidArgumentError("tar entry \"" + name + "\": unsafe name");
  return OkStatus();
}

constexpr size_t kPartDigits = 16;

// "<base>@<16 digits>" -> base and offset; false for a whole-file name.
bool ParsePartName(const std::string& name, std::string* base, uint64_t* offset) {
  if (name.size() < kPartDigits + 2 || name[name.size() - kPartDigits - 1] != '@') return false;
  uint64_t v = 0;
  for (size_t i = name.size() - kPartDigits; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    v = v * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  *base = name.substr(0, name.size() - kPartDigits - 1);
  *offset = v;
  return true;
}

// What a header block says of its entry, checked as extraction needs it; nullopt for the
// end-of-archive marker. `entries_before` only words the error.
struct ParsedHeader {
  std::string name;  // the entry's own name (a TarPartName for a part)
  TarEntryHeader entry;
  uint64_t size = 0;
  uint32_t mode = 0;
};
Result<std::optional<ParsedHeader>> ParseHeader(const UstarHeader& h, uint64_t position,
                                                size_t entries_before) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&h);
  if (std::all_of(bytes, bytes + sizeof h, [](unsigned char c) { return c == 0; }))
    return std::optional<ParsedHeader>();
  uint64_t want = 0;
  uint64_t size = 0;
  uint64_t mode = 0;
  if (!ParseNumber(h.chksum, sizeof h.chksum, &want) || want != HeaderChecksum(h) ||
      !ParseNumber(h.size, sizeof h.size, &size) || !ParseNumber(h.mode, sizeof h.mode, &mode)) {
    return AbortedError("tar: corrupt header after " + std::to_string(entries_before) + " files");
  }
  std::string name(h.name, strnlen(h.name, sizeof h.name));
  if (h.prefix[0] != '\0') return InvalidArgumentError("tar entry \"" + name + "\": has a prefix");
  CEDANA_RETURN_IF_ERROR(CheckName(name));
  if (h.typeflag != '0' && h.typeflag != '\0') {
    return InvalidArgumentError("tar entry \"" + name + "\": not a regular file (type '" +
                                std::string(1, h.typeflag) + "')");
  }
  std::string base;
  uint64_t offset = 0;
  bool part = ParsePartName(name, &base, &offset);
  if (part) CEDANA_RETURN_IF_ERROR(CheckName(base));
  TarEntryHeader entry{part ? base : name, part ? std::optional(offset) : std::nullopt, position};
  return std::optional(
      ParsedHeader{std::move(name), std::move(entry), size, static_cast<uint32_t>(mode)});
}

// An archive names each entry once: a stream's entries are distinct files or distinct parts of
// one. A name seen again is a corrupt archive (a decoder fed altered bytes can repeat an earlier,
// well-formed header), and is reported as one rather than as the file that already exists.
Status AdmitOnce(std::unordered_set<std::string>* seen, const std::string& name) {
  if (!seen->insert(name).second)
    return AbortedError("tar: entry \"" + name + "\" appears twice (corrupt archive)");
  return OkStatus();
}

}  // namespace

bool IsSafeImageName(const std::string& name) {
  return !name.empty() && name != "." && name.find('/') == std::string::npos &&
         name.find("..") == std::string::npos;
}

std::string TarPartName(const std::string& name, uint64_t offset) {
  std::string digits = std::to_string(offset);
  return name + "@" + std::string(kPartDigits - std::min(kPartDigits, digits.size()), '0') + digits;
}

uint64_t TarEntrySize(uint64_t file_size) {
  return kTarBlockSize + (file_size + kTarBlockSize - 1) / kTarBlockSize * kTarBlockSize;
}

TarWriter::TarWriter(storage::ByteSink* out) : out_(out), buf_(kIoBufferSize) {}

Status TarWriter::WriteHeader(const std::string& name, uint64_t size, uint32_t mode, uint32_t uid,
                              uint32_t gid, int64_t mtime) {
  UstarHeader h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.name, name.data(), name.size());  // exactly 100 bytes needs no NUL in ustar
  PutOctal(h.mode, sizeof h.mode, mode & 07777);
  PutNumber(h.uid, sizeof h.uid, uid);
  PutNumber(h.gid, sizeof h.gid, gid);
  PutNumber(h.size, sizeof h.size, size);
  PutOctal(h.mtime, sizeof h.mtime, static_cast<uint64_t>(std::max<int64_t>(mtime, 0)));
  h.typeflag = '0';
  std::memcpy(h.magic, "ustar", 6);
  std::memcpy(h.version, "00", 2);
  std::memset(h.chksum, ' ', sizeof h.chksum);
  PutOctal(h.chksum, 7, HeaderChecksum(h));  // six digits, NUL, then the space already there
  return out_->Write(&h, sizeof h);
}

Status TarWriter::WritePadding(uint64_t size) {
  static const char kZeros[kTarBlockSize] = {};
  size_t pad = (kTarBlockSize - size % kTarBlockSize) % kTarBlockSize;
  return pad == 0 ? OkStatus() : out_->Write(kZeros, pad);
}

Status TarWriter::AddFile(const std::string& dir, const std::string& name) {
  return AddEntry(dir, name, name, 0, std::nullopt);
}

Status TarWriter::AddFilePart(const std::string& dir, const std::string& name, uint64_t offset,
                              uint64_t length) {
  return AddEntry(dir, name, TarPartName(name, offset), offset, length);
}

Status TarWriter::AddEntry(const std::string& dir, const std::string& name,
                           const std::string& entry_name, uint64_t offset,
                           std::optional<uint64_t> length) {
  if (entry_name.size() > kTarMaxNameLength) {
    return InvalidArgumentError("file name " + entry_name + " is longer than 100 bytes");
  }
  CEDANA_RETURN_IF_ERROR(CheckName(name));
  std::string path = dir + "/" + name;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return ErrnoStatus(errno, "opening " + path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError(path + " is not a regular file");
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  uint64_t size = length.value_or(static_cast<uint64_t>(st.st_size));
  CEDANA_RETURN_IF_ERROR(
      WriteHeader(entry_name, size, st.st_mode, st.st_uid, st.st_gid, st.st_mtime));
  // Exactly `size` bytes follow the header, whatever happens to the file meanwhile: a file
  // that grew is cut at the size in the header; one that shrank cannot be archived.
  uint64_t left = size;
  uint64_t at = offset;
  while (left > 0) {
    ssize_t n = ::pread(fd.get(), buf_.data(), std::min<uint64_t>(left, buf_.size()),
                        static_cast<off_t>(at));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "reading " + path);
    }
    if (n == 0) return AbortedError(path + " shrank while it was packed");
    CEDANA_RETURN_IF_ERROR(out_->Write(buf_.data(), static_cast<size_t>(n)));
    left -= static_cast<uint64_t>(n);
    at += static_cast<uint64_t>(n);
  }
  return WritePadding(size);
}

Status TarWriter::AddBytes(const std::string& entry_name, const void* data, uint64_t size) {
  if (entry_name.size() > kTarMaxNameLength) {
    return InvalidArgumentError("file name " + entry_name + " is longer than 100 bytes");
  }
  CEDANA_RETURN_IF_ERROR(CheckName(entry_name));
  CEDANA_RETURN_IF_ERROR(WriteHeader(entry_name, size, 0600, 0, 0, ::time(nullptr)));
  if (size > 0) {
    CEDANA_RETURN_IF_ERROR(out_->Write(data, static_cast<size_t>(size)));
  }
  return WritePadding(size);
}

Status TarWriter::Finish() {
  static const char kZeros[kTarTrailerSize] = {};
  return out_->Write(kZeros, sizeof kZeros);
}

TarReader::TarReader(storage::ByteSource* in, ExtractObserver* observer)
    : in_(in), observer_(observer), buf_(kIoBufferSize) {}

Status TarReader::ReadFull(void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    CEDANA_ASSIGN_OR_RETURN(size_t n, in_->Read(p, size));
    if (n == 0) return AbortedError("tar: archive ends early (truncated)");
    p += n;
    size -= n;
    position_ += n;
  }
  return OkStatus();
}

Result<std::vector<std::string>> TarReader::ExtractAll(const std::string& dir) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (;;) {
    UstarHeader h;
    uint64_t entry_position = position_;
    CEDANA_RETURN_IF_ERROR(ReadFull(&h, sizeof h));
    // End-of-archive: the second zero block is left for the caller to drain.
    CEDANA_ASSIGN_OR_RETURN(std::optional<ParsedHeader> parsed,
                            ParseHeader(h, entry_position, names.size()));
    if (!parsed) return names;
    CEDANA_RETURN_IF_ERROR(AdmitOnce(&seen, parsed->name));
    if (observer_) CEDANA_RETURN_IF_ERROR(observer_->Admit(parsed->entry));
    CEDANA_RETURN_IF_ERROR(ExtractFile(dir, parsed->entry.file, parsed->size, parsed->mode,
                                       parsed->entry.part_offset));
    names.push_back(std::move(parsed->name));
  }
}

Result<std::vector<TarListedEntry>> ListTarEntries(int fd) {
  std::vector<TarListedEntry> entries;
  std::unordered_set<std::string> seen;
  for (uint64_t position = 0;;) {
    UstarHeader h;
    ssize_t n = ::pread(fd, &h, sizeof h, static_cast<off_t>(position));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "reading a tar header");
    if (static_cast<size_t>(n) != sizeof h)
      return AbortedError("tar: archive ends early (truncated)");
    CEDANA_ASSIGN_OR_RETURN(std::optional<ParsedHeader> parsed,
                            ParseHeader(h, position, entries.size()));
    if (!parsed) return entries;
    CEDANA_RETURN_IF_ERROR(AdmitOnce(&seen, parsed->name));
    entries.push_back(TarListedEntry{parsed->entry, parsed->size});
    position += TarEntrySize(parsed->size);
  }
}

Status TarReader::ExtractFile(const std::string& dir, const std::string& name, uint64_t size,
                              uint32_t mode, std::optional<uint64_t> offset) {
  std::string path = dir + "/" + name;
  const bool leave = observer_ != nullptr && observer_->LeavesInArchive(name);
  // No fsync: a restore that crashes starts over from the store, so durability buys nothing.
  // Parts share their file (no O_EXCL); the images dir is fresh and ours, and O_NOFOLLOW keeps
  // a name from leading elsewhere.
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (offset ? 0 : O_EXCL);
  UniqueFd fd(leave ? -1 : ::open(path.c_str(), flags, mode & 0777));
  if (!leave && !fd.valid()) return ErrnoStatus(errno, "creating " + path);
  uint64_t at = offset.value_or(0);
  if (observer_) observer_->EntryStarted(name, at);
  uint64_t padded = TarEntrySize(size) - kTarBlockSize;
  uint64_t left = padded;
  uint64_t data_left = size;
  while (left > 0) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(left, buf_.size()));
    CEDANA_RETURN_IF_ERROR(ReadFull(buf_.data(), chunk));
    size_t data = static_cast<size_t>(std::min<uint64_t>(chunk, data_left));
    for (size_t off = 0; off < data;) {
      ssize_t n = leave ? static_cast<ssize_t>(data - off)
                        : ::pwrite(fd.get(), buf_.data() + off, data - off, static_cast<off_t>(at));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, "writing " + path);
      }
      if (observer_) observer_->Wrote(name, at, static_cast<uint64_t>(n));
      off += static_cast<size_t>(n);
      at += static_cast<uint64_t>(n);
    }
    data_left -= data;
    left -= chunk;
  }
  return OkStatus();
}

}  // namespace cedana::image
