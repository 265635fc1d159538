// PackImagesDir: CRIU's images dir -> N tar streams, compressed, in a checkpoint store.
#include "image/pack.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "common/checkpoint_streams.h"
#include "common/fs.h"
#include "common/log.h"
#include "image/chunk_pack.h"
#include "image/compressibility.h"
#include "image/stream_group.h"
#include "image/stream_taps.h"
#include "image/tar.h"

namespace cedana::image {
namespace {

struct ImageFile {
  std::string name;
  uint64_t size = 0;
};

// A whole file, or `length` bytes of it from `offset` (a part).
struct PackItem {
  std::string name;
  uint64_t offset = 0, length = 0;
  bool part = false;
};

struct StreamPlan {
  std::vector<PackItem> items;
  uint64_t raw_bytes = kTarTrailerSize;  // tar bytes this stream will hold
};

Result<std::vector<ImageFile>> ListImageFiles(const std::string& dir) {
  CEDANA_ASSIGN_OR_RETURN(auto names, fs::ListDir(dir));
  std::vector<ImageFile> files;
  for (std::string& name : names) {
    struct stat st;
    std::string path = dir + "/" + name;
    if (::lstat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "stat " + path);
    if (!S_ISREG(st.st_mode)) {
      // CRIU's images dir is flat; anything else is not part of the dump.
      log::Debug("image: skipping {} (not a regular file)", path);
      continue;
    }
    if (name.size() > kTarMaxNameLength) {
      return InvalidArgumentError(
          fmt::format("{}: name longer than {} bytes", path, kTarMaxNameLength));
    }
    files.push_back({std::move(name), static_cast<uint64_t>(st.st_size)});
  }
  return files;
}

// Files larger than part_bytes become parts (only with several streams), then the largest item
// goes first onto the least-filled stream: a simple greedy that keeps the streams (and so the
// threads) close to equal in size.
std::vector<StreamPlan> PlanStreams(const std::vector<ImageFile>& files, int streams,
                                    uint64_t part_bytes) {
  std::vector<PackItem> items;
  for (const ImageFile& f : files) {
    if (streams < 2 || part_bytes == 0 || f.size <= part_bytes) {
      items.push_back({f.name, 0, f.size, false});
      continue;
    }
    for (uint64_t off = 0; off < f.size; off += part_bytes)
      items.push_back({f.name, off, std::min(part_bytes, f.size - off), true});
  }
  std::sort(items.begin(), items.end(), [](const PackItem& a, const PackItem& b) {
    if (a.length != b.length) return a.length > b.length;
    return a.name != b.name ? a.name < b.name : a.offset < b.offset;
  });
  std::vector<StreamPlan> plan(streams);
  for (PackItem& item : items) {
    auto least = std::min_element(plan.begin(), plan.end(), [](const auto& a, const auto& b) {
      return a.raw_bytes < b.raw_bytes;
    });
    least->raw_bytes += TarEntrySize(item.length);
    least->items.push_back(std::move(item));
  }
  // In each stream the memory pages come last, in order of file and offset: the head before
  // them holds every other image, so that a direct restore can verify and write them all,
  // and start CRIU, while the pages still arrive.
  for (StreamPlan& p : plan) {
    std::sort(p.items.begin(), p.items.end(), [](const PackItem& a, const PackItem& b) {
      bool a_pages = IsPagesImage(a.name), b_pages = IsPagesImage(b.name);
      if (a_pages != b_pages) return b_pages;
      return a.name != b.name ? a.name < b.name : a.offset < b.offset;
    });
  }
  return plan;
}

// How this stream is stored: the asked codec, unless samples of its items show it would save
// too little (image/compressibility.h).
Result<Codec> ChooseStreamCodec(int index, const std::string& images_dir, const StreamPlan& plan,
                                const PackOptions& options) {
  if (options.codec == Codec::kNone) return Codec::kNone;
  std::vector<ByteRange> ranges;
  for (const PackItem& item : plan.items)
    ranges.push_back({images_dir + "/" + item.name, item.offset, item.length});
  CEDANA_ASSIGN_OR_RETURN(auto verdict, JudgeCompressibility(options.codec, options.level, ranges));
  if (verdict.compress) return options.codec;
  log::Info("image: stream-{} stored raw: {} compressed {} KiB of samples to {} KiB", index,
            CodecName(options.codec), verdict.sampled_bytes >> 10, verdict.compressed_bytes >> 10);
  return Codec::kNone;
}

// One stream's pipeline: tar -> raw counter -> compressor -> stored-bytes hash -> store.
Result<StreamInfo> PackStream(int index, const std::string& images_dir, const StreamPlan& plan,
                              storage::CheckpointStore& store, const storage::CheckpointRef& ref,
                              const PackOptions& options, ProgressReporter* progress,
                              const std::atomic<bool>* cancel) {
  CEDANA_ASSIGN_OR_RETURN(Codec codec, ChooseStreamCodec(index, images_dir, plan, options));
  CEDANA_ASSIGN_OR_RETURN(auto store_sink, store.CreateStream(ref, index));
  auto hashing = std::make_unique<HashingSink>(std::move(store_sink), kNewDigest);
  HashingSink* stored = hashing.get();
  auto head_hashing = std::make_unique<HeadHashingSink>(
      CompressingSink(codec, std::move(hashing), options.level), kNewDigest);
  HeadHashingSink* head_tap = head_hashing.get();
  CountingSink raw(std::move(head_hashing), progress, cancel);
  TarWriter tar(&raw);
  std::optional<StreamHead> head;
  for (const PackItem& item : plan.items) {
    if (!head && IsPagesImage(item.name)) head = head_tap->Seal();
    Status s = item.part ? tar.AddFilePart(images_dir, item.name, item.offset, item.length)
                         : tar.AddFile(images_dir, item.name);
    CEDANA_RETURN_IF_ERROR(s) << "packing " << item.name;
  }
  if (!head) head = head_tap->Seal();
  CEDANA_RETURN_IF_ERROR(tar.Finish());
  CEDANA_RETURN_IF_ERROR(raw.Close());
  return StreamInfo{fmt::format("stream-{}", index),
                    raw.bytes(),
                    stored->bytes(),
                    stored->FinalHex(),
                    std::move(*head),
                    codec != options.codec};
}

}  // namespace

bool IsPagesImage(std::string_view name) { return name.substr(0, 6) == "pages-"; }

Result<PackedImages> PackImagesDir(const std::string& images_dir, storage::CheckpointStore& store,
                                   const storage::CheckpointRef& ref, const PackOptions& options) {
  if (options.streams < 1 || options.streams > kMaxCheckpointStreams) {
    return InvalidArgumentError(fmt::format("streams must be between 1 and {}, got {}",
                                            kMaxCheckpointStreams, options.streams));
  }
  CEDANA_ASSIGN_OR_RETURN(auto files, ListImageFiles(images_dir));
  std::vector<std::string> chunked;
  uint64_t chunked_bytes = 0;
  if (options.dedup) {
    auto pages = std::stable_partition(files.begin(), files.end(),
                                       [](const ImageFile& f) { return !IsPagesImage(f.name); });
    for (auto it = pages; it != files.end(); ++it) {
      chunked.push_back(it->name);
      chunked_bytes += it->size;
    }
    files.erase(pages, files.end());
  }
  std::vector<StreamPlan> plan = PlanStreams(files, options.streams, options.part_bytes);
  uint64_t total = chunked_bytes;
  for (const StreamPlan& p : plan) total += p.raw_bytes;

  ProgressReporter progress(options.progress, total);
  PackedImages packed;
  if (options.dedup) {
    ChunkPackOptions chunking{options.streams, options.codec, options.level};
    auto chunks = PackChunks(images_dir, chunked, store, ref, chunking, &progress, nullptr);
    if (!chunks.has_value())
      return std::move(chunks).error().WithContext(
          fmt::format("packing the memory pages of {} into {}", images_dir, ref.Path()));
    packed.chunk_index = *chunks;
  }
  std::vector<StreamInfo>& infos = packed.streams;
  infos.resize(plan.size());
  StreamGroup group([](int i) { return fmt::format("stream-{}", i); });
  CEDANA_RETURN_IF_ERROR(group.Run(
      options.streams,
      [&](int i) -> Status {
        CEDANA_ASSIGN_OR_RETURN(infos[i], PackStream(i, images_dir, plan[i], store, ref, options,
                                                     &progress, group.cancel_flag()));
        return OkStatus();
      }))
      << "packing " << images_dir << " into " << ref.Path();
  progress.Finish();
  return packed;
}

}  // namespace cedana::image
