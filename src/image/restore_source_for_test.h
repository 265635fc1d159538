// Test helpers for what a direct restore serves CRIU (image/direct_restore_source.h) and for
// the stores its chunks live in. Test-only.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "common/unique_fd.h"
#include "image/direct_restore_source.h"
#include "storage/local_store.h"

namespace cedana::image::testing {

// What CRIU would read from the pipe that Send() fills, and what Send returned.
struct Sent {
  std::string bytes;
  Status status;
};
inline Sent SendThroughPipe(DirectRestoreSource& source, const std::string& name) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {"", ErrnoStatus(errno, "pipe")};
  UniqueFd r(fds[0]), w(fds[1]);
  Sent sent;
  std::thread reader([&] {
    char buf[65536];
    for (ssize_t n; (n = ::read(r.get(), buf, sizeof buf)) > 0;) sent.bytes.append(buf, n);
  });
  sent.status = source.Send(name, w.get());
  w.Reset();
  reader.join();
  return sent;
}

// What CRIU reads of an image in place: each run from its file, in order.
inline std::string ReadRuns(const InPlaceImage& image) {
  std::string out;
  for (const StoredRun& run : image.runs) {
    std::string bytes(run.length, '\0');
    ssize_t n = ::pread(image.files.at(run.file).get(), bytes.data(), bytes.size(),
                        static_cast<off_t>(run.offset));
    out += bytes.substr(0, n > 0 ? static_cast<size_t>(n) : 0);
  }
  return out;
}

// A store whose WriteFile first removes one chunk, as a sweep of another checkpoint of the label
// would between a pack's listing and its index.
class SweptMeanwhileStore : public storage::LocalStore {
 public:
  using LocalStore::LocalStore;
  Status WriteFile(const storage::CheckpointRef& ref, const std::string& name,
                   std::string_view data) override {
    if (!doomed.empty()) {
      EXPECT_TRUE(DeleteChunk({ref.owner, ref.label, doomed}).ok());
      doomed.clear();
    }
    return LocalStore::WriteFile(ref, name, data);
  }
  std::string doomed;
};

}  // namespace cedana::image::testing
