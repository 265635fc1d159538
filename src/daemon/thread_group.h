// ThreadGroup: the threads a component starts for work that outlives the call that started it
// (a client's connection, a controller's operation). None is detached: a finished thread is
// joined when the next one starts, and Wait (or the destructor) joins the rest, so no thread
// outlives the objects its work uses as long as the group is declared after them. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>

namespace cedana::daemon {

class ThreadGroup {
 public:
  // `name` is the component, for the log line of work that threw.
  explicit ThreadGroup(std::string name) : name_(std::move(name)) {}
  ~ThreadGroup() { Wait(); }
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;

  // Runs `work` on a thread of the group. An exception it throws is logged, not thrown on.
  void Start(std::function<void()> work);

  // How many threads of the group have work that has not finished.
  size_t Running() const;

  // Joins every thread of the group, calling `waiting(n)` every `interval` while n still run
  // (to say why a stop takes time). Work started meanwhile is waited for too.
  void Wait(std::chrono::milliseconds interval = std::chrono::seconds(10),
            const std::function<void(size_t)>& waiting = {});

 private:
  struct Member {
    std::thread thread;
    bool finished = false;  // guarded by mu_
  };
  void JoinFinishedLocked();

  const std::string name_;
  mutable std::mutex mu_;
  std::condition_variable finished_;
  std::list<Member> members_;  // guarded by mu_; a list, so that a member stays where it is
};

}  // namespace cedana::daemon
