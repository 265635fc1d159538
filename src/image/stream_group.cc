#include "image/stream_group.h"

#include <exception>
#include <thread>
#include <vector>

#include "common/log.h"

namespace cedana::image {

void StreamGroup::Fail(int index, Status status) {
  std::lock_guard lock(mu_);
  if (first_error_.ok()) first_error_ = std::move(status).WithContext(name_(index));
  // Set under the lock, after recording: errors caused by the cancellation come later.
  cancel_.store(true);
}

Status StreamGroup::Run(int n, const std::function<Status(int)>& work) {
  {
    // jthreads join when the vector goes out of scope, also if starting one of them throws.
    std::vector<std::jthread> threads;
    try {
      threads.reserve(n);
      for (int i = 0; i < n; ++i) {
        threads.emplace_back([this, i, &work] {
          try {
            Status s = work(i);
            if (!s.ok()) Fail(i, std::move(s));
          } catch (const std::exception& e) {
            log::Error("image: stream-{} worker threw: {}", i, e.what());
            Fail(i, InternalError(std::string("unexpected exception: ") + e.what()));
          } catch (...) {
            log::Error("image: stream-{} worker threw a non-standard exception", i);
            Fail(i, InternalError("unexpected non-standard exception"));
          }
        });
      }
    } catch (const std::exception& e) {
      log::Error("image: cannot start stream workers: {}", e.what());
      Fail(static_cast<int>(threads.size()),
           InternalError(std::string("cannot start thread: ") + e.what()));
    }
  }
  std::lock_guard lock(mu_);
  return first_error_;
}

}  // namespace cedana::image
