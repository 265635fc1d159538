#include "daemon/thread_group.h"

#include <algorithm>
#include <exception>

#include "common/log.h"

namespace cedana::daemon {

void ThreadGroup::Start(std::function<void()> work) {
  std::lock_guard<std::mutex> lock(mu_);
  JoinFinishedLocked();
  auto member = members_.emplace(members_.end());
  // The thread marks itself under mu_, which is held until it is stored in its member.
  member->thread = std::thread([this, member, work = std::move(work)] {
    try {
      work();
    } catch (const std::exception& e) {
      log::Error("{}: internal error: {}", name_, e.what());
    } catch (...) {
      log::Error("{}: internal error (an exception that is not a std::exception)", name_);
    }
    std::lock_guard<std::mutex> done(mu_);
    member->finished = true;
    finished_.notify_all();
  });
}

void ThreadGroup::JoinFinishedLocked() {
  for (auto it = members_.begin(); it != members_.end();) {
    if (!it->finished) {
      ++it;
      continue;
    }
    // It has left its work and only returns now: the join does not wait for anything it does.
    it->thread.join();
    it = members_.erase(it);
  }
}

size_t ThreadGroup::Running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<size_t>(
      std::count_if(members_.begin(), members_.end(), [](const Member& m) { return !m.finished; }));
}

void ThreadGroup::Wait(std::chrono::milliseconds interval,
                       const std::function<void(size_t)>& waiting) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    JoinFinishedLocked();
    if (members_.empty()) return;
    if (!finished_.wait_for(lock, interval,
                            [this] {
                              return std::any_of(members_.begin(), members_.end(),
                                                 [](const Member& m) { return m.finished; });
                            }) &&
        waiting) {
      waiting(members_.size());
    }
  }
}

}  // namespace cedana::daemon
