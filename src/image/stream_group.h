// StreamGroup: runs one worker thread per stream and collects the first failure. When a
// worker fails, the group sets a cancel flag that the other workers' taps check, so they stop
// early; the error reported is the first one, not the cancellations it caused. Used by one
// caller thread; the workers share only the cancel flag and the first-error slot (locked).
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

#include "common/status.h"

namespace cedana::image {

class StreamGroup {
 public:
  // `name(i)` gives the context for stream i's error ("stream-1", "stream-1 of a/b/c").
  explicit StreamGroup(std::function<std::string(int)> name) : name_(std::move(name)) {}

  // Runs work(0) .. work(n-1) on n threads and waits for all of them. Exceptions thrown by a
  // worker become kInternal (logged once). Returns the first error with its stream's context.
  Status Run(int n, const std::function<Status(int)>& work);

  // Stops the workers early from outside (their caller gave up); Run then returns their
  // cancellation errors.
  void Cancel() { cancel_.store(true); }
  const std::atomic<bool>* cancel_flag() const { return &cancel_; }
  bool cancelled() const { return cancel_.load(); }

 private:
  void Fail(int index, Status status);

  std::function<std::string(int)> name_;
  std::atomic<bool> cancel_{false};
  std::mutex mu_;
  Status first_error_;  // guarded by mu_
};

}  // namespace cedana::image
