// ConnectionThreads: the task queue the controller's HTTP server runs its connections on. A
// fixed pool (cpp-httplib's default: 8 threads on these machines) lets eight slow or idle
// clients hold every worker while a token holder waits; here each connection gets a thread of
// its own, up to `max_threads` at once, and only connections beyond that wait for one to end.
// Thread-safe; the server calls enqueue from its accept thread and shutdown once when it stops.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <type_traits>
#include <utility>

#include <httplib.h>

namespace cedana::controller {

// cpp-httplib 0.11 (Debian 12) declares enqueue void; later versions (0.18 in Debian 13) return
// whether the task was taken.
using EnqueueResult =
    decltype(std::declval<httplib::TaskQueue&>().enqueue(std::function<void()>()));

class ConnectionThreads : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(size_t max_threads) : max_threads_(max_threads) {}
  ~ConnectionThreads() override { shutdown(); }

  EnqueueResult enqueue(std::function<void()> fn) override;  // every task is taken
  // Returns once every connection has ended (the server has stopped accepting and each
  // connection ends at its next read timeout).
  void shutdown() override;
  size_t running() const;

 private:
  void Run(std::function<void()> fn);

  const size_t max_threads_;
  mutable std::mutex mu_;
  std::condition_variable idle_;
  size_t running_ = 0;
  std::deque<std::function<void()>> waiting_;
};

}  // namespace cedana::controller
