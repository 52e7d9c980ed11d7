// The engine's thread pool: every task exactly once, per-thread scratch indices never shared by two
// tasks at the same time, jobs of several callers on one shared pool, a run() from inside a task,
// workers that arrive after the job is done (no spinning), a task that throws, a forked child, and the
// NOVA_SPIN_US setting.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/address_space_limit.hpp"
#include "conv/thread_pool.hpp"
#include "nova/error.hpp"

namespace nova::conv {
namespace {

// Sets an environment variable for the lifetime of the guard and puts the old value back.
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~EnvGuard() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Runs `tasks` tasks on `pool` and checks that each ran once and that no worker index was in use by two
// tasks at once (the engine's per-thread scratch depends on it).
void check_job(ThreadPool& pool, std::size_t tasks) {
  std::vector<std::atomic<int>> ran(tasks);
  std::vector<std::atomic<int>> busy(static_cast<std::size_t>(pool.size()));
  std::atomic<int> clashes{0}, bad_worker{0};
  pool.run(tasks, [&](std::size_t t, int worker) {
    if (worker < 0 || worker >= pool.size()) {
      ++bad_worker;
      return;
    }
    if (busy[static_cast<std::size_t>(worker)].exchange(1) != 0) ++clashes;
    ran[t].fetch_add(1);
    volatile double sink = 0.0;  // a little work so that the threads overlap
    for (int i = 0; i < 200; ++i) sink = sink + static_cast<double>(i) * 0.5;
    busy[static_cast<std::size_t>(worker)].store(0);
  });
  ASSERT_EQ(bad_worker.load(), 0);
  ASSERT_EQ(clashes.load(), 0);
  for (std::size_t t = 0; t < tasks; ++t) ASSERT_EQ(ran[t].load(), 1) << "task " << t << " of " << tasks;
}

TEST(ThreadPool, EveryTaskRunsOnceOnAWorkerOfItsOwn) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int round = 0; round < 20; ++round)
      for (std::size_t tasks :
           {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64}, std::size_t{1000}})
        check_job(pool, tasks);
  }
}

TEST(ThreadPool, WorkersThatArriveAfterTheJobLeaveItAlone) {
  // No spinning: workers block between jobs, so they often wake after the caller has taken every
  // task of a small job. Such a job must neither wait for them nor be run twice.
  EnvGuard spin("NOVA_SPIN_US", "0");
  ThreadPool pool(3);
  EXPECT_EQ(pool.idle_spin_limit().count(), 0);
  for (int round = 0; round < 300; ++round) check_job(pool, static_cast<std::size_t>(2 + round % 5));
}

TEST(ThreadPool, JobsInsideABurstComplete) {
  // Inside a Burst the threads spin between jobs instead of blocking; after it they block again.
  EnvGuard spin("NOVA_SPIN_US", "0");
  ThreadPool pool(2);
  {
    const ThreadPool::Burst burst(pool);
    for (int round = 0; round < 100; ++round) check_job(pool, static_cast<std::size_t>(1 + round % 9));
  }
  for (int round = 0; round < 20; ++round) check_job(pool, 5);
}

TEST(ThreadPool, AThrowingTaskPropagatesAndLeavesThePoolUsable) {
  ThreadPool pool(2);
  std::atomic<bool> thrown{false};
  std::atomic<int> ran{0};
  auto job = [&](std::size_t, int worker) {
    if (worker == 0) {
      thrown.store(true);
      throw std::runtime_error("task failed");
    }
    while (!thrown.load()) std::this_thread::yield();  // the worker's task outlasts the caller's throw
    ran.fetch_add(1);
  };
  EXPECT_THROW(pool.run(64, job), std::runtime_error);
  // The job is over when run returns: nothing of it runs afterwards.
  const int seen = ran.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(ran.load(), seen);
  check_job(pool, 100);
}

TEST(ThreadPool, SharedPoolsAreOnePerThreadCount) {
  const auto a = ThreadPool::shared(3);
  const auto b = ThreadPool::shared(3);
  const auto c = ThreadPool::shared(2);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(a->size(), 3);
  EXPECT_EQ(c->size(), 2);
}

TEST(ThreadPool, JobsFromSeveralCallersOnOneSharedPoolAllComplete) {
  const auto pool = ThreadPool::shared(2);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        std::atomic<int> count{0};
        pool->run(37, [&](std::size_t, int) { count.fetch_add(1); });
        if (count.load() != 37) ++failures;
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPool, ARunFromInsideATaskRunsInlineOnThatWorker) {
  ThreadPool pool(2);
  std::atomic<int> inner{0}, wrong_worker{0};
  pool.run(8, [&](std::size_t, int worker) {
    pool.run(5, [&](std::size_t, int w) {
      if (w != worker) ++wrong_worker;
      inner.fetch_add(1);
    });
  });
  EXPECT_EQ(inner.load(), 40);
  EXPECT_EQ(wrong_worker.load(), 0);
}

TEST(ThreadPool, AForkedChildRunsItsJobsAndGetsAPoolOfItsOwn) {
  const auto parent_pool = ThreadPool::shared(2);
  check_job(*parent_pool, 16);  // the workers have started
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The inherited pool has no workers in this process: its jobs must run on the caller.
    std::atomic<int> count{0};
    parent_pool->run(9, [&](std::size_t, int) { count.fetch_add(1); });
    const auto own = ThreadPool::shared(2);
    std::atomic<int> count2{0};
    own->run(9, [&](std::size_t, int) { count2.fetch_add(1); });
    _exit(count.load() == 9 && count2.load() == 9 && own.get() != parent_pool.get() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Workers the system will not start (here: an address space too small for 1023 thread stacks, in a
// child process) are a nova::Error that says so, at every job; before, the first job threw
// std::system_error ("Resource temporarily unavailable") and the next ones ran on the workers that had
// started.
TEST(ThreadPool, WorkersTheSystemWillNotStartAreAnError) {
#ifdef NOVA_UNDER_ADDRESS_SANITIZER
  GTEST_SKIP() << "AddressSanitizer reserves the address space the limit is taken from";
#endif
  const int status = nova::testing::exit_status_with_address_space_room(rlim_t{256} << 20, [] {
    ThreadPool pool(1024);  // 1023 stacks of 8 MiB: not within 256 MiB more
    int refused = 0;
    for (int round = 0; round < 2; ++round) {
      try {
        pool.run(2048, [](std::size_t, int) {});
      } catch (const Error& e) {
        refused += std::string(e.what()).find("could not start the 1023 worker threads") != std::string::npos;
      } catch (...) {
      }
    }
    return refused == 2 ? 0 : 1;
  });
  if (status == nova::testing::kAddressSpaceNotLimited)
    GTEST_SKIP() << "could not read or limit the address space";
  EXPECT_EQ(status, 0);
}

TEST(ThreadPool, SpinLimitComesFromTheEnvironment) {
  {
    EnvGuard g("NOVA_SPIN_US", nullptr);
    EXPECT_EQ(spin_limit_from_environment(), ThreadPool::kDefaultIdleSpin);
  }
  {
    EnvGuard g("NOVA_SPIN_US", "150");
    EXPECT_EQ(spin_limit_from_environment().count(), 150);
    EXPECT_EQ(ThreadPool(2).idle_spin_limit().count(), 150);
  }
  for (const char* bad : {"", "abc", "-5", "12x", "1000001", "99999999999999999999"}) {
    EnvGuard g("NOVA_SPIN_US", bad);
    try {
      (void)spin_limit_from_environment();
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("NOVA_SPIN_US"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace nova::conv
