// A 64-byte aligned float array (cache-line aligned scratch and packed filters).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

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
    const std::size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw std::bad_alloc();
    data_.reset(static_cast<float*>(p));
    size_ = count;
  }
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], Free> data_;
  std::size_t size_ = 0;
};

}  // namespace nova::conv
