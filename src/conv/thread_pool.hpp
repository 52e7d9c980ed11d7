// The engine's own thread pool: threads-1 workers plus the calling thread. run(tasks, fn) calls
// fn(task, worker) once for every task in [0, tasks) and returns when all are done; worker is in
// [0, size()) and indexes per-thread scratch. Each thread starts on its own contiguous share of the
// tasks (neighbouring tiles stay on one core: their shared input rows and output cache lines are not
// passed between cores) and then helps with what the others have left, so a thread the OS delays
// does not hold the job up. Which thread runs a task therefore varies, and the kernels must give the
// same result whichever does (they do: no reduction is split across tasks).
//
// Waiting: an execute is a few short jobs back to back (input copy, then blocks of tiles), each often
// well under a millisecond, and a sleep/wake through the kernel costs tens of microseconds on a VM.
// So both sides spin first, as OpenMP runtimes do: workers for up to kSpin after a job for the next
// one, the caller for up to kSpin for the workers to finish; only then they block on a condition
// variable.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace nova::conv {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }
  void run(std::size_t tasks, const std::function<void(std::size_t task, int worker)>& fn);

 private:
  static constexpr std::chrono::microseconds kSpin{200};
  void worker_loop(int worker);
  void drain(int worker);

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(std::size_t, int)>* job_ = nullptr;
  struct alignas(64) Range {  // one thread's share: [next, end), next taken by fetch_add
    std::atomic<std::size_t> next{0};
    std::size_t end = 0;
  };
  std::unique_ptr<Range[]> ranges_;
  std::atomic<int> active_{0};  // workers still inside the current job
  unsigned long generation_ = 0;
  std::atomic<unsigned long> published_{0};  // generation_, readable without the lock
  bool stop_ = false;
};

}  // namespace nova::conv
