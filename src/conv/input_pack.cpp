// Input copies made at the start of execute: the channel-blocked zero-padded layout of the Winograd
// path (every tile's n x n patch is then in bounds, whatever the padding and the edge tiles), and the
// NHWC copy the direct path wants for NCHW input.
#include <algorithm>
#include <cstring>
#include <vector>

#include "plan_impl.hpp"

namespace nova::conv {

void pack_blocked_input(Plan::Impl& p, const void* input_any, TensorFormat format, int64_t images, float* dst,
                        int64_t Cb, int64_t Hp, int64_t Wp, bool spatial_codes, float* amax) {
  const ConvShape& s = p.shape;
  const int64_t C = s.C, H = s.H, W = s.W, ph = s.pad_h, pw = s.pad_w;
  const bool nhwc = p.layout == Layout::kNHWC, blocked = p.layout == Layout::kNCHW16c;
  const bool fp32 = format.type == DataType::kFp32;
  const auto* input = static_cast<const float*>(input_any);  // only when fp32
  const WidenFn widen = p.kernels->convert.widen[static_cast<int>(format.type)];
  const PackRows16Fn pack_rows16 = p.kernels->layout.pack_rows16[static_cast<int>(format.type)];
  // One task per (image, channel block, band of rows).
  const int64_t band = 8;
  const int64_t bands = ceil_div(Hp, band);
  const Int8CodesFn codes = spatial_codes ? p.wino->int16.codes : nullptr;
  const float inv = spatial_codes ? 1.0f / p.d_scale : 0.0f;
  // max |d| of the rows as they are copied, while they are in L1: a pass of its own over a large input
  // took 7-8 % of an fp16 execute's thread time (8x64x56x56, 1x64x224x224 on AVX2).
  const AmaxFn row_amax = amax != nullptr ? p.wino->convert.amax : nullptr;
  std::vector<float> worker_amax(amax != nullptr ? static_cast<std::size_t>(p.threads) : 0, 0.0f);
  const auto pack_band = [&](std::size_t task, int worker) {
    const int64_t t = static_cast<int64_t>(task);
    const int64_t img = t / (Cb * bands), cb = t / bands % Cb, bnd = t % bands;
    const int64_t c0 = cb * kLanes;
    const int64_t lanes = std::min<int64_t>(kLanes, C - c0);
    for (int64_t yy = bnd * band; yy < std::min(Hp, (bnd + 1) * band); ++yy) {
      float* row = dst + ((img * Cb + cb) * Hp + yy) * Wp * kLanes;
      const int64_t y = yy - ph;
      if (y < 0 || y >= H) {
        std::memset(row, 0, static_cast<std::size_t>(Wp * kLanes) * sizeof(float));
        continue;
      }
      std::memset(row, 0, static_cast<std::size_t>(pw * kLanes) * sizeof(float));
      const int64_t right = Wp - pw - W;
      std::memset(row + (pw + W) * kLanes, 0, static_cast<std::size_t>(right * kLanes) * sizeof(float));
      float* r = row + pw * kLanes;
      if (blocked) {  // the same layout: a row copy (widened when typed); padding lanes made zero
        const int64_t first = ((img * Cb + cb) * H + y) * W * kLanes;
        if (fp32)
          std::memcpy(r, input + first, static_cast<std::size_t>(W * kLanes) * sizeof(float));
        else
          widen(element_at(input_any, format.type, first), r, W * kLanes, format.scale);
        if (lanes < kLanes)
          for (int64_t x = 0; x < W; ++x) std::fill(r + x * kLanes + lanes, r + (x + 1) * kLanes, 0.0f);
      } else if (nhwc) {
        const int64_t first = ((img * H + y) * W) * C + c0;
        for (int64_t x = 0; x < W; ++x) {
          if (fp32)
            copy_pixel_lanes(r + x * kLanes, input + first + x * C, lanes);
          else
            widen(element_at(input_any, format.type, first + x * C), r + x * kLanes, lanes, format.scale);
          for (int64_t l = lanes; l < kLanes; ++l) r[x * kLanes + l] = 0.0f;
        }
      } else {  // a transposing copy that widens typed elements as it loads them
        pack_rows16(element_at(input_any, format.type, ((img * C + c0) * H + y) * W), format.scale, H * W,
                    static_cast<int>(lanes), W, r);
      }
      if (codes != nullptr)  // the padding is zero and stays zero
        p.thread_saturated[static_cast<std::size_t>(worker)] += codes(r, W * kLanes, inv);
      if (row_amax != nullptr) {
        float& slot = worker_amax[static_cast<std::size_t>(worker)];
        slot = std::max(slot, row_amax(r, W * kLanes));
      }
    }
  };
  p.pool->run(static_cast<std::size_t>(images * Cb * bands), p.charged(Stage::kPack, pack_band));
  if (amax != nullptr)
    for (const float m : worker_amax) *amax = std::max(*amax, m);
}

void scale_blocked_input(Plan::Impl& p, float* xb, int64_t count, float factor) {
  constexpr int64_t kChunk = 16384;
  p.pool->run(static_cast<std::size_t>(ceil_div(count, kChunk)),
              p.charged(Stage::kPack, [&](std::size_t task, int) {
                const int64_t i0 = static_cast<int64_t>(task) * kChunk, i1 = std::min(count, i0 + kChunk);
                for (int64_t i = i0; i < i1; ++i) xb[i] *= factor;
              }));
}

// The transposes are the layout table's (16 channel rows to pixels of 16 channels, register transposes
// on AVX-512), then each pixel's channels go to their place in the NHWC row.
void pack_nchw_to_nhwc(Plan::Impl& p, const float* input, float* dst) {
  const ConvShape& s = p.shape;
  const int64_t C = s.C, H = s.H, W = s.W;
  const PackRows16Fn pack_rows16 = p.kernels->layout.pack_rows16[static_cast<int>(DataType::kFp32)];
  const auto pack_row = [&](std::size_t task, int) {
    const int64_t img = static_cast<int64_t>(task) / H, y = static_cast<int64_t>(task) % H;
    float* o = dst + (img * H + y) * W * C;
    for (int64_t c0 = 0; c0 < C; c0 += kLanes) {
      const int64_t cs = std::min<int64_t>(kLanes, C - c0);
      for (int64_t x0 = 0; x0 < W; x0 += kLanes) {
        const int64_t xs = std::min<int64_t>(kLanes, W - x0);
        alignas(64) float buf[kLanes * kLanes];
        pack_rows16(input + ((img * C + c0) * H + y) * W + x0, 1.0f, H * W, static_cast<int>(cs), xs, buf);
        for (int64_t x = 0; x < xs; ++x) copy_pixel_lanes(o + (x0 + x) * C + c0, buf + x * kLanes, cs);
      }
    }
  };
  p.pool->run(static_cast<std::size_t>(s.N * H), p.charged(Stage::kPack, pack_row));
}

void pack_nchw16c_to_nhwc(Plan::Impl& p, const float* input, float* dst) {
  const ConvShape& s = p.shape;
  const int64_t C = s.C, H = s.H, W = s.W, Cb = ceil_div(C, kLanes);
  const auto copy_row = [&](std::size_t task, int) {
    const int64_t img = static_cast<int64_t>(task) / H, y = static_cast<int64_t>(task) % H;
    float* o = dst + (img * H + y) * W * C;
    for (int64_t cb = 0; cb < Cb; ++cb) {
      const int64_t lanes = std::min<int64_t>(kLanes, C - cb * kLanes);
      const float* src = input + ((img * Cb + cb) * H + y) * W * kLanes;
      for (int64_t x = 0; x < W; ++x)
        std::memcpy(o + x * C + cb * kLanes, src + x * kLanes,
                    static_cast<std::size_t>(lanes) * sizeof(float));
    }
  };
  p.pool->run(static_cast<std::size_t>(s.N * H), p.charged(Stage::kPack, copy_row));
}

}  // namespace nova::conv
