#include "storage/s3_store.h"

#include <algorithm>
#include <future>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "common/log.h"
#include "storage/part_budget.h"

namespace cedana::storage {
namespace {

// S3 allows at most 10000 parts per upload.
constexpr int kMaxParts = 10000;

// Buffers one part while the previous one uploads: compression never waits for the network
// unless the network is the slower of the two. The part buffers come from the store's budget
// (storage/part_budget.h): the first at the first write, the second, for the part in flight, only
// when the budget has one to spare; without it each part is uploaded before the next is filled.
// The two buffers are allocated once and swapped, and given back when the stream is closed (a
// fresh buffer per part left freed parts in glibc's arenas: the daemon stayed at its peak).
class S3Sink : public ByteSink {
 public:
  S3Sink(std::shared_ptr<s3::Client> client, std::string key, std::shared_ptr<PartBudget> budget)
      : client_(std::move(client)),
        key_(std::move(key)),
        part_size_(client_->part_size()),
        budget_(std::move(budget)) {}

  ~S3Sink() override {
    if (in_flight_.valid()) in_flight_.wait();
    if (!upload_id_.empty() && !completed_) Abort();
  }

  Status Write(const void* data, size_t size) override {
    if (!status_.ok()) return status_;
    if (closed_) return status_ = FailedPreconditionError("writing " + key_ + " after Close");
    if (size > 0 && !filling_) {
      filling_ = budget_->TakeFirst();
      buffer_.reserve(part_size_);
    }
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      size_t n = std::min(size, part_size_ - buffer_.size());
      buffer_.append(p, n);
      p += n;
      size -= n;
      if (buffer_.size() == part_size_) {
        if (Status s = SendPart(); !s.ok()) return Fail(std::move(s));
      }
    }
    return OkStatus();
  }

  Status Close() override {
    if (!status_.ok()) return status_;
    if (closed_) return OkStatus();
    closed_ = true;
    if (upload_id_.empty()) {  // small stream: one PUT
      if (Status s = client_->PutObject(key_, buffer_); !s.ok()) return Fail(std::move(s));
      GiveBuffersBack();
      return OkStatus();
    }
    if (!buffer_.empty()) {
      if (Status s = SendPart(); !s.ok()) return Fail(std::move(s));
    }
    if (Status s = CollectPart(); !s.ok()) return Fail(std::move(s));
    if (Status s = client_->CompleteMultipartUpload(key_, upload_id_, etags_); !s.ok())
      return Fail(std::move(s));
    completed_ = true;
    GiveBuffersBack();
    return OkStatus();
  }

 private:
  // Waits for the part in flight and keeps its ETag.
  Status CollectPart() {
    if (!in_flight_.valid()) return OkStatus();
    Result<std::string> etag = in_flight_.get();
    if (!etag.has_value()) return etag.error();
    etags_.push_back(std::move(etag).value());
    return OkStatus();
  }

  // Hands the full buffer to the uploader (after the previous part finished).
  Status SendPart() {
    if (upload_id_.empty()) {
      CEDANA_ASSIGN_OR_RETURN(upload_id_, client_->CreateMultipartUpload(key_));
    }
    CEDANA_RETURN_IF_ERROR(CollectPart());
    int number = static_cast<int>(etags_.size()) + 1;
    if (number > kMaxParts) {
      return FailedPreconditionError(
          fmt::format("stream {} needs more than {} parts of {} MiB; raise s3.part_size_mib", key_,
                      kMaxParts, part_size_ >> 20));
    }
    if (!in_flight_buffer_) in_flight_buffer_ = budget_->TrySecond();
    if (!in_flight_buffer_) {  // no part to spare: this one is sent before the next is filled
      CEDANA_ASSIGN_OR_RETURN(std::string etag, client_->UploadPart(key_, upload_id_, number,
                                                                    std::string_view(buffer_)));
      etags_.push_back(std::move(etag));
      buffer_.clear();
      return OkStatus();
    }
    sending_.swap(buffer_);
    buffer_.clear();
    buffer_.reserve(part_size_);  // the second buffer, allocated once
    in_flight_ = std::async(std::launch::async,
                            [client = client_, key = key_, id = upload_id_, number,
                             part = std::string_view(sending_)]() -> Result<std::string> {
                              return client->UploadPart(key, id, number, part);
                            });
    return OkStatus();
  }

