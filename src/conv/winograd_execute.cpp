// Winograd execution: blocked input copy, then for every block of tiles the input transform, the n^2
// GEMMs [tiles x C] x [C x K] and the output transform (+bias, ReLU) with the scatter into the output.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "nova/error.hpp"
#include "plan_impl.hpp"

namespace nova::conv {

namespace {

struct TileCoord {
  int64_t img, ty, tx;
};

float* io_rows(Plan::Impl& p, std::size_t worker) {
  return p.thread_io.empty() ? nullptr : p.thread_io[worker].data();
}

TileCoord coord(const WinogradPlan& w, int64_t t) {
  const int64_t per_img = w.tiles_y * w.tiles_x;
  const int64_t img = t / per_img, rem = t % per_img;
  return {img, rem / w.tiles_x, rem % w.tiles_x};
}

// Where the input transforms read their tiles: the blocked, zero-padded copy of images from img0 on (xb),
// or, where the plan reads tensors in place (WinogradPlan::reads_input_directly), the tensor itself, with
// `stage` (the worker's) for the tiles that are staged: those that reach into the padding, and every tile
// of a typed (bf16, fp16, int8) tensor, widened as staged.
struct TileSource {
  const float* xb = nullptr;
  int64_t img0 = 0;
  const void* tensor = nullptr;  // set: read in place
  TensorFormat format{};         // the tensor's type and scale
  WidenFn widen = nullptr;       // its widening into staged rows (the blocked copy's: the same values)
  float* stage = nullptr;
};

TileSource tile_source(Plan::Impl& p, const float* xb, int64_t img0, const void* tensor, TensorFormat format,
                       int worker) {
  if (tensor == nullptr) return {xb, img0, nullptr, {}, nullptr, nullptr};
  return {nullptr,
          0,
          tensor,
          format,
          p.kernels->convert.widen[static_cast<int>(format.type)],
          p.thread_stage[static_cast<std::size_t>(worker)].data()};
}

// Typed tensors read in place: a run of up to kTypedRunTiles consecutive tiles of one tile row is staged
// once as a band of n rows x ((run - 1) * m + n) pixels (the windows of neighbouring tiles share n - m
// columns), widened as the blocked copy widens, a piece of channel blocks at a time (as many as fit
// kTypedBandBytes, at least one), and each tile is transformed from its place in the band. Each element
// is widened about n/m times (1.55 at F(4,3)) instead of (n/m)^2 (2.25) when every window was staged on
// its own, which cost more than the copy it saved (docs/engine.md, session 16). Runs of 4 or 8 tiles and
// pieces of 24-256 KiB measured the same within 3 % on AVX2 (session 19), where fewer, larger pieces
// (fewer transform calls) helped more than a band kept in L1. The int8 GEMM's transform reads int8 codes
// of windows inside the image in place instead, widened in registers (InputTileInt8CodesFn, AVX-512):
// on Zen 4 its plans took 0.81-0.90 of the time with int8 tensors at 64-128 channels, where the band's
// stores had cost more than the repeated widening (session 48).
constexpr int64_t kTypedRunTiles = 8;
constexpr int64_t kTypedBandBytes = int64_t{48} << 10;

// The stage's floats: an FP32 window of every channel block, or a typed band of one channel block at
// least (WinogradPlan's build sizes thread_stage with it).
}  // namespace

std::size_t input_stage_floats(const WinogradPlan& w) {
  const int64_t fp32_window = int64_t{w.n} * w.n * w.Cb * kLanes;
  const int64_t band_columns = (std::min(kTypedRunTiles, w.tiles_x) - 1) * w.m + w.n;
  const int64_t band = std::max(kTypedBandBytes / 4, int64_t{w.n} * band_columns * kLanes);
  return static_cast<std::size_t>(std::max(fp32_window, band));
}

namespace {

// The channel blocks [lo, hi) a task transforms: all of them in the fused order; a share of them where
// the phased order has too few tiles to give every thread work (TransformTasks below).
struct BlockRange {
  int64_t lo, hi;
};

// Calls tile(i, src, sy, sx, scb, cb0, cbs) for tiles t0 + i in [t0, t1): channel blocks [cb0, cb0 + cbs)
// of the tile's n x n window, element (y, x) of block cb0 + j at src + j*scb + y*sy + x*sx (all of the
// range's blocks in one call, but for typed tensors).
// - Blocked copy: src points into xb.
// - In place (NCHW16c or NHWC, whole channel blocks): an FP32 window inside the image is read where it
//   is, with the layout's strides; one that reaches into the zero padding (or past the image, for partial
//   tiles) is first copied with its zeros into the stage (n x n pixels of 16 channels per channel block).
//   Typed tensors are staged by runs of tiles, widened (kTypedRunTiles above). The values are those of
//   the blocked copy, so the bits are the same.
// - Raw elements in place: where `raw` is set and the tensor's type is one of kRaw's (RawTypes), the
//   tile callable is given the tensor's own elements (int8 codes as const int8_t*, bf16 or fp16 bits as
//   const uint16_t*; strides in elements), to widen in registers with the widening's bits: a window
//   inside the image where it is, windows reaching into the padding staged as elements (zero bits, the
//   value +0 as the FP32 stage's, around them) by runs of such windows.
// - FP32 windows at the edges read in place: where `edge` is given (not NoEdgeTiles), a window reaching
//   into the padding is passed as the tensor, its origin's offset and the rows and columns inside the
//   image (edge(i, tensor, origin, sy, sx, scb, cb0, cbs, window)), instead of being staged.
struct NoEdgeTiles {};
enum RawTypes : unsigned { kRawNone = 0, kRawInt8 = 1, kRawWords = 2 };

template <unsigned kRaw = kRawNone, class Tile, class EdgeTile = NoEdgeTiles>
void for_each_input_tile(const Plan::Impl& p, const WinogradPlan& w, const TileSource& from, int64_t t0,
                         int64_t t1, BlockRange blocks, Tile&& tile, bool raw = false, EdgeTile&& edge = {}) {
  const int cb_first = static_cast<int>(blocks.lo), cb_count = static_cast<int>(blocks.hi - blocks.lo);
  if (from.tensor == nullptr) {
    const std::ptrdiff_t sy = static_cast<std::ptrdiff_t>(w.Wp * kLanes), sx = kLanes;
    const std::ptrdiff_t scb = static_cast<std::ptrdiff_t>(w.Hp * w.Wp * kLanes);
    for (int64_t t = t0; t < t1; ++t) {
      const TileCoord c = coord(w, t);
      tile(t - t0,
           from.xb + ((c.img - from.img0) * w.Cb + blocks.lo) * scb + c.ty * w.m * sy + c.tx * w.m * sx, sy,
           sx, scb, cb_first, cb_count);
    }
    return;
  }
  const ConvShape& s = p.shape;
  const int64_t H = s.H, W = s.W, n = w.n, m = w.m;
  const bool nhwc = p.layout == Layout::kNHWC;
  const DataType type = from.format.type;
  const bool typed = type != DataType::kFp32;
  const std::ptrdiff_t sx = nhwc ? s.C : kLanes, sy = W * sx, scb = nhwc ? kLanes : H * W * kLanes;
  const std::ptrdiff_t image_stride = H * W * w.Cb * kLanes;
  const auto window_inside = [&](const TileCoord& tc) {
    const int64_t ty = tc.ty * m - s.pad_h, tx = tc.tx * m - s.pad_w;
    return ty >= 0 && tx >= 0 && ty + n <= H && tx + n <= W;
  };
  const bool words = type == DataType::kBf16 || type == DataType::kFp16;
  const bool raw_in_place =
      raw && (((kRaw & kRawInt8) != 0 && type == DataType::kInt8) || ((kRaw & kRawWords) != 0 && words));
  // The callable on raw elements at element offset `at` of `base` (the tensor or the stage).
  const auto raw_tile = [&](int64_t i, const void* base, std::ptrdiff_t at, std::ptrdiff_t ry,
                            std::ptrdiff_t rx, std::ptrdiff_t rcb, int cb0, int cbs) {
    if constexpr ((kRaw & kRawInt8) != 0) {
      if (type == DataType::kInt8) {
        tile(i, static_cast<const int8_t*>(base) + at, ry, rx, rcb, cb0, cbs);
        return;
      }
    }
    if constexpr ((kRaw & kRawWords) != 0)
      tile(i, static_cast<const uint16_t*>(base) + at, ry, rx, rcb, cb0, cbs);
  };
  for (int64_t t = t0; t < t1;) {
    const TileCoord c = coord(w, t);
    const int64_t y = c.ty * m - s.pad_h, x = c.tx * m - s.pad_w;
    const int64_t image = c.img * image_stride;  // element offsets into the tensor
    if ((!typed || raw_in_place) && window_inside(c)) {
      const std::ptrdiff_t at = image + blocks.lo * scb + y * sy + x * sx;
      if (raw_in_place)
        raw_tile(t - t0, from.tensor, at, sy, sx, scb, cb_first, cb_count);
      else
        tile(t - t0, static_cast<const float*>(from.tensor) + at, sy, sx, scb, cb_first, cb_count);
      ++t;
      continue;
    }
    if constexpr (!std::is_same_v<std::remove_cvref_t<EdgeTile>, NoEdgeTiles>) {
      if (!typed) {
        const EdgeWindow window{
            static_cast<int>(std::max<int64_t>(0, -y)), static_cast<int>(std::clamp<int64_t>(H - y, 0, n)),
            static_cast<int>(std::max<int64_t>(0, -x)), static_cast<int>(std::clamp<int64_t>(W - x, 0, n))};
        edge(t - t0, static_cast<const float*>(from.tensor), image + blocks.lo * scb + y * sy + x * sx, sy,
             sx, scb, cb_first, cb_count, window);
        ++t;
        continue;
      }
    }
    // Staged: one window (FP32), or a run of windows of one tile row (typed; raw elements in place: of
    // windows that reach into the padding).
    int64_t run = 1;
    if (typed)
      while (run < kTypedRunTiles && t + run < t1 && c.tx + run < w.tiles_x &&
             !(raw_in_place && window_inside(coord(w, t + run))))
        ++run;
    const int64_t width = (run - 1) * m + n;  // staged columns
    const std::ptrdiff_t stage_sy = width * kLanes, stage_scb = n * width * kLanes;
    const int64_t in_range = blocks.hi - blocks.lo;
    const int64_t x_lo = std::max<int64_t>(0, -x), x_hi = std::min<int64_t>(width, W - x);  // inside
    if (raw_in_place) {  // the elements staged as they are, with zero bits (the value +0) around them
      const auto bytes = static_cast<int64_t>(element_size(type));
      auto* stage = reinterpret_cast<unsigned char*>(from.stage);
      const int64_t raw_piece = std::clamp<int64_t>(kTypedBandBytes / (stage_scb * bytes), 1, in_range);
      for (int64_t cb0 = blocks.lo; cb0 < blocks.hi; cb0 += raw_piece) {
        const int64_t cbs = std::min(raw_piece, blocks.hi - cb0);
        for (int64_t j = 0; j < cbs; ++j)
          for (int64_t i = 0; i < n; ++i) {
            unsigned char* row = stage + (j * stage_scb + i * stage_sy) * bytes;
            const int64_t yy = y + i;
            if (yy < 0 || yy >= H || x_lo >= x_hi) {
              std::memset(row, 0, static_cast<std::size_t>(width * kLanes * bytes));
              continue;
            }
            std::memset(row, 0, static_cast<std::size_t>(x_lo * kLanes * bytes));
            const int64_t first = image + (cb0 + j) * scb + yy * sy + (x + x_lo) * sx;
            const int64_t cols = x_hi - x_lo;
            if (nhwc)
              for (int64_t q = 0; q < cols; ++q)
                std::memcpy(row + (x_lo + q) * kLanes * bytes, element_at(from.tensor, type, first + q * sx),
                            static_cast<std::size_t>(kLanes * bytes));
            else
              std::memcpy(row + x_lo * kLanes * bytes, element_at(from.tensor, type, first),
                          static_cast<std::size_t>(cols * kLanes * bytes));
            std::memset(row + x_hi * kLanes * bytes, 0,
                        static_cast<std::size_t>((width - x_hi) * kLanes * bytes));
          }
        for (int64_t q = 0; q < run; ++q)
          raw_tile(t + q - t0, stage, q * m * kLanes, stage_sy, std::ptrdiff_t{kLanes}, stage_scb,
                   static_cast<int>(cb0), static_cast<int>(cbs));
      }
      t += run;
      continue;
    }
    const int64_t piece =
        typed ? std::clamp<int64_t>(kTypedBandBytes / (stage_scb * 4), 1, in_range) : in_range;
    for (int64_t cb0 = blocks.lo; cb0 < blocks.hi; cb0 += piece) {
      const int64_t cbs = std::min(piece, blocks.hi - cb0);
      for (int64_t j = 0; j < cbs; ++j)
        for (int64_t i = 0; i < n; ++i) {
          float* row = from.stage + j * stage_scb + i * stage_sy;
          const int64_t yy = y + i;
          if (yy < 0 || yy >= H || x_lo >= x_hi) {
            std::memset(row, 0, static_cast<std::size_t>(width * kLanes) * sizeof(float));
            continue;
          }
          std::memset(row, 0, static_cast<std::size_t>(x_lo * kLanes) * sizeof(float));
          const int64_t first = image + (cb0 + j) * scb + yy * sy + (x + x_lo) * sx;
          float* inside = row + x_lo * kLanes;
          const int64_t cols = x_hi - x_lo;
          // NHWC pixels lie C elements apart, NCHW16c rows are contiguous (FP32's widen is a copy). FP32
          // NHWC pixels are copied inline: a widen call per pixel cost 4-8 % of FP32 NHWC plans on AVX2.
          if (nhwc && !typed)
            for (int64_t q = 0; q < cols; ++q)
              copy_pixel_lanes(inside + q * kLanes, static_cast<const float*>(from.tensor) + first + q * sx,
                               kLanes);
          else if (nhwc)
            for (int64_t q = 0; q < cols; ++q)
              from.widen(element_at(from.tensor, type, first + q * sx), inside + q * kLanes, kLanes,
                         from.format.scale);
          else
            from.widen(element_at(from.tensor, type, first), inside, cols * kLanes, from.format.scale);
          std::memset(row + x_hi * kLanes, 0,
                      static_cast<std::size_t>((width - x_hi) * kLanes) * sizeof(float));
        }
      for (int64_t q = 0; q < run; ++q)
        tile(t + q - t0, from.stage + q * m * kLanes, stage_sy, std::ptrdiff_t{kLanes}, stage_scb,
             static_cast<int>(cb0), static_cast<int>(cbs));
    }
    t += run;
  }
}

// Input transform into V (floats or 16-bit words T) by `fn` on FP32 windows, and by `from_words` on a bf16
// or fp16 tensor's own elements where it is set (else the tensor is widened into FP32 windows).
template <class T, class Fn, class FromWordsFn>
void input_stage_from_words(const Plan::Impl& p, const WinogradPlan& w, const TileSource& from, int64_t t0,
                            int64_t t1, BlockRange blocks, T* v, std::size_t pos_v, Fn fn,
                            FromWordsFn from_words) {
  for_each_input_tile<kRawWords>(
      p, w, from, t0, t1, blocks,
      [&]<class Src>(int64_t i, const Src* src, std::ptrdiff_t sy, std::ptrdiff_t sx, std::ptrdiff_t scb,
                     int cb0, int cbs) {
        T* dst = v + i * w.Cpad + cb0 * kLanes;
        if constexpr (std::is_same_v<Src, uint16_t>)
          from_words(&w.coeffs, src, sy, sx, scb, cbs, dst, pos_v);
        else
          fn(&w.coeffs, src, sy, sx, scb, cbs, dst, pos_v);
      },
      from_words != nullptr);
}

// Input transform of the blocks' channels of tiles [t0, t1) into V (position stride pos_v, row stride
// Cpad), by `fn`: the plain transform, or one that rounds V to bf16 or fp16 values as it stores it
// (w.fns.input_bf16_round, input_fp16_round).
void input_stage(const Plan::Impl& p, const WinogradPlan& w, const TileSource& from, int64_t t0, int64_t t1,
                 BlockRange blocks, float* v, std::size_t pos_v, InputTileFn fn) {
  // A bf16 or fp16 tensor's own elements, where `fn` has that form (floats_from_*, rounded_from_*).
  const DataType type = from.format.type;
  const bool bf16 = type == DataType::kBf16, fp16 = type == DataType::kFp16;
  InputTileFloatsFromWordsFn from_words = nullptr;
  if (fn == w.fns.input) from_words = bf16 ? w.fns.floats_from_bf16 : fp16 ? w.fns.floats_from_fp16 : nullptr;
  if (bf16 && fn == w.fns.input_bf16_round) from_words = w.fns.rounded_from_bf16;
  if (fp16 && fn == w.fns.input_fp16_round) from_words = w.fns.rounded_from_fp16;
  if (from.tensor != nullptr && from_words != nullptr) {
    input_stage_from_words(p, w, from, t0, t1, blocks, v, pos_v, fn, from_words);
    return;
  }
  const auto tile = [&](int64_t i, const float* src, auto sy, auto sx, auto scb, int cb0, int cbs) {
    fn(&w.coeffs, src, sy, sx, scb, cbs, v + i * w.Cpad + cb0 * kLanes, pos_v);
  };
  // FP32 windows at the edges from the tensor itself, where the plain transform has that form (staging
  // them had cost 6-7 % of an FP32 8x64x56x56 plan on Zen 4 in memcpy and memset calls).
  if (from.tensor != nullptr && fn == w.fns.input && w.fns.input_edge != nullptr) {
    for_each_input_tile(p, w, from, t0, t1, blocks, tile, false,
                        [&](int64_t i, const float* tensor, std::ptrdiff_t origin, std::ptrdiff_t sy,
                            std::ptrdiff_t sx, std::ptrdiff_t scb, int cb0, int cbs, EdgeWindow window) {
                          w.fns.input_edge(&w.coeffs, tensor, origin, sy, sx, scb, cbs, window,
                                           v + i * w.Cpad + cb0 * kLanes, pos_v);
                        });
    return;
  }
  for_each_input_tile(p, w, from, t0, t1, blocks, tile);
}

// V written as 16-bit words by `fn`: fp16 bits (w.fns.input_fp16) or bf16 bits (w.fns.input_bf16).
// A bf16 tensor feeding bf16 bits, or an fp16 tensor fp16 bits, is read as its own elements
// (words_from_*).
void input_stage_words(const Plan::Impl& p, const WinogradPlan& w, InputTileFp16Fn fn, const TileSource& from,
                       int64_t t0, int64_t t1, BlockRange blocks, uint16_t* v, std::size_t pos_v) {
  const DataType type = from.format.type;
  const InputTileWordsFromWordsFn from_words =
      type == DataType::kBf16 && fn == w.fns.input_bf16   ? w.fns.words_from_bf16
      : type == DataType::kFp16 && fn == w.fns.input_fp16 ? w.fns.words_from_fp16
                                                          : nullptr;
  input_stage_from_words(p, w, from, t0, t1, blocks, v, pos_v, fn, from_words);
}

// A tile's NaN/Inf mark (flags[i], zeroed by the caller before the stage) set from one call on some of its
// channel blocks. Atomic: in the phased order two tasks may transform parts of one tile's channels.
void mark_tile(uint8_t& flag, int bad) {
  if (bad != 0) std::atomic_ref<uint8_t>(flag).fetch_or(static_cast<uint8_t>(bad), std::memory_order_relaxed);
}

// int8-spatial: V' written as int16 by the transform (w.fns.input_int16 set); flags[i] marks the tiles
// holding NaN/Inf (or a |V'| beyond int16, which only they can give), as the conversion pass does.
void input_stage_int16(const Plan::Impl& p, const WinogradPlan& w, const TileSource& from, int64_t t0,
                       int64_t t1, BlockRange blocks, int16_t* v, std::size_t pos_v, uint8_t* flags) {
  for_each_input_tile(p, w, from, t0, t1, blocks,
                      [&](int64_t i, const float* src, auto sy, auto sx, auto scb, int cb0, int cbs) {
                        int bad = 0;
                        w.fns.input_int16(&w.coeffs, src, sy, sx, scb, cbs, v + i * w.Cpad + cb0 * kLanes,
                                          pos_v, &bad);
                        mark_tile(flags[i], bad);
                      });
}

// V quantized to the int8 operand by the transform (inv: 1 / scale per position); flags[i] marks the
// tiles holding NaN/Inf. Returns the saturated count.
int64_t input_stage_int8(const Plan::Impl& p, const WinogradPlan& w, const TileSource& from, int64_t t0,
                         int64_t t1, BlockRange blocks, uint8_t* v, std::size_t pos_v, const float* inv,
                         uint8_t* flags) {
  int64_t saturated = 0;
  const InputTileInt8CodesFn codes_fn = w.fns.input_int8_codes;
  const float scale = from.format.scale;
  for_each_input_tile<kRawInt8>(
      p, w, from, t0, t1, blocks,
      [&]<class Src>(int64_t i, const Src* src, std::ptrdiff_t sy, std::ptrdiff_t sx, std::ptrdiff_t scb,
                     int cb0, int cbs) {
        int bad = 0;
        if constexpr (std::is_same_v<Src, int8_t>)
          saturated += codes_fn(&w.coeffs, src, sy, sx, scb, cbs, v + i * w.Cpad + cb0 * kLanes, pos_v, inv,
                                scale, &bad);
        else
          saturated += w.fns.input_int8(&w.coeffs, src, sy, sx, scb, cbs, v + i * w.Cpad + cb0 * kLanes,
                                        pos_v, inv, &bad);
        mark_tile(flags[i], bad);
      },
      codes_fn != nullptr);
  return saturated;
}

// GEMMs of positions [a0, a1) and panels [q0, q1) for `rows` tiles. Where U streams from L3
// (w.prefetch_u), each panel's GEMM prefetches the next panel of the range (panel_gemm).
void gemm_stage(const Plan::Impl& p, const WinogradPlan& w, int64_t rows, int64_t a0, int64_t a1, int64_t q0,
                int64_t q1, const float* v, std::size_t pos_v, float* mo, std::size_t pos_m) {
  const auto panel_of = [&](int64_t a, int64_t q) {
    return w.U.data() + (a * w.Kpad + q * w.panel) * w.Cpad;
  };
  const auto panel_width = [&](int64_t q) { return std::min(w.panel, w.Kpad - q * w.panel); };
  const auto kc = static_cast<std::size_t>(w.Cpad);
  for (int64_t a = a0; a < a1; ++a) {
    const float* va = v + static_cast<std::size_t>(a) * pos_v;
    float* ma = mo + static_cast<std::size_t>(a) * pos_m;
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t width = panel_width(q);
      const float* next = nullptr;
      int64_t next_lines = 0;
      if (w.prefetch_u && (q + 1 < q1 || a + 1 < a1)) {
        const int64_t nq = q + 1 < q1 ? q + 1 : q0;
        next = panel_of(q + 1 < q1 ? a : a + 1, nq);
        next_lines = w.Cpad * (panel_width(nq) / kLanes);
      }
      panel_gemm(p.kernels->gemm, rows, static_cast<int>(width / kLanes), kc, va, kc, panel_of(a, q),
                 static_cast<std::size_t>(width), ma + q * w.panel, static_cast<std::size_t>(w.Kpad), next,
                 next_lines);
    }
  }
}

// Output transform of output channel blocks [kbs.lo, kbs.hi) of tiles [t0, t1) from M, scattered into the
// output. Channel blocks outside, tiles inside, so that consecutive tiles fill the same output lines. NCHW:
// runs of up to kBandTiles tiles of one tile row are transformed into a band [m rows][run*m columns][16
// channels] and stored as whole channel rows of 16 floats (full cache lines instead of m-float pieces).
void output_stage(const Plan::Impl& p, const WinogradPlan& w, int64_t t0, int64_t t1, BlockRange kbs,
                  const float* mo, std::size_t pos_m, float* tmp, void* out_any, float* io_rows,
                  NarrowCounts* counts) {
  const ConvShape& s = p.shape;
  const int64_t OH = s.out_h(), OW = s.out_w(), K = s.K;
  const int m = w.m;
  const bool band = p.layout == Layout::kNCHW, blocked = p.layout == Layout::kNCHW16c;
  // Stores go through the output type's narrow_rows, several rows per call (FP32: row copies; typed
  // output: rounded as stored, through io_rows for the NCHW bands so that a channel's rows of the band
  // are converted at once).
  const DataType otype = p.output_format.type;
  const bool fp32 = otype == DataType::kFp32;
  auto* out = static_cast<float*>(out_any);  // only when fp32
  const NarrowRowsFn narrow_rows = p.kernels->convert.narrow_rows[static_cast<int>(otype)];
  const float inv_scale = 1.0f / p.output_format.scale;
  const StoreBandNchwTypedFn store_typed = p.kernels->layout.store_band_nchw_typed[static_cast<int>(otype)];
  const std::size_t band_row = static_cast<std::size_t>(kBandTiles * m);
  // Low-precision plans and bf16/fp16 outputs count the results stored as NaN or Inf
  // (Plan::Impl::output_count_limit), from the FP32 values while they are in cache: `rows` rows `stride`
  // floats apart of `pixels` pixels.
  const float limit = p.output_count_limit;
  const CountBeyondFn count_beyond = p.kernels->convert.count_beyond;
  const auto count_results = [&](const float* src, std::ptrdiff_t stride, int64_t rows, int64_t pixels,
                                 int64_t lanes) {
    if (limit > 0.0f)
      counts->nonfinite += count_beyond(src, stride, rows, pixels, static_cast<int>(lanes), limit);
  };
  // A tile's output transform; returns whether its results must be counted: where the ISA tracks the
  // largest |y| in registers (output_reaching), only when some value reaches the limit (on Zen 4 the
  // pass over every stored tile had cost 4-5 % of int8 plans with FP32 outputs at 64 channels).
  const OutputTileReachingFn reaching = limit > 0.0f ? w.fns.output_reaching : nullptr;
  const auto transform_tile = [&](const float* src, const float* bias, float* dst, std::size_t dst_row) {
    if (reaching != nullptr) return reaching(&w.coeffs, src, pos_m, bias, p.relu, dst, dst_row, limit);
    w.fns.output(&w.coeffs, src, pos_m, bias, p.relu, dst, dst_row);
    return limit > 0.0f;
  };
  for (int64_t kb = kbs.lo; kb < kbs.hi; ++kb) {
    const int64_t k0 = kb * kLanes;
    const int64_t lanes = std::min<int64_t>(kLanes, K - k0);
    const float* bias = w.bias.data() + kb * kLanes;
    if (band) {
      for (int64_t t = t0; t < t1;) {
        const TileCoord c = coord(w, t);
        int64_t run = 1;
        while (t + run < t1 && run < kBandTiles && c.tx + run < w.tiles_x) ++run;
        bool to_count = false;
        for (int64_t q = 0; q < run; ++q)
          to_count |= transform_tile(mo + (t + q - t0) * w.Kpad + k0, bias, tmp + q * m * kLanes, band_row);
        const int64_t y0 = c.ty * m, x0 = c.tx * m;
        const int64_t rows = std::min<int64_t>(m, OH - y0), width = std::min<int64_t>(run * m, OW - x0);
        const int64_t first = ((c.img * K + k0) * OH + y0) * OW + x0;
        if (to_count) count_results(tmp, static_cast<std::ptrdiff_t>(band_row * kLanes), rows, width, lanes);
        if (fp32) {
          p.kernels->layout.store_band_nchw(tmp, static_cast<std::ptrdiff_t>(band_row),
                                            static_cast<int>(rows), width, static_cast<int>(lanes),
                                            out + first, OH * OW, OW);
        } else if (store_typed) {  // narrowed, then transposed as bytes or 16-bit words
          store_typed(tmp, static_cast<std::ptrdiff_t>(band_row), static_cast<int>(rows), width,
                      static_cast<int>(lanes), element_at(out_any, otype, first), OH * OW, OW, inv_scale,
                      counts);
        } else {
          // Staged with rows of `width` (packed), then each channel's rows narrowed in one call; when the
          // run is whole output rows, they are one contiguous stretch of the output.
          const auto io_row = static_cast<std::ptrdiff_t>(width);
          const auto plane = static_cast<std::ptrdiff_t>(m) * io_row;
          p.kernels->layout.store_band_nchw(tmp, static_cast<std::ptrdiff_t>(band_row),
                                            static_cast<int>(rows), width, static_cast<int>(lanes), io_rows,
                                            plane, io_row);
          for (int64_t l = 0; l < lanes; ++l)
            narrow_rows(io_rows + l * plane, io_row, element_at(out_any, otype, first + l * OH * OW), OW,
                        rows, width, inv_scale, counts);
        }
        t += run;
      }
      continue;
    }
    for (int64_t t = t0; t < t1; ++t) {
      const TileCoord c = coord(w, t);
      const int64_t y0 = c.ty * m, x0 = c.tx * m;
      const int64_t rows = std::min<int64_t>(m, OH - y0), cols = std::min<int64_t>(m, OW - x0);
      if (blocked && fp32 && lanes == kLanes && rows == m && cols == m) {
        // NCHW16c, FP32, a whole tile of 16 channels: transformed straight into the output (its rows
        // are OW pixels apart), not through tmp and a copy.
        const int64_t first = (((c.img * w.Kb + kb) * OH + y0) * OW + x0) * kLanes;
        if (transform_tile(mo + (t - t0) * w.Kpad + k0, bias, out + first, static_cast<std::size_t>(OW)))
          count_results(out + first, OW * kLanes, m, m, kLanes);
        continue;
      }
      if (blocked && otype == DataType::kInt8 && w.fns.output_int8 != nullptr && lanes == kLanes &&
          rows == m && cols == m) {
        // NCHW16c int8, a whole tile of 16 channels: narrowed as transformed, straight into the output.
        const int64_t first = (((c.img * w.Kb + kb) * OH + y0) * OW + x0) * kLanes;
        w.fns.output_int8(&w.coeffs, mo + (t - t0) * w.Kpad + k0, pos_m, bias, p.relu,
                          static_cast<int8_t*>(out_any) + first, static_cast<std::size_t>(OW), inv_scale,
                          counts);
        continue;
      }
      if (blocked && otype == DataType::kBf16 && w.fns.output_bf16 != nullptr && lanes == kLanes &&
          rows == m && cols == m) {
        // NCHW16c bf16, a whole tile: narrowed as transformed; a tile whose results reach the count's
        // limit is transformed again below, where they are counted and stored again (the same bits).
        const int64_t first = (((c.img * w.Kb + kb) * OH + y0) * OW + x0) * kLanes;
        if (!w.fns.output_bf16(&w.coeffs, mo + (t - t0) * w.Kpad + k0, pos_m, bias, p.relu,
                               static_cast<uint16_t*>(out_any) + first, static_cast<std::size_t>(OW), limit))
          continue;
      }
      if (transform_tile(mo + (t - t0) * w.Kpad + k0, bias, tmp, static_cast<std::size_t>(m)))
        count_results(tmp, m * kLanes, rows, cols, lanes);
      if (blocked) {         // NCHW16c: each tile row is cols whole pixels of 16 channels, contiguous
        if (lanes < kLanes)  // padding lanes written as zero (a NaN input would otherwise reach them)
          for (int64_t q = 0; q < m * m; ++q)
            std::fill(tmp + q * kLanes + lanes, tmp + (q + 1) * kLanes, 0.0f);
        const int64_t first = (((c.img * w.Kb + kb) * OH + y0) * OW + x0) * kLanes;
        narrow_rows(tmp, m * kLanes, element_at(out_any, otype, first), OW * kLanes, rows, cols * kLanes,
                    inv_scale, counts);
        continue;
      }
      for (int64_t i = 0; i < rows; ++i) {  // NHWC: a tile row is `cols` pixels, K channels apart
        const int64_t first = ((c.img * OH + y0 + i) * OW + x0) * K + k0;
        narrow_rows(tmp + i * m * kLanes, kLanes, element_at(out_any, otype, first), K, cols, lanes,
                    inv_scale, counts);
      }
    }
  }
}

// Transform tasks: chunks of tiles, each over a group of channel blocks. The fused order's blocks are
// chunks of w.block tiles over every block (one group). The phased order takes chunks of kPhasedChunk
// tiles, split into groups of channel blocks when there are too few chunks for every thread to take
// several (kPhasedTasksPerThread). A batch-1 layer of deep channels has few tiles: 1x256x14x14 at F(7,3)
// has 4, one chunk, so one thread transformed every tile while the other waited at each stage's end
// (16-21 % of thread time idle on AVX2). Channel blocks are independent lanes of the transforms, so any
// grouping gives the same bits.
constexpr int64_t kPhasedChunk = 4;
constexpr int64_t kPhasedTasksPerThread = 4;

struct TransformTasks {
  int64_t tiles, chunk, groups, per_group, blocks;
  std::size_t count() const { return static_cast<std::size_t>(ceil_div(tiles, chunk) * groups); }
  int64_t t0(std::size_t task) const { return static_cast<int64_t>(task) / groups * chunk; }
  int64_t t1(std::size_t task) const { return std::min(tiles, t0(task) + chunk); }
  BlockRange range(std::size_t task) const {
    const int64_t lo = static_cast<int64_t>(task) % groups * per_group;
    return {lo, std::min(blocks, lo + per_group)};
  }
};

TransformTasks block_tasks(int64_t tiles, int64_t block, int64_t blocks) {
  return {tiles, block, 1, blocks, blocks};
}

TransformTasks phased_tasks(int64_t tiles, int64_t blocks, int threads) {
  const int64_t chunks = ceil_div(tiles, kPhasedChunk);
  const int64_t wanted = std::clamp<int64_t>(ceil_div(kPhasedTasksPerThread * threads, chunks), 1, blocks);
  const int64_t per_group = ceil_div(blocks, wanted);
  return {tiles, kPhasedChunk, ceil_div(blocks, per_group), per_group, blocks};
}

}  // namespace

