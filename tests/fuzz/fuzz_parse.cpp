// Fuzz target of everything nova reads from users' text and files: point lists, rationals, scalings,
// tiles, transform JSON and .npy files. The first byte picks the reader, the rest is its input. What
// must hold: bad input is refused with nova::Error (never another exception, a crash or a hang), and
// what is accepted is right:
//   - accepted points build a transform that verifies exactly, and print and parse back to themselves;
//   - rationals print and parse back to themselves;
//   - an accepted scaling gives a transform that verifies;
//   - a transform read from JSON writes back to JSON that reads as the same matrices;
//   - an accepted .npy holds as many values as its shape says, and writes back to the same array.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "byte_reader.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/exact/points.hpp"
#include "nova/exact/rational.hpp"
#include "nova/exact/tile.hpp"
#include "nova/exact/transform.hpp"
#include "nova/exact/verify.hpp"
#include "nova/numerics/npy.hpp"

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_parse: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

void check_verifies(const nova::Transform& t, const std::string& what) {
  const nova::Verification v = nova::verify(t);
  if (!v) fail(what + ": the transform does not verify: " + v.reason);
}

void points(const std::string& text, int r_choice) {
  const nova::PointList p = nova::parse_points(text);
  const nova::PointList again = nova::parse_points(nova::to_string(p));
  if (!(again == p)) fail("points do not survive printing: '" + text + "' -> '" + nova::to_string(p) + "'");
  const int n = static_cast<int>(p.size());
  if (n < 2 || n > 10) return;           // construction cost grows fast; the tiles users build are small
  const int r = 1 + r_choice % (n - 1);  // r in [1, n-1], m = n - r + 1 >= 2
  const nova::TileSize tile{n - r + 1, r};
  check_verifies(nova::Transform::construct(tile, p), "points '" + text + "' as " + tile.to_string());
  check_verifies(nova::Transform::construct(tile, p, nova::ScalingSpec{"lagrange", {}, {}}),
                 "points '" + text + "' (lagrange)");
}

void rational(const std::string& text) {
  const nova::Rational q = nova::parse_rational(text);
  if (nova::parse_rational(nova::to_string(q)) != q)
    fail("a rational does not survive printing: '" + text + "'");
}

void scaling(const std::string& text) {
  const nova::ScalingSpec spec = nova::ScalingSpec::parse(text);
  const nova::PointList p = nova::parse_points("0, 1, -1, inf");
  check_verifies(nova::Transform::construct({2, 3}, p, spec), "scaling '" + text + "'");
}

void tile(const std::string& text) {
  const nova::TileSize t = nova::parse_tile(text);
  if (t.m < 1 || t.r < 1 || t.n() > nova::kMaxPoints) fail("an impossible tile was accepted: '" + text + "'");
}

void transform_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return;
  const nova::Transform t = nova::transform_from_json(j);
  (void)nova::verify(t);  // a file may hold a wrong transform; verifying it must not fail otherwise
  const nova::Transform back = nova::transform_from_json(nova::to_json(t));
  if (!(back.AT() == t.AT() && back.G() == t.G() && back.BT() == t.BT()))
    fail("a transform read from JSON reads back differently");
  (void)nova::to_text(t);
  (void)nova::to_cpp_header(t);
}

void npy(const std::string& bytes) {
  const nova::NpyArray a = nova::parse_npy(bytes, "fuzz.npy");
  int64_t count = 1;
  for (int64_t d : a.shape) count *= d;
  if (count != static_cast<int64_t>(a.data.size()) || a.size() != count)
    fail("an .npy array's values do not match its shape");
  const nova::NpyArray back = nova::parse_npy(nova::npy_bytes(a.shape, a.data), "back.npy");
  if (back.shape != a.shape) fail("an .npy array does not survive writing");
  for (std::size_t i = 0; i < a.data.size(); ++i)
    if (!(back.data[i] == a.data[i]) && !(a.data[i] != a.data[i] && back.data[i] != back.data[i]))
      fail("an .npy value does not survive writing");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  nova::fuzz::ByteReader in(data, size);
  const int64_t reader = in.range(0, 5);
  const int r_choice = static_cast<int>(in.range(0, 255));
  std::string text = in.rest();
  // Rationals of thousands of digits are valid but slow to build transforms from; the readers' bugs
  // live in short inputs (a transform's JSON and an .npy file are longer by nature).
  const std::size_t limit = reader >= 4 ? 16384 : 512;
  if (text.size() > limit) text.resize(limit);
  try {
    switch (reader) {
      case 0:
        points(text, r_choice);
        break;
      case 1:
        rational(text);
        break;
      case 2:
        scaling(text);
        break;
      case 3:
        tile(text);
        break;
      case 4:
        transform_json(text);
        break;
      default:
        npy(text);
        break;
    }
  } catch (const nova::Error&) {
    // refused with a message: what bad input must get
  } catch (const std::exception& e) {
    fail(std::string("an exception other than nova::Error (reader ") + std::to_string(reader) +
         "): " + e.what());
  }
  return 0;
}
