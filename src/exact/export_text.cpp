// Readable text: the matrices with aligned exact entries.
#include <algorithm>

#include <fmt/format.h>

#include "nova/exact/io.hpp"
#include "nova/exact/verify.hpp"

namespace nova {
namespace {

void emit_matrix(std::string& out, const RationalMatrix& x, const std::string& title) {
  out += fmt::format("{} ({}x{}):\n", title, x.rows(), x.cols());
  std::vector<std::size_t> width(x.cols(), 1);
  for (std::size_t i = 0; i < x.rows(); ++i)
    for (std::size_t j = 0; j < x.cols(); ++j) width[j] = std::max(width[j], to_string(x(i, j)).size());
  for (std::size_t i = 0; i < x.rows(); ++i) {
    out += "  [";
    for (std::size_t j = 0; j < x.cols(); ++j) out += fmt::format(" {:>{}}", to_string(x(i, j)), width[j]);
    out += " ]\n";
  }
}

}  // namespace

std::string to_text(const Transform& t) {
  return to_text(t, verify(t));
}

std::string to_text(const Transform& t, const Verification& v) {
  std::string out;
  out += fmt::format("{}  n = {}  points: {}\n", t.tile().to_string(), t.n(),
                     t.points().empty() ? std::string("(not given)") : to_string(t.points()));
  out += "scaling: " + t.scaling().convention;
  if (t.scaling().convention == "custom") {
    out += "  D1 = [";
    for (std::size_t i = 0; i < t.scaling().d1.size(); ++i) out += (i ? ", " : "") + to_string(t.scaling().d1[i]);
    out += "]  D2 = [";
    for (std::size_t i = 0; i < t.scaling().d2.size(); ++i) out += (i ? ", " : "") + to_string(t.scaling().d2[i]);
    out += "]";
  }
  out += "\n";
  out += v ? "verified: exact (1D and 2D identities hold in rational arithmetic)\n" : "verification FAILED: " + v.reason + "\n";
  emit_matrix(out, t.AT(), "AT");
  emit_matrix(out, t.G(), "G");
  emit_matrix(out, t.BT(), "BT");
  return out;
}

}  // namespace nova
