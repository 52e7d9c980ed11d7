#include "thread_pool.hpp"

namespace nova::conv {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or `limit` has passed; true when done() held. The clock is read every 64
// iterations only.
template <class Done>
bool spin_until(const Done& done, std::chrono::microseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

}  // namespace

ThreadPool::ThreadPool(int threads)
    : threads_(threads < 1 ? 1 : threads), ranges_(std::make_unique<Range[]>(static_cast<std::size_t>(threads_))) {
  for (int w = 1; w < threads_; ++w) workers_.emplace_back([this, w] { worker_loop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::drain(int worker) {
  // Own range first, in order; then help the others from the front of what they have left.
  const auto n = static_cast<std::size_t>(threads_);
  for (std::size_t k = 0; k < n; ++k) {
    Range& r = ranges_[(static_cast<std::size_t>(worker) + k) % n];
    for (;;) {
      const std::size_t task = r.next.fetch_add(1, std::memory_order_relaxed);
      if (task >= r.end) break;
      (*job_)(task, worker);
    }
  }
}

void ThreadPool::worker_loop(int worker) {
  unsigned long seen = 0;
  for (;;) {
    spin_until([&] { return published_.load(std::memory_order_acquire) != seen; }, kSpin);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    drain(worker);
    // The last worker out wakes the caller if it went to sleep; the notify under the mutex cannot be
    // lost (the caller checks active_ under the same mutex before it waits).
    if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::run(std::size_t tasks, const std::function<void(std::size_t, int)>& fn) {
  if (tasks == 0) return;
  if (threads_ == 1 || tasks == 1) {
    for (std::size_t t = 0; t < tasks; ++t) fn(t, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    const auto n = static_cast<std::size_t>(threads_);
    for (std::size_t w = 0; w < n; ++w) {
      ranges_[w].next.store(tasks * w / n, std::memory_order_relaxed);
      ranges_[w].end = tasks * (w + 1) / n;
    }
    active_.store(threads_ - 1, std::memory_order_relaxed);
    ++generation_;
    published_.store(generation_, std::memory_order_release);
  }
  wake_.notify_all();
  drain(0);
  const auto finished = [&] { return active_.load(std::memory_order_acquire) == 0; };
  if (!spin_until(finished, kSpin)) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, finished);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  job_ = nullptr;
}

}  // namespace nova::conv
