// Build-time generator of the engine's tile transforms (run by src/conv/CMakeLists.txt).
//
// For every default transform (the catalogue's fp32 entries, default_points_table.hpp: points and exact
// scaling), and for the same points in the wincnn scaling where that differs (what a user gets from
// Transform::construct(tile, default_points(tile))), it constructs the exact matrices (nova_exact) and writes straight-line
// code for the 1D products y = B^T x (input) and y = A^T x (output), the way NNPACK and ncnn hand-write
// theirs:
//   - zero entries are skipped; +-1 become additions and subtractions; other constants (powers of two
//     included, which are exact in binary floating point) become one multiply-add each;
//   - rows of a symmetric point pair (f, -f) share their even/odd halves: with row_k = sigma .* row_i,
//     sigma in {+1,-1}, P = sum over sigma=+1 and Q = sum over sigma=-1 give y_i = P+Q, y_k = P-Q;
//   - when no rows pair (A^T), columns pair instead: s = x_p + x_q and d = x_p - x_q are formed once.
// The code is a template over a 16-lane vector type V (see kernels/*/vec_*.hpp), so each ISA file
// instantiates it with its own registers. The exact entries are written too, as "p/q" strings, so the
// run-time can check that a user's transform is exactly the one the code was generated for.
//
// Usage: gen_tile_transforms OUTPUT_HEADER
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../default_points_table.hpp"
#include "nova/exact/points.hpp"
#include "nova/exact/transform.hpp"
#include "nova/exact/verify.hpp"

namespace {

using nova::Rational;
using nova::RationalMatrix;

struct Term {
  Rational coef;
  std::string var;
};

std::string float_literal(const Rational& c) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", nova::to_double(c));
  return std::string("static_cast<float>(") + buf + ")";
}

// Emits `target` = sum of terms; `decl` prefixes the target (e.g. "const V ").
void emit_sum(std::ostringstream& os, const std::string& target, std::vector<Term> terms) {
  if (terms.empty()) {
    os << "    " << target << " = V::zero();\n";
    return;
  }
  // Start from a +1 term when there is one (saves a negation or a multiply).
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].coef == 1) {
      std::swap(terms[0], terms[i]);
      break;
    }
  }
  std::string acc;
  const Term& first = terms[0];
  if (first.coef == 1) {
    acc = first.var;
  } else if (first.coef == -1) {
    acc = "V::neg(" + first.var + ")";
  } else {
    acc = "V::mulc(" + first.var + ", " + float_literal(first.coef) + ")";
  }
  for (std::size_t i = 1; i < terms.size(); ++i) {
    const Term& t = terms[i];
    if (t.coef == 1) {
      acc = "V::add(" + acc + ", " + t.var + ")";
    } else if (t.coef == -1) {
      acc = "V::sub(" + acc + ", " + t.var + ")";
    } else {
      acc = "V::fmac(" + t.var + ", " + float_literal(t.coef) + ", " + acc + ")";
    }
  }
  os << "    " << target << " = " << acc << ";\n";
}

bool row_zero(const RationalMatrix& M, std::size_t i) {
  for (std::size_t j = 0; j < M.cols(); ++j)
    if (M(i, j) != 0) return false;
  return true;
}

// sigma with M[k][j] = sigma_j M[i][j] (sigma_j = 0 where both are zero); false if none exists.
bool rows_pair(const RationalMatrix& M, std::size_t i, std::size_t k, std::vector<int>& sigma) {
  sigma.assign(M.cols(), 0);
  for (std::size_t j = 0; j < M.cols(); ++j) {
    if (M(i, j) == 0 && M(k, j) == 0) continue;
    if (M(k, j) == M(i, j)) {
      sigma[j] = 1;
    } else if (M(k, j) == -M(i, j)) {
      sigma[j] = -1;
    } else {
      return false;
    }
  }
  return true;
}

