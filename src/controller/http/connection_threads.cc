#include "controller/http/connection_threads.h"

#include <thread>

#include "common/log.h"

namespace cedana::controller {

namespace {
// "the task was taken", in the type this cpp-httplib's enqueue returns (void or bool).
template <typename R>
R Taken() {
  if constexpr (!std::is_void_v<R>) return true;
}
}  // namespace

EnqueueResult ConnectionThreads::enqueue(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_ >= max_threads_) {
    waiting_.push_back(std::move(fn));
  } else {
    ++running_;
    std::thread([this, f = std::move(fn)]() mutable { Run(std::move(f)); }).detach();
  }
  return Taken<EnqueueResult>();
}

void ConnectionThreads::Run(std::function<void()> fn) {
  for (;;) {
    try {
      fn();
    } catch (const std::exception& e) {
      log::Error("api: a connection ended with an exception: {}", e.what());
    } catch (...) {
      log::Error("api: a connection ended with an unknown exception");
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (waiting_.empty()) {
      --running_;
      idle_.notify_all();
      return;
    }
    fn = std::move(waiting_.front());
    waiting_.pop_front();
  }
}

void ConnectionThreads::shutdown() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return running_ == 0; });
}

size_t ConnectionThreads::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

}  // namespace cedana::controller