  void GiveBuffersBack() {
    buffer_ = std::string();
    sending_ = std::string();
    filling_.Release();
    in_flight_buffer_.Release();
  }

  Status Fail(Status s) {
    status_ = s.WithContext("uploading " + key_);
    if (in_flight_.valid()) in_flight_.wait();
    GiveBuffersBack();
    Abort();
    return status_;
  }

  // Incomplete multipart uploads hold storage until aborted.
  void Abort() {
    if (upload_id_.empty() || completed_) return;
    if (Status s = client_->AbortMultipartUpload(key_, upload_id_); !s.ok())
      log::Warn("s3: could not abort the upload of {}: {}", key_, s.ToString());
    upload_id_.clear();
  }

  const std::shared_ptr<s3::Client> client_;
  const std::string key_;
  const size_t part_size_;
  const std::shared_ptr<PartBudget> budget_;
  std::string buffer_;         // the part being filled
  std::string sending_;        // the part in flight; in_flight_ reads it until it is collected
  PartBudget::Lease filling_;  // buffer_'s part of the budget
  PartBudget::Lease in_flight_buffer_;  // sending_'s part of the budget
  std::string upload_id_;
  std::vector<std::string> etags_;
  std::future<Result<std::string>> in_flight_;
  bool closed_ = false;
  bool completed_ = false;
  Status status_;
};

// Reads ranged GETs of part_size, fetching the next range while the current one is consumed
// when the store's budget has a second part to spare (as S3Sink), else each range when it is
// needed. Every range must come from the object version HEAD saw (If-Match on its ETag). The two
// range buffers are allocated once, swapped, and given back at the end of the object.
class S3Source : public ByteSource {
 public:
  S3Source(std::shared_ptr<s3::Client> client, std::string key, s3::ObjectInfo info,
           std::shared_ptr<PartBudget> budget)
      : client_(std::move(client)),
        key_(std::move(key)),
        info_(std::move(info)),
        chunk_(client_->part_size()),
        budget_(std::move(budget)) {}

  ~S3Source() override {
    if (next_.valid()) next_.wait();
  }

  Result<size_t> Read(void* data, size_t size) override {
    if (!status_.ok()) return status_;
    if (pos_ == current_.size()) {
      if (Status s = NextRange(); !s.ok()) return status_ = s;
      if (current_.empty()) {  // the end of the object
        GiveBuffersBack();
        return size_t{0};
      }
    }
    size_t n = std::min(size, current_.size() - pos_);
    std::copy_n(current_.data() + pos_, n, static_cast<char*>(data));
    pos_ += n;
    return n;
  }

 private:
  // Makes the next range current (empty past the end), then fetches the one after it ahead when
  // a second buffer is to be had.
  Status NextRange() {
    pos_ = 0;
    if (next_.valid()) {
      CEDANA_RETURN_IF_ERROR(next_.get());
      current_.swap(fetched_);
    } else if (offset_ < info_.size) {
      if (!reading_) reading_ = budget_->TakeFirst();
      size_t length = RangeAt(offset_);
      CEDANA_RETURN_IF_ERROR(Get(offset_, length, &current_));
      offset_ += length;
    } else {
      current_.clear();
      return OkStatus();
    }
    if (offset_ >= info_.size) return OkStatus();
    if (!fetching_) fetching_ = budget_->TrySecond();
    if (!fetching_) return OkStatus();
    size_t length = RangeAt(offset_);
    next_ = std::async(std::launch::async,
                       [this, offset = offset_, length] { return Get(offset, length, &fetched_); });
    offset_ += length;
    return OkStatus();
  }

  size_t RangeAt(uint64_t offset) const {
    return static_cast<size_t>(std::min<uint64_t>(chunk_, info_.size - offset));
  }
  Status Get(uint64_t offset, size_t length, std::string* out) const {
    return client_->GetRange(key_, info_.etag, offset, length, out);
  }

  void GiveBuffersBack() {
    current_ = std::string();
    fetched_ = std::string();
    reading_.Release();
    fetching_.Release();
  }