// Max |V| per tap (finite values) over every tile of `input`, into amax (running max): the input
// transforms without the GEMMs. They keep max |V| per position and lane in a small per-worker array
// (input_amax, 16 floats per position) without storing V; the lanes are reduced at the end. Tasks are
// the plan's fused blocks, or runs of a few tiles for a phased plan (one block of every tile). The
// blocked copy of the last image group stays in packed_input (execute reuses it: one group, one copy).
void tap_amax_pass(Plan::Impl& p, const void* input, TensorFormat format, float* amax) {
  const WinogradPlan& w = *p.wino;
  const ConvShape& s = p.shape;
  const int64_t nn = static_cast<int64_t>(w.n) * w.n;
  float* xb = p.packed_input.data();
  const bool in_place = w.reads_input_directly;
  for (auto& m : p.thread_amax) std::fill(m.begin(), m.end(), 0.0f);
  const int64_t per_image = w.tiles_y * w.tiles_x;
  for (int64_t img0 = 0; img0 < s.N; img0 += w.image_group) {
    const int64_t images = std::min(w.image_group, s.N - img0);
    if (!in_place)
      pack_blocked_input(p, element_at(input, format.type, img0 * input_elements_per_image(p)), format,
                         images, xb, w.Cb, w.Hp, w.Wp);
    const int64_t first = img0 * per_image, last = (img0 + images) * per_image;
    // The fused plan's blocks, or the phased order's tasks, over the group's tiles.
    const TransformTasks tasks =
        w.phased ? phased_tasks(last - first, w.Cb, p.threads) : block_tasks(last - first, w.block, w.Cb);
    const auto amax_tiles = [&](std::size_t task, int worker) {
      float* lane_max = p.thread_amax[static_cast<std::size_t>(worker)].data();
      const TileSource from = tile_source(p, xb, img0, in_place ? input : nullptr, format, worker);
      for_each_input_tile<kRawInt8>(
          p, w, from, first + tasks.t0(task), first + tasks.t1(task), tasks.range(task),
          [&]<class Src>(int64_t, const Src* src, std::ptrdiff_t sy, std::ptrdiff_t sx, std::ptrdiff_t scb,
                         int, int cbs) {
            if constexpr (std::is_same_v<Src, int8_t>)
              w.fns.input_amax_codes(&w.coeffs, src, sy, sx, scb, cbs, format.scale, lane_max);
            else
              w.fns.input_amax(&w.coeffs, src, sy, sx, scb, cbs, lane_max);
          },
          w.fns.input_amax_codes != nullptr);
    };
    p.pool->run(tasks.count(), p.charged(Stage::kScales, amax_tiles));
  }
  for (const auto& m : p.thread_amax)
    for (int64_t a = 0; a < nn; ++a)
      amax[a] = std::max(amax[a], w.convert.amax(m.data() + a * kLanes, kLanes));
}

