// ByteSink / ByteSource: where the image pipeline writes a stream and reads it back. A storage
// backend (local dir, s3) hands these out, so the pipeline never knows where bytes live.
// Not thread-safe: one user per object (different streams run on different threads).
#pragma once

#include <cstddef>
#include <memory>

#include "common/result.h"

namespace cedana::storage {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Appends all of data, or fails. A failed sink stays failed.
  virtual Status Write(const void* data, size_t size) = 0;
  // Flushes and makes the bytes durable (fsync / complete the upload). A sink destroyed
  // without Close() may leave partial bytes behind: the caller deletes the checkpoint.
  virtual Status Close() = 0;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to size bytes; 0 means end of stream.
  virtual Result<size_t> Read(void* data, size_t size) = 0;
  // The open file the bytes come from, whose offsets are the stream's positions, for a reader
  // that serves a range again in place (a direct restore, image/direct_unpack.h); -1 when the
  // bytes do not come from a file (S3). Owned by the source.
  virtual int FileDescriptor() const { return -1; }
};

}  // namespace cedana::storage