  const std::shared_ptr<s3::Client> client_;
  const std::string key_;
  const s3::ObjectInfo info_;
  const size_t chunk_;
  const std::shared_ptr<PartBudget> budget_;
  uint64_t offset_ = 0;         // where the next range to fetch begins
  std::string current_;         // the range being consumed
  std::string fetched_;         // the range next_ is filling
  PartBudget::Lease reading_;   // current_'s part of the budget
  PartBudget::Lease fetching_;  // fetched_'s part of the budget
  size_t pos_ = 0;
  std::future<Status> next_;
  Status status_;
};

// "<owner>/<label>/<id>/manifest.json" relative to the prefix -> ref; nullopt for other keys.
// "<owner>/<label>/<id>/<name>" (relative to the prefix): the checkpoint and the object's name.
std::optional<std::pair<CheckpointRef, std::string>> RefOfKey(std::string_view rel) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t slash = rel.find('/', start);
    parts.emplace_back(rel.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 4) return std::nullopt;
  CheckpointRef ref{parts[0], parts[1], parts[2]};
  if (!ValidateRef(ref).ok()) return std::nullopt;
  return std::pair{std::move(ref), std::move(parts[3])};
}

class S3ChunkWriter : public ChunkWriter {
 public:
  S3ChunkWriter(std::shared_ptr<s3::Client> client, std::string prefix)
      : client_(std::move(client)), prefix_(std::move(prefix)) {}
  Status Put(const std::string& digest, std::string_view bytes) override {
    return client_->PutObject(prefix_ + digest, bytes);
  }
  Status Publish() override { return OkStatus(); }

 private:
  const std::shared_ptr<s3::Client> client_;
  const std::string prefix_;
};

}  // namespace

S3Store::S3Store(s3::Location location, std::shared_ptr<s3::Client> client, uint64_t stream_memory)
    : location_(std::move(location)),
      client_(std::move(client)),
      parts_(PartBudget::Create(stream_memory, client_->part_size())) {}

uint64_t S3Store::StreamMemoryLimit() const { return parts_->limit_bytes(); }
uint64_t S3Store::StreamMemoryPeak() const { return parts_->peak_bytes(); }

std::string S3Store::KeyOf(const CheckpointRef& ref, const std::string& name) const {
  return location_.Key(ref.Path() + "/" + name);
}

Status S3Store::CheckWritable(const std::string& /*owner: one probe for the bucket*/) {
  std::string probe = location_.Key(".cedana-write-test");
  CEDANA_RETURN_IF_ERROR(client_->PutObject(probe, "x"))
      << "checkpoint dir " << Describe() << " is not writable";
  CEDANA_RETURN_IF_ERROR(client_->DeleteObject(probe))
      << "checkpoint dir " << Describe() << ": cannot delete objects";
  return OkStatus();
}

Result<std::unique_ptr<ByteSink>> S3Store::CreateStream(const CheckpointRef& ref, int index) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  if (index < 0) return InvalidArgumentError("negative stream index " + std::to_string(index));
  return std::unique_ptr<ByteSink>(
      std::make_unique<S3Sink>(client_, KeyOf(ref, StreamName(index)), parts_));
}

Status S3Store::Commit(const CheckpointRef& ref, const std::string& manifest_json) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  return client_->PutObject(KeyOf(ref, kManifestName), manifest_json);
}

Status S3Store::Delete(const CheckpointRef& ref) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  CEDANA_RETURN_IF_ERROR(client_->DeleteObject(KeyOf(ref, kManifestName)));
  CEDANA_ASSIGN_OR_RETURN(auto keys, client_->ListKeys(location_.Key(ref.Path() + "/")));
  for (const std::string& key : keys) CEDANA_RETURN_IF_ERROR(client_->DeleteObject(key));
  return OkStatus();
}

Result<std::unique_ptr<ByteSource>> S3Store::OpenStream(const CheckpointRef& ref, int index) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  std::string key = KeyOf(ref, StreamName(index));
  CEDANA_ASSIGN_OR_RETURN(s3::ObjectInfo info, client_->HeadObject(key));
  return std::unique_ptr<ByteSource>(
      std::make_unique<S3Source>(client_, std::move(key), info, parts_));
}

Result<std::string> S3Store::ReadManifest(const CheckpointRef& ref) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  Result<std::string> data = client_->GetObject(KeyOf(ref, kManifestName), kMaxManifestBytes);
  if (!data.has_value() && data.error().code() == Code::kNotFound) {
    return NotFoundError("checkpoint " + ref.Path() + " in " + Describe() +
                         " is not committed (no manifest.json)");
  }
  return data;
}

Status S3Store::WriteLineage(const std::string& owner, const std::string& label,
                             const std::string& json) {
  CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", owner));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("label", label));
  return client_->PutObject(location_.Key(owner + "/" + label + "/" + kLineageName), json);
}

