// A 64-byte aligned float array (cache-line aligned scratch and packed filters).
//
// Arrays of 4 MiB and more are 2 MiB aligned, their size rounded up to 2 MiB, and advised for
// transparent huge pages (Linux; a no-op where THP is off). Streaming a large U through 4 KiB pages
// missed the TLB every 4 KiB and stopped the prefetchers at every page: on the AVX2 machine of session
// 17, 8x512x7x7 at F(7,3) (an 85 MB U) ran in 0.74-0.77 of the time with them, the layers with 17-21 MB
// of U in 0.92-0.97 (docs/engine-log.md, "Session 17"). The rounding wastes less than a third; smaller
// arrays (per-thread scratch) are not rounded, where 2 MiB each would add up across plans.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace nova::conv {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t count) { resize(count); }
  void resize(std::size_t count) {
    if (count == size_) return;
    data_.reset();
    size_ = 0;
    if (count == 0) return;
    std::size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    const bool huge = bytes >= kHugeFrom;
    if (huge) bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(huge ? kHugePage : 64, bytes);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: a refusal leaves 4 KiB pages
#endif
    data_.reset(static_cast<float*>(p));
    size_ = count;
  }
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20, kHugeFrom = std::size_t{4} << 20;
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], Free> data_;
  std::size_t size_ = 0;
};

}  // namespace nova::conv
