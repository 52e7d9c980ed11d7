// Reads a fuzzer's byte string as a sequence of small decisions (the role of LLVM's
// FuzzedDataProvider, which ships with clang only: the replay driver builds with GCC too). When the
// bytes run out every read returns its range's low end, so any prefix of an input is an input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace nova::fuzz {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  // A value in [lo, hi], from as many bytes as the range needs.
  int64_t range(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo);
    uint64_t value = 0;
    for (uint64_t covered = 0; covered < span && pos_ < size_; covered = (covered << 8) | 0xff)
      value = (value << 8) | data_[pos_++];
    return span == UINT64_MAX ? lo + static_cast<int64_t>(value)
                              : lo + static_cast<int64_t>(value % (span + 1));
  }
  bool flag() { return range(0, 1) == 1; }
  template <class T>
  T pick(std::initializer_list<T> values) {
    return *(values.begin() + range(0, static_cast<int64_t>(values.size()) - 1));
  }
  // What is left, as text (the parsers' inputs).
  std::string rest() {
    std::string out(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_);
    pos_ = size_;
    return out;
  }
  bool empty() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace nova::fuzz
