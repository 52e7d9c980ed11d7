// The engine on an OpenMP runtime's threads (nova/conv/openmp_threads.hpp): the runtime this program
// links (GCC's libgomp; LLVM's libomp under clang) is found and shared; the pool's jobs then run inside its parallel regions,
// each task once, on the thread whose OpenMP number is the task's worker index; plans give the same
// bits as on the engine's own threads; a throwing task, plans run from inside a parallel region, a
// forked child, and libraries that are not loaded or are no OpenMP runtime. Not under ThreadSanitizer (tests/tsan/):
// libgomp is not instrumented, and TSan cannot see its barriers.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "conv/thread_pool.hpp"
#include "conv_test_util.hpp"
#include "nova/conv/openmp_threads.hpp"
#include "nova/error.hpp"

namespace nova::conv {
namespace {

// Shares the loaded runtime for the test's lifetime, then goes back to the engine's own threads.
class SharedRuntime {
 public:
  SharedRuntime() : library_(share_openmp_threads()) {}
  ~SharedRuntime() { stop_sharing_openmp_threads(); }
  SharedRuntime(const SharedRuntime&) = delete;
  SharedRuntime& operator=(const SharedRuntime&) = delete;
  const std::string& library() const { return library_; }

 private:
  std::string library_;
};

// Counts, over a job of `tasks` tasks, the tasks run outside a parallel region and those whose worker
// index is not the OpenMP number of their thread; checks every task ran once.
struct JobTrace {
  int outside_region = 0;
  int wrong_thread = 0;
};
JobTrace trace_job(ThreadPool& pool, std::size_t tasks) {
  std::vector<std::atomic<int>> ran(tasks);
  std::atomic<int> outside{0}, wrong{0};
  pool.run(tasks, [&](std::size_t t, int worker) {
    if (!omp_in_parallel()) ++outside;
    if (omp_get_thread_num() != worker) ++wrong;
    ran[t].fetch_add(1);
  });
  for (std::size_t t = 0; t < tasks; ++t) EXPECT_EQ(ran[t].load(), 1) << "task " << t;
  return {outside.load(), wrong.load()};
}

// The file of the runtime this program links: the one that holds omp_get_thread_num (GCC's libgomp, or
// LLVM's libomp under clang).
std::string linked_runtime() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&omp_get_thread_num), &info) == 0 || info.dli_fname == nullptr) return "";
  return std::filesystem::canonical(info.dli_fname).string();
}

TEST(OpenMpThreads, TheLinkedRuntimeIsFoundAndShared) {
  EXPECT_EQ(shared_openmp_library(), "");
  const SharedRuntime shared;
  ASSERT_NE(linked_runtime(), "");
  EXPECT_EQ(std::filesystem::canonical(shared.library()).string(), linked_runtime()) << shared.library();
  EXPECT_EQ(shared_openmp_library(), shared.library());
  // Naming it, or sharing it again, gives the same library; stopping ends the sharing.
  EXPECT_EQ(share_openmp_threads(shared.library()), shared.library());
  EXPECT_EQ(share_openmp_threads(), shared.library());
  stop_sharing_openmp_threads();
  EXPECT_EQ(shared_openmp_library(), "");
}

TEST(OpenMpThreads, JobsRunInsideParallelRegionsOnTheMatchingThread) {
  for (int threads : {2, 3, 5}) {
    ThreadPool pool(threads);
    {
      const SharedRuntime shared;
      for (std::size_t tasks : {std::size_t{2}, std::size_t{7}, std::size_t{64}, std::size_t{1000}}) {
        const JobTrace t = trace_job(pool, tasks);
        EXPECT_EQ(t.outside_region, 0) << threads << " threads, " << tasks << " tasks";
        EXPECT_EQ(t.wrong_thread, 0) << threads << " threads, " << tasks << " tasks";
      }
    }
    // Back on the pool's own workers: no task inside a parallel region.
    const JobTrace t = trace_job(pool, 100);
    EXPECT_EQ(t.outside_region, 100);
  }
}

