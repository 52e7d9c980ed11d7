// Running the engine's parallel work on the threads of an OpenMP runtime already in the process.
//
// The engine runs its parallel stages on its own pool by default. In a process where another library
// runs its parallel work on OpenMP (PyTorch on GNU libgomp, for one), that runtime's threads spin-wait
// after each of its parallel regions (GOMP_SPINCOUNT iterations, 300,000 by default) on the very cores
// the engine's threads then need, so a network that alternates the library's operations with nova's
// layers runs both on fewer cores than it has. Measured on the development machine (2 cores, PyTorch 2
// on libgomp, bench/network_speed.py, session 24, NCHW): VGG-16 through nova's drop-in 122-126 ms a
// forward on nova's pool, 93-94 ms on PyTorch's OpenMP threads; ResNet-18 28-30 and 24 ms.
//
// share_openmp_threads makes every later parallel stage of every plan a parallel region of that runtime
// (through GOMP_parallel, the entry point GCC emits for `#pragma omp parallel`, which LLVM's and
// Intel's OpenMP runtimes also export): the threads spinning after the library's last operation
// take nova's work at once, and no other thread competes with them. The results are the same bits as
// on nova's pool (no reduction is split between threads). Inside an OpenMP parallel region (nested
// parallelism off, the default) the stage runs on the calling thread alone; on the engine's pool
// it would run on the pool's threads instead.
#pragma once

#include <string>
#include <vector>

namespace nova::conv {

// Shares the OpenMP runtime `library` (a path or file name of a shared library already loaded in
// the process; it is not loaded here) or, when empty, the one runtime loaded in the process (a library
// named libgomp*, libiomp* or libomp*). Returns the library's path. Throws nova::Error when the library
// is not loaded, when none or several runtimes are loaded and `library` is empty, or when it lacks
// GOMP_parallel or omp_get_thread_num. Calling it again switches to the new library.
std::string share_openmp_threads(const std::string& library = "");

// Paths of the OpenMP runtimes loaded in the process (libraries named libgomp*, libiomp* or libomp*), in
// load order: what share_openmp_threads() chooses from when no library is named.
std::vector<std::string> loaded_openmp_runtimes();

// Back to the engine's own pool for later parallel stages.
void stop_sharing_openmp_threads();

// The path of the shared runtime, or empty when the engine runs on its own pool.
std::string shared_openmp_library();

}  // namespace nova::conv