namespace {

// How an execute of an fp16 plan finds V's shift (set_fp16_v_shift): max |d| from the blocked copy or a
// scan first (kFind), or the one already in p.v_shift, 0 or set from a scan (kGiven); kGivenWatchM also
// counts the NaN/Inf in M's first channel block (first_block_nonfinite) for a plan whose ReLU would hide
// an overflow from the output's count (execute_winograd).
enum class V16Shift { kFind, kGiven, kGivenWatchM };

// NaN/Inf values among M's first 16 output channels of `rows` tiles (each tile a row of Kpad floats, the
// positions pos_m apart). Where a V value rounded to inf, every output channel's M at its position is
// +-inf or NaN (a sum with an inf or NaN term), so the first block shows it whatever the weights.
int64_t first_block_nonfinite(const Plan::Impl& p, const WinogradPlan& w, int64_t rows, const float* mo,
                              std::size_t pos_m) {
  const CountBeyondFn count_beyond = p.kernels->convert.count_beyond;
  const int64_t nn = static_cast<int64_t>(w.n) * w.n;
  int64_t found = 0;
  for (int64_t a = 0; a < nn; ++a)
    found += count_beyond(mo + static_cast<std::size_t>(a) * pos_m, static_cast<std::ptrdiff_t>(w.Kpad), rows,
                          1, kLanes, std::numeric_limits<float>::infinity());
  return found;
}

void run_winograd(Plan::Impl& p, const void* input, void* output, V16Shift v16) {
  const WinogradPlan& w = *p.wino;
  const ConvShape& s = p.shape;
  float* xb = p.packed_input.data();
  const int64_t nn = static_cast<int64_t>(w.n) * w.n;
  const int64_t panels = ceil_div(w.Kpad, w.panel);
  const int64_t per_image = w.tiles_y * w.tiles_x;
  const bool lowp = w.precision != Precision::kFp32;
  const bool spatial = w.precision == Precision::kInt8Spatial;
  const bool marks_tiles = w.precision == Precision::kInt8 || spatial;  // NaN/Inf tiles flagged, poisoned
  p.stats = LowpStats{};
  if (v16 == V16Shift::kFind) p.v_shift = 0;
  // fp16's V shift needs max |d| of the whole input before any tile is transformed: taken from the blocked
  // copy as it is made where one copy holds every image, otherwise by a pass over the input first.
  const bool find_v_shift = w.precision == Precision::kFp16 && v16 == V16Shift::kFind;
  const bool watch_m = v16 == V16Shift::kGivenWatchM;
  if (watch_m) std::fill(p.thread_m_nonfinite.begin(), p.thread_m_nonfinite.end(), 0);
  const bool fp16_from_copy = find_v_shift && !w.reads_input_directly && w.image_group >= s.N;
  const bool fp16_scan = find_v_shift && !fp16_from_copy;
  bool input_still_packed = false;
  if (lowp) {
    std::fill(p.thread_saturated.begin(), p.thread_saturated.end(), 0);
    std::fill(p.thread_nonfinite.begin(), p.thread_nonfinite.end(), 0);
    if (spatial) {  // one input scale: calibrated, or max |d| of this input / 127
      p.d_scale = w.cal_scale.empty() ? symmetric_int8_scale(input_tensor_amax(p, input, p.input_format))
                                      : w.cal_scale[0];
    } else if (!w.cal_scale.empty()) {
      std::copy(w.cal_scale.begin(), w.cal_scale.end(), p.v_scale.begin());
    } else if (fp16_scan) {
      set_fp16_v_shift(p, input_tensor_amax(p, input, p.input_format));
    } else if (w.precision == Precision::kInt8 && !w.phased) {
      std::vector<float> amax(static_cast<std::size_t>(nn), 0.0f);
      tap_amax_pass(p, input, p.input_format, amax.data());
      lowp_set_scales(p, amax.data());
      // With one image group the pass leaves this input's blocked copy in place: the fused loop below
      // uses it instead of copying the input again.
      input_still_packed = w.image_group >= s.N;
    }
  }
  // int8: the inverse scales of the transform's in-register quantization (the same 1 / scale as the
  // conversion pass), where the scales are known before V is: always in the fused order (per call,
  // from the amax pass above), in the phased one when calibrated.
  const bool int8_direct = w.precision == Precision::kInt8 && w.fns.input_int8 != nullptr &&
                           (!w.run_phased() || !w.cal_scale.empty());
  std::array<float, kMaxGenericN * kMaxGenericN> v_inv{};
  if (int8_direct)
    for (int64_t a = 0; a < nn; ++a)
      v_inv[static_cast<std::size_t>(a)] = 1.0f / p.v_scale[static_cast<std::size_t>(a)];
  auto finish_stats = [&] {
    for (std::size_t i = 0; i < p.thread_saturated.size(); ++i) {
      p.stats.saturated += p.thread_saturated[i];
      p.stats.nonfinite_tiles += p.thread_nonfinite[i];
    }
    p.stats.v_shift = p.v_shift;
  };

  // The fp16-arithmetic GEMM's operand written by the input transform itself, where the ISA has it
  // (the same bits as the conversion pass: round to nearest even).
  const bool fp16_direct = lowp && w.fp16_fma && w.fns.input_fp16 != nullptr;
  // bf16 likewise: bf16 bits for the dot-product and AMX GEMMs, bf16 values kept in floats for the FMA
  // GEMM (the conversion and in-place rounding passes' bits).
  const bool bf16_bits = w.precision == Precision::kBf16 && !w.v_in_place();
  const InputTileFp16Fn words_fn = !lowp         ? nullptr
                                   : fp16_direct ? w.fns.input_fp16
                                   : bf16_bits   ? w.fns.input_bf16
                                                 : nullptr;
  // The widened GEMMs' V rounded to bf16 or fp16 values by the transform's store, where the plan found
  // one (WinogradPlan::rounding_input).
  const bool round_direct = w.rounding_input != nullptr;
  const InputTileFn plain_fn = round_direct ? w.rounding_input : w.fns.input;
  // int8-spatial: V' as int16 from the transform itself where the ISA has it (the conversion's bits).
  const bool int16_direct = spatial && w.fns.input_int16 != nullptr;
  // int8-spatial on an int8 tensor whose scale is the input scale of this call (calibrated, or the
  // tensor's largest code is 127): its codes are the ones the quantization pass would give back
  // (fl(fl(c * s) * fl(1 / s)) rounds to c for |c| <= 127), so the blocked copy takes the codes
  // themselves and the pass is skipped. The same bits, one pass over the input fewer. A code of -128
  // (outside the symmetric range, which the pass would clamp to -127) is taken as it is; the plan's
  // int16 and int32 bounds allow for it (build_int8_spatial).
  // Whether the transform writes the GEMM's operand itself, with no conversion pass over an FP32 V after
  // it (int8: once the scales are known).
  const bool v_direct = words_fn != nullptr || int16_direct || int8_direct || round_direct;
  const bool codes_given =
      spatial && p.input_format.type == DataType::kInt8 && p.d_scale == p.input_format.scale;
  const TensorFormat pack_format = codes_given ? TensorFormat{DataType::kInt8, 1.0f} : p.input_format;
  const bool quantize_packed = spatial && !codes_given;
  // int8-spatial reads its int8 codes in place when they are this call's codes (the copy would only
  // widen them); otherwise its copy quantizes the input.
  // fp16 with V scaled (set_fp16_v_shift): the scaling is made in the copy, so a call that scales
  // makes one (a plan that reads in place allocates it at its first such call).
  const bool in_place =
      (w.reads_input_directly && p.v_shift == 0) || (codes_given && w.spatial_codes_directly);
  const void* tensor = in_place ? input : nullptr;
  if (!in_place && p.packed_input.size() == 0)
    p.packed_input.resize(static_cast<std::size_t>(w.image_group * w.Cb * w.Hp * w.Wp * kLanes));
  xb = p.packed_input.data();
  // The blocked copy of `images` images; fp16: times 2^-v_shift (exact: a power of two), the shift found
  // in the copy itself where it holds every image.
  const auto pack = [&](const void* first_image, int64_t images) {
    float amax = 0.0f;
    pack_blocked_input(p, first_image, pack_format, images, xb, w.Cb, w.Hp, w.Wp, quantize_packed,
                       fp16_from_copy ? &amax : nullptr);
    if (fp16_from_copy) set_fp16_v_shift(p, amax);
    if (p.v_shift != 0)
      scale_blocked_input(p, xb, images * w.Cb * w.Hp * w.Wp * kLanes, std::ldexp(1.0f, -p.v_shift));
  };
  if (w.run_phased()) {
    if (!in_place) pack(input, s.N);
    const std::size_t pos_v = w.pos_v, pos_m = w.pos_m, pos_vl = w.pos_vl;
    float* v = p.shared_v.data();
    float* mo = p.shared_m.data();
    float* vl = w.v_in_place() ? v : p.shared_lowp.data();
    // Input and output transforms by chunks of tiles and groups of channel blocks (TransformTasks).
    const TransformTasks in_tasks = phased_tasks(w.tiles, w.Cb, p.threads);
    const TransformTasks out_tasks = phased_tasks(w.tiles, w.Kb, p.threads);
    if (int16_direct || int8_direct) std::fill_n(p.shared_flags.data(), w.tiles, uint8_t{0});
    const auto transform_chunk = [&](std::size_t task, int worker) {
      const int64_t t0 = in_tasks.t0(task), t1 = in_tasks.t1(task);
      const BlockRange blocks = in_tasks.range(task);
      const TileSource from = tile_source(p, xb, 0, tensor, pack_format, worker);
      if (words_fn)
        input_stage_words(p, w, words_fn, from, t0, t1, blocks, reinterpret_cast<uint16_t*>(vl) + t0 * w.Cpad,
                          pos_vl);
      else if (int16_direct)
        input_stage_int16(p, w, from, t0, t1, blocks, reinterpret_cast<int16_t*>(vl) + t0 * w.Cpad, pos_vl,
                          p.shared_flags.data() + t0);
      else if (int8_direct)
        p.thread_saturated[static_cast<std::size_t>(worker)] +=
            input_stage_int8(p, w, from, t0, t1, blocks, reinterpret_cast<uint8_t*>(vl) + t0 * w.Cpad, pos_vl,
                             v_inv.data(), p.shared_flags.data() + t0);
      else
        input_stage(p, w, from, t0, t1, blocks, v + t0 * w.Cpad, pos_v, plain_fn);
    };
    p.pool->run(in_tasks.count(), p.charged(Stage::kInput, transform_chunk));
    if (lowp && !v_direct) {
      if (w.precision == Precision::kInt8 && w.cal_scale.empty()) {  // scales from this call's V
        std::vector<float> amax(static_cast<std::size_t>(nn), 0.0f);
        lowp_tap_amax(p, v, pos_v, w.tiles, amax.data());
        lowp_set_scales(p, amax.data());
      }
      // Conversion by chunks of tiles (single tiles where they are few); element offsets inside a position
      // are the same in V and in the low-precision copy (whatever its element size; the positions have
      // strides of their own), so a chunk converts its own rows.
      const int64_t chunk =
          std::clamp<int64_t>(w.tiles / (kPhasedTasksPerThread * p.threads), 1, kPhasedChunk);
      const auto convert_chunk = [&](std::size_t task, int worker) {
        const int64_t t0 = static_cast<int64_t>(task) * chunk;
        const int64_t t1 = std::min(w.tiles, t0 + chunk);
        const auto off = static_cast<std::size_t>(t0 * w.Cpad);
        float* dst =
            w.v_in_place()
                ? vl
                : reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(vl) + off * w.v_operand_size());
        p.thread_saturated[static_cast<std::size_t>(worker)] +=
            lowp_convert(p, v + off, pos_v, t1 - t0, dst, pos_vl, p.shared_flags.data() + t0);
      };
      p.pool->run(static_cast<std::size_t>(ceil_div(w.tiles, chunk)),
                  p.charged(Stage::kConvert, convert_chunk));
    }
    // A task per position and panel; where the int8 kernel converts V's rows itself, per position and run
    // of panels, as few runs as keep kPhasedTasksPerThread tasks per thread (each run converts V again).
    // FP32 plans that prefetch U's panels take runs of panels the same way (a task prefetches only inside
    // its own run).
    const int64_t groups =
        (lowp && w.int8_panels_gemm != nullptr) || (!lowp && w.prefetch_u)
            ? std::clamp<int64_t>(ceil_div(kPhasedTasksPerThread * p.threads, nn), 1, panels)
            : panels;
    const auto gemm_task = [&](std::size_t task, int) {
      const int64_t a = static_cast<int64_t>(task) / groups, g = static_cast<int64_t>(task) % groups;
      const int64_t q0 = g * panels / groups, q1 = (g + 1) * panels / groups;
      if (lowp)
        lowp_gemm_stage(p, w.tiles, a, a + 1, q0, q1, vl, pos_vl, mo, pos_m);
      else
        gemm_stage(p, w, w.tiles, a, a + 1, q0, q1, v, pos_v, mo, pos_m);
    };
    p.pool->run(static_cast<std::size_t>(nn * groups), p.charged(Stage::kGemm, gemm_task));
    const auto output_chunk = [&](std::size_t task, int worker) {
      const int64_t t0 = out_tasks.t0(task), t1 = out_tasks.t1(task);
      const BlockRange kbs = out_tasks.range(task);
      const auto wk = static_cast<std::size_t>(worker);
      if (marks_tiles) {  // each task poisons its own columns; the first group counts the tiles
        const int64_t poisoned = lowp_poison(p, t1 - t0, p.shared_flags.data() + t0, mo + t0 * w.Kpad, pos_m,
                                             kbs.lo * kLanes, kbs.hi * kLanes);  // Kpad is Kb * 16
        if (kbs.lo == 0) p.thread_nonfinite[wk] += poisoned;
      }
      if (watch_m && kbs.lo == 0)
        p.thread_m_nonfinite[wk] += first_block_nonfinite(p, w, t1 - t0, mo + t0 * w.Kpad, pos_m);
      output_stage(p, w, t0, t1, kbs, mo + t0 * w.Kpad, pos_m, p.thread_scratch[wk].data(), output,
                   io_rows(p, wk), &p.thread_io_counts[wk]);
    };
    p.pool->run(out_tasks.count(), p.charged(Stage::kOutput, output_chunk));
    if (lowp) finish_stats();
    return;
  }

