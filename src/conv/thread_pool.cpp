#include "thread_pool.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <string_view>
#include <system_error>

#include "nova/error.hpp"
#include "openmp_team.hpp"

namespace nova::conv {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The pool whose job this thread is running a task of (nullptr outside tasks): a run() from inside a
// task runs inline instead of waiting on the job it is part of.
thread_local const ThreadPool* current_pool = nullptr;
thread_local int current_worker = 0;  // its worker index there

struct PoolRegistry {
  std::mutex mutex;
  std::map<int, std::weak_ptr<ThreadPool>> pools;
};

}  // namespace

std::shared_ptr<ThreadPool> ThreadPool::shared(int threads) {
  static auto* registry = new PoolRegistry;  // never destroyed: plans may outlive static destruction
  const int n = threads < 1 ? 1 : threads;
  std::lock_guard<std::mutex> lock(registry->mutex);
  std::weak_ptr<ThreadPool>& slot = registry->pools[n];
  std::shared_ptr<ThreadPool> pool = slot.lock();
  if (!pool || pool->owner_pid_ != static_cast<int>(getpid())) {
    pool = std::make_shared<ThreadPool>(n);
    slot = pool;
  }
  return pool;
}

// Spins until done() or the limit has passed; true when done() held. The limit is the idle one,
// counted from the last moment a Burst was seen alive, and at most kBurstSpin in all. The clock and the
// bursts are read every 64 iterations only.
template <class Done>
bool ThreadPool::spin_until(const Done& done) const {
  const auto start = std::chrono::steady_clock::now();
  auto idle_deadline = start + idle_spin_;
  const auto burst_deadline = start + kBurstSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    const auto now = std::chrono::steady_clock::now();
    if (bursts_.load(std::memory_order_relaxed) > 0) idle_deadline = now + idle_spin_;
    if (now >= idle_deadline || now >= burst_deadline) return done();
  }
}

std::chrono::microseconds spin_limit_from_environment() {
  const char* text = std::getenv("NOVA_SPIN_US");
  if (text == nullptr) return ThreadPool::kDefaultIdleSpin;
  const std::string_view s(text);
  long value = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value < 0 || value > 1000000)
    throw Error("NOVA_SPIN_US must be a whole number of microseconds from 0 to 1000000, got '" +
                std::string(s) + "'");
  return std::chrono::microseconds(value);
}

