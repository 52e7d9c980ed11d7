// A small, strict reader (and writer) of NumPy .npy files, for user activations and weights.
// Accepted: format versions 1.0, 2.0 and 3.0; dtype little-endian float32 ('<f4') or float64
// ('<f8'); C order; any shape with at least one axis. Anything else (another dtype, Fortran order,
// a truncated or oversized payload, a malformed header) is a nova::Error naming the file and the
// problem.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nova {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<double> data;  // converted to float64, C order
  std::string dtype;         // "<f4" or "<f8" as read
  int64_t size() const;
};

NpyArray read_npy(const std::string& path);
// Parses the bytes of an .npy file; `name` is used in messages.
NpyArray parse_npy(const std::string& bytes, const std::string& name);
// Writes float64 ('<f8'), C order, version 1.0.
void write_npy(const std::string& path, std::span<const int64_t> shape, std::span<const double> data);
std::string npy_bytes(std::span<const int64_t> shape, std::span<const double> data);

}  // namespace nova
