// The most tar streams one checkpoint is packed into (checkpoint.streams, a dump's --streams):
// each stream is a thread and an open file (or an S3 multipart upload) for the whole dump.
#pragma once

namespace cedana {

inline constexpr int kMaxCheckpointStreams = 64;

}  // namespace cedana
