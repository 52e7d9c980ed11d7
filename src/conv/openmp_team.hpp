// The OpenMP runtime whose threads run the engine's parallel stages when a user shares one
// (nova/conv/openmp_threads.hpp); ThreadPool::run asks for it on every job.
#pragma once

#include <string>

namespace nova::conv {

// Entry points of a loaded GNU-OpenMP-compatible runtime, looked up by name.
struct OpenMpTeam {
  // GOMP_parallel(fn, data, num_threads, flags): runs fn(data) on a team of at most num_threads
  // threads, the caller as thread 0, and returns when all have returned.
  void (*parallel)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) = nullptr;
  int (*thread_num)() = nullptr;  // omp_get_thread_num
  std::string library;            // its path
  int owner_pid = 0;              // the process that shared it
};

// The shared runtime, or nullptr while the engine runs on its own pool, and in a process forked from
// the one that shared it (GNU OpenMP's threads are not in the child, and its regions there can hang).
// A team, once returned, stays valid for the life of the process (sharing another or none does not
// free it: a job may be running on it).
const OpenMpTeam* shared_openmp_team();

}  // namespace nova::conv
