// 16 floats as a plain array: the portable path (any x86-64, or any other CPU), left to the compiler's
// auto-vectorizer. Include only from kernels/portable/ files.
#pragma once

#include <cstddef>

#include "../int8_code_scalar.hpp"

namespace {

struct VecPortable {
  float v[16];
  // The int8 GEMM's V operand written by the input transform (kernel_table.hpp, InputTileInt8Fn).
  using Int8Tally = Int8TallyScalar;
  static void store_int8(uint8_t* p, const VecPortable& x, float inv, Int8Tally& t) {
    int8_codes16(x.v, p, inv, t);
  }
  static int64_t int8_result(const Int8Tally& t, int* bad) { return int8_tally_result(t, bad); }
  static void amax_into(float* m, const VecPortable& x) { lane_amax16(m, x.v); }
  static VecPortable zero() { return VecPortable{}; }
  // The first n (0..16) floats at p, zeros past them; nothing past them is read.
  static VecPortable load_partial(const float* p, std::size_t n) {
    VecPortable r{};
    for (std::size_t i = 0; i < n; ++i) r.v[i] = p[i];
    return r;
  }
  static VecPortable load(const float* p) {
    VecPortable r;
    for (int i = 0; i < 16; ++i) r.v[i] = p[i];
    return r;
  }
  static void store(float* p, const VecPortable& x) {
    for (int i = 0; i < 16; ++i) p[i] = x.v[i];
  }
  static VecPortable broadcast(float s) {
    VecPortable r;
    for (int i = 0; i < 16; ++i) r.v[i] = s;
    return r;
  }
  static VecPortable add(const VecPortable& a, const VecPortable& b) {
    VecPortable r;
    for (int i = 0; i < 16; ++i) r.v[i] = a.v[i] + b.v[i];
    return r;
  }
  static VecPortable sub(const VecPortable& a, const VecPortable& b) {
    VecPortable r;
    for (int i = 0; i < 16; ++i) r.v[i] = a.v[i] - b.v[i];
    return r;
  }
  static VecPortable neg(const VecPortable& a) {
    VecPortable r;
    for (int i = 0; i < 16; ++i) r.v[i] = -a.v[i];
    return r;
  }
  static VecPortable mulc(const VecPortable& a, float c) {
    VecPortable r;
    for (int i = 0; i < 16; ++i) r.v[i] = a.v[i] * c;
    return r;
  }
  static VecPortable fmac(const VecPortable& a, float c, const VecPortable& b) {
    VecPortable r;
    for (int i = 0; i < 16; ++i) r.v[i] = a.v[i] * c + b.v[i];
    return r;
  }
  static VecPortable fma(const VecPortable& a, const VecPortable& b, const VecPortable& c) {
    VecPortable r;
    for (int i = 0; i < 16; ++i) r.v[i] = a.v[i] * b.v[i] + c.v[i];
    return r;
  }
  static VecPortable relu(const VecPortable& a) {
    VecPortable r;
    for (int i = 0; i < 16; ++i) r.v[i] = a.v[i] < 0.0f ? 0.0f : a.v[i];  // NaN propagates
    return r;
  }
  // Lane i = lane (i / CG) * CG + C of x: each group of CG lanes holds its C-th value.
  template <int CG, int C>
  static VecPortable group_broadcast(const VecPortable& x) {
    VecPortable r;
    for (int i = 0; i < 16; ++i) r.v[i] = x.v[i / CG * CG + C];
    return r;
  }
};

}  // namespace