  // Fused: a group of images at a time, so that their blocked copy is still in cache when their tiles
  // are transformed.
  const std::size_t pos_v = w.pos_v, pos_m = w.pos_m, pos_vl = w.pos_vl;
  for (int64_t img0 = 0; img0 < s.N; img0 += w.image_group) {
    const int64_t images = std::min(w.image_group, s.N - img0);
    if (!input_still_packed && !in_place)
      pack(element_at(input, p.input_format.type, img0 * input_elements_per_image(p)), images);
    const int64_t first = img0 * per_image, last = (img0 + images) * per_image;
    const int64_t blocks = ceil_div(last - first, w.block);
    // A task per block and part of its output channels (w.k_parts: whole panels; each part transforms
    // the block's input again, and only the first counts what the input transform found).
    const int64_t parts = w.k_parts;
    p.pool->run(static_cast<std::size_t>(blocks * parts), [&](std::size_t task, int worker) {
      StageLaps laps = p.laps(worker);
      const auto wk = static_cast<std::size_t>(worker);
      float* v = p.thread_scratch[wk].data();
      float* mo = v + static_cast<std::size_t>(nn) * pos_v;
      float* tmp = mo + static_cast<std::size_t>(nn) * pos_m;
      const int64_t part = static_cast<int64_t>(task) % parts;
      const int64_t t0 = first + static_cast<int64_t>(task) / parts * w.block;
      const int64_t t1 = std::min(last, t0 + w.block);
      const int64_t q0 = part * panels / parts, q1 = (part + 1) * panels / parts;
      const bool counts = part == 0;
      const TileSource from = tile_source(p, xb, img0, tensor, pack_format, worker);
      const BlockRange all_in{0, w.Cb};
      const BlockRange outs{q0 * w.panel / kLanes, std::min(w.Kb, q1 * w.panel / kLanes)};
      if (!lowp) {
        input_stage(p, w, from, t0, t1, all_in, v, pos_v, w.fns.input);
        laps.lap(Stage::kInput);
        gemm_stage(p, w, t1 - t0, 0, nn, q0, q1, v, pos_v, mo, pos_m);
        laps.lap(Stage::kGemm);
        output_stage(p, w, t0, t1, outs, mo, pos_m, tmp, output, io_rows(p, wk), &p.thread_io_counts[wk]);
        laps.lap(Stage::kOutput);
        return;
      }
      // The GEMM operand: written by the transform itself where it can (fp16 bits, int8 codes, int16 V': no
      // FP32 V, no conversion pass), otherwise converted from the FP32 V.
      float* vl = w.v_in_place() ? v : p.thread_lowp[wk].data();
      uint8_t* flags = p.thread_flags[wk].data();
      if (int16_direct || int8_direct) std::fill_n(flags, t1 - t0, uint8_t{0});  // the transforms OR in
      if (words_fn) {
        input_stage_words(p, w, words_fn, from, t0, t1, all_in, reinterpret_cast<uint16_t*>(vl), pos_vl);
      } else if (int16_direct) {
        input_stage_int16(p, w, from, t0, t1, all_in, reinterpret_cast<int16_t*>(vl), pos_vl, flags);
      } else if (int8_direct) {
        const int64_t saturated = input_stage_int8(p, w, from, t0, t1, all_in, reinterpret_cast<uint8_t*>(vl),
                                                   pos_vl, v_inv.data(), flags);
        if (counts) p.thread_saturated[wk] += saturated;
      } else {  // FP32 V, or bf16-rounded in place (vl is v)
        input_stage(p, w, from, t0, t1, all_in, v, pos_v, plain_fn);
        laps.lap(Stage::kInput);
        if (!v_direct) {
          const int64_t saturated = lowp_convert(p, v, pos_v, t1 - t0, vl, pos_vl, flags);
          if (counts) p.thread_saturated[wk] += saturated;
        }
      }
      laps.lap(v_direct ? Stage::kInput : Stage::kConvert);
      lowp_gemm_stage(p, t1 - t0, 0, nn, q0, q1, vl, pos_vl, mo, pos_m);
      laps.lap(Stage::kGemm);
      if (marks_tiles) {
        const int64_t poisoned =
            lowp_poison(p, t1 - t0, flags, mo, pos_m, outs.lo * kLanes, outs.hi * kLanes);  // Kpad is Kb * 16
        if (counts) p.thread_nonfinite[wk] += poisoned;
      }
      if (watch_m && outs.lo == 0)
        p.thread_m_nonfinite[wk] += first_block_nonfinite(p, w, t1 - t0, mo, pos_m);
      output_stage(p, w, t0, t1, outs, mo, pos_m, tmp, output, io_rows(p, wk), &p.thread_io_counts[wk]);
      laps.lap(Stage::kOutput);
    });
  }
  if (lowp) finish_stats();
}

}  // namespace

