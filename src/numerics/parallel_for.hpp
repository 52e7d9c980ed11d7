// A minimal fork-join loop for the harness's bulk work. Private to src/numerics.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace nova::detail {

// f(begin, end) over [0, count) in contiguous ranges on up to hardware_concurrency() threads, each
// with at least `min_per_thread` elements. An exception thrown by f on any thread is rethrown here.
template <class F>
void parallel_for(int64_t count, int64_t min_per_thread, const F& f) {
  const unsigned hw = std::thread::hardware_concurrency();
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(hw == 0 ? 1 : hw, count / min_per_thread));
  if (threads <= 1) {
    f(int64_t{0}, count);
    return;
  }
  const int64_t chunk = (count + threads - 1) / threads;
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  for (int64_t b = chunk, i = 1; b < count; b += chunk, ++i)
    pool.emplace_back([&f, &errors, i, b, count, chunk] {
      try {
        f(b, std::min(count, b + chunk));
      } catch (...) {
        errors[static_cast<std::size_t>(i)] = std::current_exception();
      }
    });
  try {
    f(int64_t{0}, std::min(count, chunk));
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace nova::detail