// Body of `static inline void NAME(const V* x, int xs, V* y, int ys)` computing y = M x, always inlined
// (GCC 12 called the F(7,3) and F(8,3) products out of line, spilling every live vector around each
// call; docs/engine.md, "Generated code").
std::string emit_product(const RationalMatrix& M, const std::string& name, int* op_count) {
  std::ostringstream os;
  const std::size_t rows = M.rows(), cols = M.cols();
  os << "  [[gnu::always_inline]] static inline void " << name << "(const V* x, int xs, V* y, int ys) {\n";
  for (std::size_t j = 0; j < cols; ++j) os << "    const V x" << j << " = x[" << j << " * xs];\n";
  int ops = 0;
  auto count = [&](const std::vector<Term>& t) { ops += t.empty() ? 0 : static_cast<int>(t.size()) - 1; };

  // Row pairing.
  std::vector<int> partner(rows, -1);
  std::vector<std::vector<int>> sig(rows);
  bool any_row_pair = false;
  for (std::size_t i = 0; i < rows; ++i) {
    if (partner[i] != -1 || row_zero(M, i)) continue;
    for (std::size_t k = i + 1; k < rows; ++k) {
      if (partner[k] != -1) continue;
      std::vector<int> s;
      if (rows_pair(M, i, k, s)) {
        bool has_minus = false;
        for (int v : s) has_minus |= v == -1;
        if (!has_minus) continue;  // identical rows: rare, not worth a special case
        partner[i] = static_cast<int>(k);
        partner[k] = static_cast<int>(i);
        sig[i] = s;
        any_row_pair = true;
        break;
      }
    }
  }
  if (any_row_pair) {
    for (std::size_t i = 0; i < rows; ++i) {
      if (partner[i] >= 0 && static_cast<std::size_t>(partner[i]) < i) continue;  // done with its pair
      if (partner[i] < 0) {
        std::vector<Term> t;
        for (std::size_t j = 0; j < cols; ++j)
          if (M(i, j) != 0) t.push_back({M(i, j), "x" + std::to_string(j)});
        count(t);
        emit_sum(os, "y[" + std::to_string(i) + " * ys]", t);
        continue;
      }
      std::vector<Term> p, q;
      for (std::size_t j = 0; j < cols; ++j) {
        if (M(i, j) == 0) continue;
        (sig[i][j] == 1 ? p : q).push_back({M(i, j), "x" + std::to_string(j)});
      }
      count(p);
      count(q);
      const std::string P = "p" + std::to_string(i), Q = "q" + std::to_string(i);
      emit_sum(os, "const V " + P, p);
      emit_sum(os, "const V " + Q, q);
      os << "    y[" << i << " * ys] = V::add(" << P << ", " << Q << ");\n";
      os << "    y[" << partner[i] << " * ys] = V::sub(" << P << ", " << Q << ");\n";
      ops += 2;
    }
  } else {
    // Column pairing: column q = sigma .* column p.
    std::vector<int> cpartner(cols, -1);
    std::vector<std::vector<int>> csig(cols);
    const RationalMatrix T = M.transpose();
    for (std::size_t p = 0; p < cols; ++p) {
      if (cpartner[p] != -1 || row_zero(T, p)) continue;
      for (std::size_t q = p + 1; q < cols; ++q) {
        if (cpartner[q] != -1) continue;
        std::vector<int> s;
        if (rows_pair(T, p, q, s)) {
          bool zero_in_one = false;
          for (std::size_t i = 0; i < rows; ++i) zero_in_one |= (T(p, i) == 0) != (T(q, i) == 0);
          if (zero_in_one) continue;
          cpartner[p] = static_cast<int>(q);
          cpartner[q] = static_cast<int>(p);
          csig[p] = s;
          break;
        }
      }
    }
    for (std::size_t p = 0; p < cols; ++p) {
      if (cpartner[p] < 0 || static_cast<std::size_t>(cpartner[p]) < p) continue;
      bool need_s = false, need_d = false;
      for (std::size_t i = 0; i < rows; ++i) {
        need_s |= csig[p][i] == 1;
        need_d |= csig[p][i] == -1;
      }
      const int q = cpartner[p];
      if (need_s) { os << "    const V s" << p << " = V::add(x" << p << ", x" << q << ");\n"; ++ops; }
      if (need_d) { os << "    const V d" << p << " = V::sub(x" << p << ", x" << q << ");\n"; ++ops; }
    }
    for (std::size_t i = 0; i < rows; ++i) {
      std::vector<Term> t;
      for (std::size_t j = 0; j < cols; ++j) {
        if (M(i, j) == 0) continue;
        if (cpartner[j] < 0) {
          t.push_back({M(i, j), "x" + std::to_string(j)});
        } else if (static_cast<std::size_t>(cpartner[j]) > j) {
          t.push_back({M(i, j), (csig[j][i] == 1 ? "s" : "d") + std::to_string(j)});
        }
      }
      count(t);
      emit_sum(os, "y[" + std::to_string(i) + " * ys]", t);
    }
  }
  os << "  }\n";
  *op_count = ops;
  return os.str();
}