// fp16 plans that would scan the input for max |d| before every execute (in-place NHWC / NCHW16c, copies
// by image groups) take V's shift from a sample of the input instead (input_tensor_amax_sample: a shift
// up where the data is small, otherwise none, or a shift down where even the sample passes the limit),
// and scan only where the output then holds NaN or Inf (the count of every low-precision plan,
// output_stage): a V past fp16's range rounds to inf, and a product or sum with it is +-inf or NaN in
// every output channel of M at its position, which reaches every stored output whose transform reads
// that position (a cropped edge output can miss it, and is not stored). Where the scan then asks for
// another shift, the execute runs again with it, so the result is the scan-first result wherever V had
// overflowed (the sample missed the input's largest values), and otherwise the sampled one, whose V is
// within fp16's normal range wherever the exact one's would be. A fused ReLU takes -inf to 0, and an
// overflow can leave only -inf where the result is positive: those plans watch M's first channel block
// instead, before the output transform (first_block_nonfinite: n^2 pixels of 16 floats a tile, where the
// output's count reads m^2 for every block of 16 output channels). With fp16 arithmetic the shift also
// keeps the GEMMs' fp16 chunk sums finite (|V| <= 2^12), whose overflow can reach some output channels
// only: those plans, with a ReLU, scan first.
void execute_winograd(Plan::Impl& p, const void* input, void* output) {
  const WinogradPlan& w = *p.wino;
  const bool deferred = w.precision == Precision::kFp16 && (!p.relu || !w.fp16_fma) &&
                        (w.reads_input_directly || w.image_group < p.shape.N);
  if (!deferred) {
    run_winograd(p, input, output, V16Shift::kFind);
    return;
  }
  set_fp16_v_shift(p, input_tensor_amax_sample(p, input, p.input_format));
  const int sampled_shift = p.v_shift;
  run_winograd(p, input, output, p.relu ? V16Shift::kGivenWatchM : V16Shift::kGiven);
  int64_t held = 0;  // NaN/Inf results stored, or in M before a ReLU
  if (p.relu) {
    for (const int64_t c : p.thread_m_nonfinite) held += c;
  } else {
    for (const NarrowCounts& c : p.thread_io_counts) held += c.nonfinite;
  }
  if (held == 0) return;
  set_fp16_v_shift(p, input_tensor_amax(p, input, p.input_format));
  // The same shift: NaN/Inf inputs, or results past the output type's range; V was in range.
  if (p.v_shift == sampled_shift) return;
  std::fill(p.thread_io_counts.begin(), p.thread_io_counts.end(), NarrowCounts{});
  run_winograd(p, input, output, V16Shift::kGiven);
}

