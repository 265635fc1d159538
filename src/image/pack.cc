// PackImagesDir: CRIU's images dir -> N tar streams, compressed, in a checkpoint store.
#include "image/pack.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>

#include "common/fs.h"
#include "common/log.h"
#include "image/stream_group.h"
#include "image/stream_taps.h"
#include "image/tar.h"

namespace cedana::image {
namespace {

constexpr int kMaxStreams = 64;

struct ImageFile {
  std::string name;
  uint64_t size = 0;
};

struct StreamPlan {
  std::vector<std::string> names;
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

// Largest file first onto the least-filled stream: a simple greedy that keeps the streams
// (and so the threads) close to equal in size.
std::vector<StreamPlan> PlanStreams(std::vector<ImageFile> files, int streams) {
  std::sort(files.begin(), files.end(), [](const ImageFile& a, const ImageFile& b) {
    return a.size != b.size ? a.size > b.size : a.name < b.name;
  });
  std::vector<StreamPlan> plan(streams);
  for (ImageFile& f : files) {
    auto least = std::min_element(plan.begin(), plan.end(), [](const auto& a, const auto& b) {
      return a.raw_bytes < b.raw_bytes;
    });
    least->raw_bytes += TarEntrySize(f.size);
    least->names.push_back(std::move(f.name));
  }
  return plan;
}

// One stream's pipeline: tar -> raw counter -> compressor -> stored-bytes hash -> store.
Result<StreamInfo> PackStream(int index, const std::string& images_dir, const StreamPlan& plan,
                              storage::CheckpointStore& store, const storage::CheckpointRef& ref,
                              const PackOptions& options, ProgressReporter* progress,
                              const std::atomic<bool>* cancel) {
  CEDANA_ASSIGN_OR_RETURN(auto store_sink, store.CreateStream(ref, index));
  auto hashing = std::make_unique<HashingSink>(std::move(store_sink));
  HashingSink* stored = hashing.get();
  CountingSink raw(CompressingSink(options.codec, std::move(hashing), options.level), progress,
                   cancel);
  TarWriter tar(&raw);
  for (const std::string& name : plan.names) {
    CEDANA_RETURN_IF_ERROR(tar.AddFile(images_dir, name)) << "packing " << name;
  }
  CEDANA_RETURN_IF_ERROR(tar.Finish());
  CEDANA_RETURN_IF_ERROR(raw.Close());
  return StreamInfo{fmt::format("stream-{}", index), raw.bytes(), stored->bytes(),
                    stored->FinalHex()};
}

}  // namespace

Result<std::vector<StreamInfo>> PackImagesDir(const std::string& images_dir,
                                              storage::CheckpointStore& store,
                                              const storage::CheckpointRef& ref,
                                              const PackOptions& options) {
  if (options.streams < 1 || options.streams > kMaxStreams) {
    return InvalidArgumentError(
        fmt::format("streams must be between 1 and {}, got {}", kMaxStreams, options.streams));
  }
  CEDANA_ASSIGN_OR_RETURN(auto files, ListImageFiles(images_dir));
  std::vector<StreamPlan> plan = PlanStreams(std::move(files), options.streams);
  uint64_t total = 0;
  for (const StreamPlan& p : plan) total += p.raw_bytes;

  ProgressReporter progress(options.progress, total);
  std::vector<StreamInfo> infos(plan.size());
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
  return infos;
}

}  // namespace cedana::image