std::string string_array(const RationalMatrix& M) {
  std::ostringstream os;
  os << "{";
  for (std::size_t i = 0; i < M.rows(); ++i)
    for (std::size_t j = 0; j < M.cols(); ++j) os << "\"" << nova::to_string(M(i, j)) << "\", ";
  os << "}";
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gen_tile_transforms OUTPUT_HEADER\n";
    return 2;
  }
  try {
    std::ostringstream out;
    out << "// Generated by src/conv/codegen/gen_tile_transforms.cpp from the exact default transforms.\n"
           "// Do not edit.\n#pragma once\n\nnamespace nova::conv::generated {\n\n"
           "struct GeneratedInfo {\n  int m, r, n;\n  const char* points;\n  const char* const* at;\n"
           "  const char* const* g;\n  const char* const* bt;\n  int input_ops, output_ops;\n};\n\n";
    std::ostringstream infos;
    int index = 0;
    // The wincnn variants first, the defaults last: a tile's last entry is its default (the cost model
    // reads the op counts of the last entry of a tile).
    struct Generated {
      nova::conv::DefaultPointsEntry e;
      nova::Transform t;
      const char* what;
    };
    std::vector<Generated> transforms;
    // The int8-spatial path's transforms (integer points, wincnn scaling: B^T is an integer matrix, so
    // the same code computes its exact integer V'); F(2,3)'s is the wincnn variant below.
    static constexpr nova::conv::DefaultPointsEntry kIntegerPoints[] = {{4, 3, "0, 1, -1, 2, -2, inf", ""},
                                                                        {2, 5, "0, 1, -1, 2, -2, inf", ""}};
    for (const auto& e : kIntegerPoints)
      transforms.push_back({e, nova::Transform::construct({e.m, e.r}, nova::parse_points(e.points)),
                            "integer points (int8-spatial)"});
    for (const auto& e : nova::conv::kDefaultPoints) {
      const nova::TileSize tile{e.m, e.r};
      const auto points = nova::parse_points(e.points);
      const nova::Transform d = nova::Transform::construct(tile, points, nova::ScalingSpec::parse(e.scaling));
      const nova::Transform w = nova::Transform::construct(tile, points);
      if (!(d.AT() == w.AT() && d.G() == w.G() && d.BT() == w.BT())) transforms.push_back({e, w, "wincnn scaling"});
    }
    for (const auto& e : nova::conv::kDefaultPoints) {
      const nova::TileSize tile{e.m, e.r};
      transforms.push_back(
          {e, nova::Transform::construct(tile, nova::parse_points(e.points), nova::ScalingSpec::parse(e.scaling)),
           "the default: catalogue fp32 scaling"});
      // fp16 plans' (plan.cpp): the default with B^T's rows balanced by powers of two.
      const nova::Transform d = transforms.back().t;  // a copy: the push below may move the vector
      const nova::Transform b = nova::balance_input_rows(d);
      if (!(b.AT() == d.AT() && b.BT() == d.BT())) transforms.push_back({e, b, "fp16: B^T rows balanced"});
    }
    for (const auto& [e, t, what] : transforms) {
      const nova::TileSize tile{e.m, e.r};
      const nova::Verification v = nova::verify(t);
      if (!v) {
        std::cerr << "default transform " << tile.to_string() << " fails verification: " << v.reason << "\n";
        return 1;
      }
      int in_ops = 0, out_ops = 0;
      const std::string bt = emit_product(t.BT(), "bt", &in_ops);
      const std::string at = emit_product(t.AT(), "at", &out_ops);
      out << "// " << tile.to_string() << " points {" << e.points << "}, " << what << ": B^T x in " << in_ops
          << " add/fma, A^T x in " << out_ops << "\n";
      out << "inline constexpr const char* kAT" << index << "[] = " << string_array(t.AT()) << ";\n";
      out << "inline constexpr const char* kG" << index << "[] = " << string_array(t.G()) << ";\n";
      out << "inline constexpr const char* kBT" << index << "[] = " << string_array(t.BT()) << ";\n";
      out << "template <class V>\nstruct Tile" << index << " {\n  static constexpr int m = " << e.m
          << ", r = " << e.r << ", n = " << tile.n() << ";\n"
          << bt << at << "};\n\n";
      infos << "    {" << e.m << ", " << e.r << ", " << tile.n() << ", \"" << e.points << "\", kAT" << index
            << ", kG" << index << ", kBT" << index << ", " << in_ops << ", " << out_ops << "},\n";
      ++index;
    }
    out << "inline constexpr int kGeneratedCount = " << index << ";\n";
    out << "inline constexpr GeneratedInfo kGeneratedInfo[] = {\n" << infos.str() << "};\n\n";
    out << "// X(index) for every generated transform.\n#define NOVA_FOR_EACH_GENERATED_TILE(X)";
    for (int i = 0; i < index; ++i) out << " X(" << i << ")";
    out << "\n\n}  // namespace nova::conv::generated\n";
    std::ofstream f(argv[1]);
    f << out.str();
    if (!f) {
      std::cerr << "cannot write " << argv[1] << "\n";
      return 1;
    }
  } catch (const std::exception& ex) {
    std::cerr << "gen_tile_transforms: " << ex.what() << "\n";
    return 1;
  }
  return 0;
}