void calibrate_winograd(Plan::Impl& p, std::span<const float* const> inputs) {
  WinogradPlan& w = *p.wino;
  // All-zero samples give no range: refused (symmetric_int8_scale would give every position a scale of 1,
  // and the data would be quantized in steps of 1, silently coarse). A position whose samples are all
  // zero keeps the scale 1: it is zero by structure (small images with padding), and so is the data.
  if (w.precision == Precision::kInt8Spatial) {  // the input scale: max |d| over the samples / 127
    float amax = 0.0f;
    for (const float* input : inputs) amax = std::max(amax, input_tensor_amax(p, input, TensorFormat{}));
    if (!(amax > 0.0f)) throw Error("calibration: the samples are all zero, which gives no input scale");
    w.cal_scale = {symmetric_int8_scale(amax)};
    return;
  }
  std::vector<float> amax(static_cast<std::size_t>(w.n) * static_cast<std::size_t>(w.n), 0.0f);
  for (const float* input : inputs) tap_amax_pass(p, input, TensorFormat{}, amax.data());
  if (std::none_of(amax.begin(), amax.end(), [](float a) { return a > 0.0f; }))
    throw Error("calibration: the samples are all zero, which gives no scales");
  lowp_set_scales(p, amax.data());
  w.cal_scale = p.v_scale;
}

}  // namespace nova::conv