TEST(OpenMpThreads, AThrowingTaskPropagatesThroughTheRuntime) {
  const SharedRuntime shared;
  ThreadPool pool(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.run(64,
                        [&](std::size_t task, int) {
                          if (task == 3) throw std::runtime_error("task failed");
                          ran.fetch_add(1);
                        }),
               std::runtime_error);
  EXPECT_LT(ran.load(), 64);
  const JobTrace t = trace_job(pool, 50);  // still usable
  EXPECT_EQ(t.outside_region, 0);
}

TEST(OpenMpThreads, PlansGiveTheSameBitsAsOnTheEnginesThreads) {
  const testing::Problem p = testing::random_problem(ConvShape{2, 19, 23, 17, 21}, 5);
  for (Isa isa : testing::runnable_isas()) {
    for (AlgorithmChoice alg : {AlgorithmChoice::kWinograd, AlgorithmChoice::kDirect}) {
      for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
        PlanOptions o = testing::determinism_options(isa, alg, layout);
        const std::vector<float> own = testing::run(p, o);
        ASSERT_LT(testing::rel_l2(own, testing::reference(p, layout, true)), 1e-5);
        const SharedRuntime shared;
        for (int threads : {2, 3}) {
          o.threads = threads;
          EXPECT_TRUE(testing::same_bits(testing::run(p, o), own))
              << to_string(isa) << " " << to_string(layout) << " threads=" << threads;
        }
      }
    }
  }
}

TEST(OpenMpThreads, PlansRunFromInsideAParallelRegion) {
  // Each thread of a region runs plans of its own; nested parallelism is off, so each stage runs on
  // the calling thread alone: no deadlock, the same results.
  const testing::Problem a = testing::random_problem(ConvShape{1, 16, 20, 20, 24}, 1);
  const testing::Problem b = testing::random_problem(ConvShape{1, 8, 13, 11, 8}, 2);
  PlanOptions o;
  o.threads = 2;
  const std::vector<float> want_a = testing::run(a, o), want_b = testing::run(b, o);
  const SharedRuntime shared;
  std::atomic<int> mismatches{0}, failures{0};
#pragma omp parallel num_threads(2)
  {
    const testing::Problem& mine = omp_get_thread_num() == 0 ? a : b;
    const std::vector<float>& want = omp_get_thread_num() == 0 ? want_a : want_b;
    for (int round = 0; round < 5; ++round) {
      try {
        if (!testing::same_bits(testing::run(mine, o), want)) ++mismatches;
      } catch (...) {
        ++failures;
      }
    }
  }
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(failures.load(), 0);
}

TEST(OpenMpThreads, AForkedChildRunsOnThreadsOfItsOwn) {
  const SharedRuntime shared;
  ThreadPool pool(2);
  EXPECT_EQ(trace_job(pool, 16).outside_region, 0);  // the runtime's threads have started
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The runtime's threads are not in the child: its jobs must not enter a region there.
    std::atomic<int> count{0}, inside{0};
    const auto own = ThreadPool::shared(2);
    own->run(9, [&](std::size_t, int) {
      count.fetch_add(1);
      if (omp_in_parallel()) ++inside;
    });
    _exit(count.load() == 9 && inside.load() == 0 && shared_openmp_library().empty() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(shared_openmp_library(), shared.library());  // the parent still shares it
}

TEST(OpenMpThreads, LibrariesThatCannotBeSharedAreRefusedByName) {
  const SharedRuntime shared;
  const std::string before = shared_openmp_library();
  try {
    share_openmp_threads("/nonexistent/libgomp.so.1");
    ADD_FAILURE() << "a library that is not loaded was shared";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not loaded"), std::string::npos) << e.what();
  }
  try {
    share_openmp_threads("libm.so.6");  // loaded (the C++ runtime needs it), but no OpenMP
    ADD_FAILURE() << "libm was shared as an OpenMP runtime";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GOMP_parallel"), std::string::npos) << e.what();
  }
  EXPECT_EQ(shared_openmp_library(), before);  // a refused library leaves the setting as it was
}

}  // namespace
}  // namespace nova::conv

// LeakSanitizer's suppressions for this program (read by LSan in sanitizer builds, unused otherwise):
// LLVM's OpenMP runtime, which clang links here, keeps per-thread allocations to the end of the process
// and never frees them. The leak is the runtime's, not nova's; nothing else is suppressed.
extern "C" const char* __lsan_default_suppressions();
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libomp.so\n";
}
