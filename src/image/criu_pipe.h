// Writing an image into the pipe CRIU reads it from in a direct restore (criu restore --stream;
// image/direct_restore_source.h). The pipe is made non-blocking and larger, so that a writer
// waiting for CRIU notices within 200 ms that the restore stopped, and CRIU wakes less often.
// Stateless functions; thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace cedana::image {

// Makes `pipe_fd` non-blocking and 1 MiB large; `name` is the image, for the error.
Status PrepareCriuPipe(int pipe_fd, const std::string& name);

// Sends `file_fd` from *offset up to `end` into the pipe, advancing *offset. kAborted when CRIU
// closed the pipe, the file shrank, or `stopped()` turned true while CRIU was not reading.
Status SendFileToCriu(int pipe_fd, int file_fd, off_t* offset, uint64_t end,
                      const std::string& name, const std::function<bool()>& stopped);

// Sends the whole file `images_dir`/`name` (an image already written and verified) into the
// pipe; kAborted as SendFileToCriu.
Status SendImageFileToCriu(int pipe_fd, const std::string& images_dir, const std::string& name,
                           const std::function<bool()>& stopped);

// How many of the `written` bytes that went into `pipe_fd` CRIU has read: `written` less what the
// pipe still holds; 0 when the pipe cannot say.
uint64_t ReadByCriu(int pipe_fd, uint64_t written);

// Writes all of `data` into the pipe; kAborted as SendFileToCriu.
Status WriteToCriu(int pipe_fd, std::string_view data, const std::string& name,
                   const std::function<bool()>& stopped);

}  // namespace cedana::image
