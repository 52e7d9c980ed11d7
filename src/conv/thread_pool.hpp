// The engine's own thread pool: threads-1 workers plus the calling thread. run(tasks, fn) calls
// fn(task, worker) once for every task in [0, tasks) and returns when all are done; worker is in
// [0, size()) and indexes per-thread scratch. Each thread starts on its own contiguous share of the
// tasks (neighbouring tiles stay on one core: their shared input rows and output cache lines are not
// passed between cores) and then helps with what the others have left, so a thread the OS delays
// does not hold the job up. Which thread runs a task therefore varies, and the kernels must give the
// same result whichever does (they do: no reduction is split across tasks).
//
// A worker takes part in a job only if it arrives while the job is open: once the caller has taken
// every task, it closes the job and waits only for the workers that joined it. A worker that is
// asleep or descheduled when a job starts therefore costs that job its help, never a wait for it.
//
// Where a user shares an OpenMP runtime's threads (nova/conv/openmp_threads.hpp), run() makes each job a
// parallel region of that runtime instead: its threads (thread 0 the caller) take the shares and help
// each other the same way, and the pool's own workers are not started (they start on the first job
// run without it). A job there waits for every thread of the team, as OpenMP's regions do.
//
// One pool per thread count serves every plan of the process (shared()), as OpenMP's one team does:
// a network runs one plan per layer back to back, and a pool per plan would leave the previous
// layers' workers spinning on the cores the next layer needs (measured here, 8 plans of
// 1x128x28x28 in a chain on 2 cores: 0.62-0.72 ms a layer against 0.43 for one plan, with a 0.2 ms
// spin). Jobs of different plans on one pool run one at a time. A run() from inside a task, or in a
// process forked after the pool started (its workers are not there), runs its tasks on the calling
// thread. A task that throws on the calling thread ends the job (tasks not started are dropped) and
// the exception leaves run(); tasks run by workers must not throw (the engine's never do).
//
// Waiting: an execute is a few short jobs back to back (input copy, then blocks of tiles), each often
// well under a millisecond, and a sleep/wake through the kernel is slow on a VM (measured here: about
// 0.2 ms for the futex wake of a worker whose vCPU went idle). So both sides spin before they block
// on a condition variable, in two regimes:
// - inside an execute (a Burst is alive), for up to kBurstSpin: the next job is microseconds away;
// - otherwise for the idle limit, kDefaultIdleSpin or NOVA_SPIN_US microseconds from the environment
//   (0: block at once). It is short because between executes the cores may be wanted by others: in a
//   PyTorch network nova's layers alternate with PyTorch's own OpenMP threads (measured here, VGG of
//   validation/, batch 16: a 2 ms idle spin took 8.6-11.5 ms a forward against 5.0-6.4 at 0.2 ms).
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

struct OpenMpTeam;  // openmp_team.hpp

class ThreadPool {
 public:
  static constexpr std::chrono::microseconds kDefaultIdleSpin{200};
  static constexpr std::chrono::microseconds kBurstSpin{50000};

  // While a Burst is alive (Plan::execute holds one), the pool's threads spin for the next job for up
  // to kBurstSpin instead of the idle limit.
  class Burst {
   public:
    explicit Burst(ThreadPool& pool) : pool_(pool) { pool_.bursts_.fetch_add(1, std::memory_order_relaxed); }
    ~Burst() { pool_.bursts_.fetch_sub(1, std::memory_order_relaxed); }
    Burst(const Burst&) = delete;
    Burst& operator=(const Burst&) = delete;

   private:
    ThreadPool& pool_;
  };

  explicit ThreadPool(int threads);
  // The process's pool of `threads` threads, made on first use, shared by all who ask while any
  // holds it.
  static std::shared_ptr<ThreadPool> shared(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }
  std::chrono::microseconds idle_spin_limit() const { return idle_spin_; }
  void run(std::size_t tasks, const std::function<void(std::size_t task, int worker)>& fn);

 private:
  void worker_loop(int worker);
  void drain(int worker);
  void share_tasks(std::size_t tasks);
  void drop_remaining_tasks();
  void run_on_workers(std::size_t tasks, const std::function<void(std::size_t, int)>& fn);
  void run_on_openmp(const OpenMpTeam& team, std::size_t tasks,
                     const std::function<void(std::size_t, int)>& fn);
  void run_inline(std::size_t tasks, const std::function<void(std::size_t, int)>& fn);
  template <class Done>
  bool spin_until(const Done& done) const;

  int threads_;
  std::chrono::microseconds idle_spin_;
  std::atomic<int> bursts_{0};        // Bursts alive
  int owner_pid_;                     // the process that made the pool
  std::vector<std::thread> workers_;  // started by the first job that runs on them
  std::mutex run_mutex_;              // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(std::size_t, int)>* job_ = nullptr;
  struct alignas(64) Range {  // one thread's share: [next, end), next taken by fetch_add
    std::atomic<std::size_t> next{0};
    std::size_t end = 0;
  };
  std::unique_ptr<Range[]> ranges_;
  bool open_ = false;           // the current job still takes workers (under mutex_)
  std::atomic<int> joined_{0};  // workers inside the current job
  unsigned long generation_ = 0;
  std::atomic<unsigned long> published_{0};  // generation_, readable without the lock
  bool stop_ = false;
};

// The idle spin limit NOVA_SPIN_US asks for (microseconds, 0 to 1000000), or kDefaultIdleSpin when it is
// unset.
// A value that is not such a number is an error (nova::Error naming the variable).
std::chrono::microseconds spin_limit_from_environment();

}  // namespace nova::conv