ThreadPool::ThreadPool(int threads)
    : threads_(threads < 1 ? 1 : threads),
      idle_spin_(spin_limit_from_environment()),
      owner_pid_(static_cast<int>(getpid())),
      ranges_(std::make_unique<Range[]>(static_cast<std::size_t>(threads_))) {}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::drain(int worker) {
  struct InTask {  // marks this thread as inside a task of this pool, restored however drain ends
    const ThreadPool* outer_pool = current_pool;
    int outer_worker = current_worker;
    InTask(const ThreadPool* pool, int w) {
      current_pool = pool;
      current_worker = w;
    }
    ~InTask() {
      current_pool = outer_pool;
      current_worker = outer_worker;
    }
  } in_task(this, worker);
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

void ThreadPool::run_inline(std::size_t tasks, const std::function<void(std::size_t, int)>& fn) {
  // Inside a task the per-thread scratch of this thread's worker index is the one this thread may use.
  const int worker = current_pool != nullptr ? current_worker : 0;
  for (std::size_t t = 0; t < tasks; ++t) fn(t, worker);
}

void ThreadPool::worker_loop(int worker) {
  unsigned long seen = 0;
  for (;;) {
    spin_until([&] { return published_.load(std::memory_order_acquire) != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (!open_) continue;  // arrived after the caller finished the job alone
      joined_.fetch_add(1, std::memory_order_relaxed);
    }
    drain(worker);
    // The last worker out wakes the caller if it went to sleep; the notify under the mutex cannot be
    // lost (the caller checks joined_ under the same mutex before it waits).
    if (joined_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::share_tasks(std::size_t tasks) {
  const auto n = static_cast<std::size_t>(threads_);
  for (std::size_t w = 0; w < n; ++w) {
    ranges_[w].next.store(tasks * w / n, std::memory_order_relaxed);
    ranges_[w].end = tasks * (w + 1) / n;
  }
}

void ThreadPool::drop_remaining_tasks() {
  for (int w = 0; w < threads_; ++w) {
    Range& r = ranges_[static_cast<std::size_t>(w)];
    r.next.store(r.end, std::memory_order_relaxed);
  }
}

void ThreadPool::run(std::size_t tasks, const std::function<void(std::size_t, int)>& fn) {
  if (tasks == 0) return;
  if (threads_ == 1 || tasks == 1 || current_pool != nullptr || owner_pid_ != static_cast<int>(getpid()))
    return run_inline(tasks, fn);
  std::lock_guard<std::mutex> one_job(run_mutex_);
  if (const OpenMpTeam* team = shared_openmp_team()) return run_on_openmp(*team, tasks, fn);
  run_on_workers(tasks, fn);
}

void ThreadPool::run_on_openmp(const OpenMpTeam& team, std::size_t tasks,
                               const std::function<void(std::size_t, int)>& fn) {
  // No exception may cross the runtime's C frames: the first one thrown in any thread is kept, the
  // tasks not started are dropped, and it leaves run() once the region has ended.
  struct Region {
    ThreadPool& pool;
    const OpenMpTeam& team;
    std::mutex mutex;
    std::exception_ptr error;
  } region{*this, team, {}, {}};
  job_ = &fn;
  share_tasks(tasks);
  team.parallel(
      [](void* data) {
        auto& r = *static_cast<Region*>(data);
        const int worker = r.team.thread_num();
        if (worker < 0 || worker >= r.pool.threads_) return;  // cannot happen: the team is at most threads_
        try {
          r.pool.drain(worker);
        } catch (...) {
          r.pool.drop_remaining_tasks();
          std::lock_guard<std::mutex> lock(r.mutex);
          if (!r.error) r.error = std::current_exception();
        }
      },
      &region, static_cast<unsigned>(threads_), 0);
  job_ = nullptr;
  if (region.error) std::rethrow_exception(region.error);
}

void ThreadPool::run_on_workers(std::size_t tasks, const std::function<void(std::size_t, int)>& fn) {
  if (workers_.empty()) {
    try {
      for (int w = 1; w < threads_; ++w) workers_.emplace_back([this, w] { worker_loop(w); });
    } catch (const std::system_error& e) {
      // The system would not start them all (thread or address-space limits). This was std::system_error's
      // bare "Resource temporarily unavailable", and the next job ran on the workers that had started. The
      // started ones are stopped, and every job says why it cannot run.
      const std::size_t started = workers_.size();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
      }
      wake_.notify_all();
      for (auto& t : workers_) t.join();
      workers_.clear();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = false;
      }
      throw Error("could not start the " + std::to_string(threads_ - 1) + " worker threads of a pool of " +
                  std::to_string(threads_) + " threads (" + e.what() + " after " + std::to_string(started) +
                  "); ask for fewer threads");
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    share_tasks(tasks);
    open_ = true;
    ++generation_;
    published_.store(generation_, std::memory_order_release);
  }
  wake_.notify_all();
  // Once every task is taken (or a task of the caller's threw: the tasks not started are dropped), the
  // job is closed to late arrivals and the caller waits for the workers inside it, so that no worker
  // can touch `fn` after run returns.
  struct Finish {
    ThreadPool& pool;
    ~Finish() {
      pool.drop_remaining_tasks();  // no-op unless a task threw
      {
        std::lock_guard<std::mutex> lock(pool.mutex_);
        pool.open_ = false;
      }
      const auto finished = [&] { return pool.joined_.load(std::memory_order_acquire) == 0; };
      if (!pool.spin_until(finished)) {
        std::unique_lock<std::mutex> lock(pool.mutex_);
        pool.done_.wait(lock, finished);
      }
      std::lock_guard<std::mutex> lock(pool.mutex_);
      pool.job_ = nullptr;
    }
  } finish{*this};
  drain(0);
}

}  // namespace nova::conv
