// A cheap fingerprint of a tensor's memory, for the PyTorch drop-in (python/nova/torch.py): a layer's
// plan holds filters transformed from its weights, and PyTorch's version counter, by which the layer
// sees its weights change, misses writes through `weight.data` (a tensor with a counter of its own):
// `p.data.add_(-lr * p.grad)`, the manual SGD step of many training loops, left a layer computing with
// its old filters, silently. The fingerprint samples the memory instead, so such whole-tensor writes are
// seen; a write that changes none of the sampled words (a few elements) still is not.
#include <nanobind/nanobind.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "bindings.hpp"

namespace nova::python {
namespace {

namespace nb = nanobind;

// Words sampled per region: evenly spaced 32-bit words, the first and last included (smaller regions are
// read whole). A whole-tensor write changes them all; the layer's execute never reads the weights (its
// filters are transformed), so each sample of a large tensor is a cache miss: at 256 samples the check
// cost 12-15 us a call on a 256-channel layer's 2.4 MB of weights, 2.6-2.9 us on a tiny one (session 33,
// bench/results/2026-11-27-session33-avx2/dropin_fingerprint_cost.py), hence 16.
constexpr std::uint64_t kSampledWords = 16;

// h and v combined (boost's hash_combine step), then splitmix64's finalizer: every bit of v reaches h.
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  std::uint64_t z = h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t region_fingerprint(std::uintptr_t address, std::uint64_t bytes, std::uint64_t h) {
  const auto* p = reinterpret_cast<const unsigned char*>(address);
  h = mix(h, bytes);
  if (p == nullptr || bytes == 0) return h;
  if (bytes < 4) {
    for (std::uint64_t i = 0; i < bytes; ++i) h = mix(h, p[i]);
    return h;
  }
  const std::uint64_t words = bytes / 4;
  const std::uint64_t samples = std::min(words, kSampledWords);
  const auto word_at = [&](std::uint64_t offset) {
    std::uint32_t w;
    std::memcpy(&w, p + offset, 4);
    return w;
  };
  for (std::uint64_t k = 0; k < samples; ++k) {
    const std::uint64_t i = samples == 1 ? 0 : k * (words - 1) / (samples - 1);
    h = mix(h, word_at(4 * i));
  }
  return mix(h, word_at(bytes - 4));  // the tail bytes past the last whole word
}

}  // namespace

void bind_memory_fingerprint(nb::module_& m) {
  m.def(
      "_memory_fingerprint",
      [](std::uintptr_t address, std::uint64_t bytes, std::uintptr_t address2, std::uint64_t bytes2) {
        return region_fingerprint(address2, bytes2, region_fingerprint(address, bytes, 0));
      },
      nb::arg("address"), nb::arg("bytes"), nb::arg("address2") = 0, nb::arg("bytes2") = 0,
      "A hash of up to 16 evenly spaced 32-bit words (and the last bytes) of each of one or two memory "
      "regions that the caller keeps alive (for nova.torch: a layer's weight and bias storage)");
}

}  // namespace nova::python