Result<std::string> S3Store::ReadLineage(const std::string& owner, const std::string& label) {
  CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", owner));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("label", label));
  return client_->GetObject(location_.Key(owner + "/" + label + "/" + kLineageName),
                            kMaxManifestBytes);
}

Status S3Store::WriteFile(const CheckpointRef& ref, const std::string& name,
                          std::string_view data) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("file name", name));
  return client_->PutObject(KeyOf(ref, name), data);
}

Result<std::string> S3Store::ReadFile(const CheckpointRef& ref, const std::string& name,
                                      size_t max_bytes) {
  CEDANA_RETURN_IF_ERROR(ValidateRef(ref));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("file name", name));
  return client_->GetObject(KeyOf(ref, name), max_bytes);
}

std::string S3Store::ChunksPrefix(const std::string& owner, const std::string& label) const {
  return location_.Key(owner + "/" + label + "/" + kChunksDirName + "/");
}

Result<std::unique_ptr<ChunkWriter>> S3Store::WriteChunks(const std::string& owner,
                                                          const std::string& label) {
  CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", owner));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("label", label));
  return std::unique_ptr<ChunkWriter>(
      std::make_unique<S3ChunkWriter>(client_, ChunksPrefix(owner, label)));
}

Status S3Store::ReadChunk(const ChunkRef& chunk, size_t max_bytes, std::string* into) {
  CEDANA_RETURN_IF_ERROR(ValidateChunk(chunk));
  CEDANA_ASSIGN_OR_RETURN(
      *into, client_->GetObject(ChunksPrefix(chunk.owner, chunk.label) + chunk.digest, max_bytes));
  return OkStatus();
}

Result<std::vector<std::string>> S3Store::ListChunks(const std::string& owner,
                                                     const std::string& label) {
  CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", owner));
  CEDANA_RETURN_IF_ERROR(ValidateComponent("label", label));
  const std::string prefix = ChunksPrefix(owner, label);
  CEDANA_ASSIGN_OR_RETURN(auto keys, client_->ListKeys(prefix));
  std::vector<std::string> digests;
  for (const std::string& key : keys) {
    std::string name = key.substr(prefix.size());
    if (IsChunkDigest(name)) digests.push_back(std::move(name));
  }
  return digests;
}

Status S3Store::DeleteChunk(const ChunkRef& chunk) {
  CEDANA_RETURN_IF_ERROR(ValidateChunk(chunk));
  return client_->DeleteObject(ChunksPrefix(chunk.owner, chunk.label) + chunk.digest);
}

Result<std::vector<CheckpointRef>> S3Store::List(const std::optional<std::string>& owner,
                                                 const std::optional<std::string>& label) {
  std::string rel;
  if (owner.has_value()) {
    CEDANA_RETURN_IF_ERROR(ValidateComponent("owner", *owner));
    rel = *owner + "/";
    if (label.has_value()) {
      CEDANA_RETURN_IF_ERROR(ValidateComponent("label", *label));
      rel += *label + "/";
    }
  }
  std::string base = location_.Key("");  // "<prefix>/" or ""
  CEDANA_ASSIGN_OR_RETURN(auto keys, client_->ListKeys(base + rel));
  std::vector<CheckpointRef> refs;
  for (const std::string& key : keys) {
    auto named = RefOfKey(std::string_view(key).substr(base.size()));
    if (!named.has_value() || named->second != kManifestName) continue;
    if (!label.has_value() || named->first.label == *label) refs.push_back(std::move(named->first));
  }
  return refs;
}

Result<std::vector<CheckpointRef>> S3Store::ListUncommitted() {
  std::string base = location_.Key("");
  CEDANA_ASSIGN_OR_RETURN(auto keys, client_->ListKeys(base));
  std::map<std::string, std::pair<CheckpointRef, bool>> seen;  // path -> (ref, has a manifest)
  for (const std::string& key : keys) {
    auto named = RefOfKey(std::string_view(key).substr(base.size()));
    if (!named.has_value()) continue;
    auto& [ref, committed] =
        seen.try_emplace(named->first.Path(), named->first, false).first->second;
    committed = committed || named->second == kManifestName;
  }
  std::vector<CheckpointRef> refs;
  for (auto& [path, entry] : seen) {
    if (!entry.second) refs.push_back(std::move(entry.first));
  }
  return refs;
}

}  // namespace cedana::storage
