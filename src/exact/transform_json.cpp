// The JSON form of a transform (schema in include/nova/exact/io.hpp) and file helpers.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/exact/verify.hpp"

namespace nova {
namespace {

using nlohmann::json;

json matrix_to_json(const RationalMatrix& x) {
  json rows = json::array();
  for (std::size_t i = 0; i < x.rows(); ++i) {
    json row = json::array();
    for (std::size_t j = 0; j < x.cols(); ++j) row.push_back(to_string(x(i, j)));
    rows.push_back(std::move(row));
  }
  return rows;
}

json matrix_to_json_f64(const RationalMatrix& x) {
  json rows = json::array();
  for (std::size_t i = 0; i < x.rows(); ++i) {
    json row = json::array();
    for (std::size_t j = 0; j < x.cols(); ++j) row.push_back(to_double(x(i, j)));
    rows.push_back(std::move(row));
  }
  return rows;
}

json rationals_to_json(const std::vector<Rational>& v) {
  json a = json::array();
  for (const auto& x : v) a.push_back(to_string(x));
  return a;
}

Rational rational_from_json(const json& value, const std::string& where) {
  if (value.is_string()) {
    try {
      return parse_rational(value.get<std::string>());
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
  }
  // Unsigned first: is_number_integer() is true for unsigned numbers too, and get<long long>() read
  // 2^64 - 1 as -1 (so an AT entry of -1 written that way verified).
  if (value.is_number_unsigned()) return Rational(std::to_string(value.get<unsigned long long>()));
  if (value.is_number_integer()) return Rational(std::to_string(value.get<long long>()));
  if (value.is_number_float())
    throw Error(where + " is the JSON number " + value.dump() + "; write exact values as strings such as \"1/2\"");
  throw Error(where + " is " + std::string(value.type_name()) + ", not a rational (a string such as \"3/5\")");
}

RationalMatrix matrix_from_json(const json& j, const char* key, std::size_t rows, std::size_t cols,
                                const std::string& expected) {
  if (!j.contains(key)) throw Error(std::string("transform JSON has no \"") + key + "\" key");
  const json& m = j.at(key);
  auto wrong_shape = [&](const std::string& detail) {
    return Error(std::string("\"") + key + "\" " + detail + "; expected " + expected + " (" + std::to_string(rows) + "x" +
                 std::to_string(cols) + ")");
  };
  if (!m.is_array()) throw wrong_shape("is not an array of rows");
  if (m.size() != rows) throw wrong_shape("has " + std::to_string(m.size()) + " rows");
  RationalMatrix x(rows, cols);
  for (std::size_t i = 0; i < rows; ++i) {
    const json& row = m[i];
    if (!row.is_array()) throw wrong_shape("row " + std::to_string(i) + " is not an array");
    if (row.size() != cols) throw wrong_shape("row " + std::to_string(i) + " has " + std::to_string(row.size()) + " entries");
    for (std::size_t c = 0; c < cols; ++c)
      x(i, c) = rational_from_json(row[c], std::string(key) + "[" + std::to_string(i) + "][" + std::to_string(c) + "]");
  }
  return x;
}

int int_from_json(const json& j, const char* key) {
  if (!j.contains(key)) throw Error(std::string("transform JSON has no \"") + key + "\" key");
  const json& v = j.at(key);
  if (!v.is_number_integer()) throw Error(std::string("\"") + key + "\" must be an integer, got " + v.dump());
  // An unsigned number beyond long long's range (it read as negative) is out of range as well.
  const long long x = v.is_number_unsigned() && v.get<unsigned long long>() > kMaxPoints ? kMaxPoints + 1LL
                                                                                         : v.get<long long>();
  if (x < 1 || x > kMaxPoints) throw Error(std::string("\"") + key + "\" = " + v.dump() + " is out of range");
  return static_cast<int>(x);
}

std::vector<Rational> diagonal_from_json(const json& s, const char* key, std::size_t n) {
  if (!s.contains(key)) return std::vector<Rational>(n, Rational(1));
  const json& a = s.at(key);
  if (!a.is_array() || a.size() != n)
    throw Error(std::string("scaling \"") + key + "\" must be an array of n = " + std::to_string(n) + " rationals");
  std::vector<Rational> d;
  for (std::size_t i = 0; i < n; ++i) {
    d.push_back(rational_from_json(a[i], std::string("scaling ") + key + "[" + std::to_string(i) + "]"));
    if (d.back() == 0) throw Error(std::string("scaling ") + key + "[" + std::to_string(i) + "] is zero");
  }
  return d;
}

}  // namespace

nlohmann::json to_json(const Transform& t) {
  return to_json(t, verify(t));
}

nlohmann::json to_json(const Transform& t, const Verification& verified) {
  json j;
  j["format"] = "nova-transform";
  j["version"] = 1;
  j["tile"] = t.tile().to_string();
  j["m"] = t.m();
  j["r"] = t.r();
  j["n"] = t.n();
  if (!t.points().empty()) j["points"] = to_strings(t.points());
  // A transform read without its scaling has no diagonals: "D1": [] could not be read back ("must be an
  // array of n = 4 rationals"), and all-ones in their place would claim lagrange. Left out, as it came.
  const auto n = static_cast<std::size_t>(t.n());
  if (t.scaling().d1.size() == n && t.scaling().d2.size() == n)
    j["scaling"] = {{"convention", t.scaling().convention},
                    {"D1", rationals_to_json(t.scaling().d1)},
                    {"D2", rationals_to_json(t.scaling().d2)},
                    {"relative_to", "lagrange"}};
  j["AT"] = matrix_to_json(t.AT());
  j["G"] = matrix_to_json(t.G());
  j["BT"] = matrix_to_json(t.BT());
  j["float64"] = {{"AT", matrix_to_json_f64(t.AT())}, {"G", matrix_to_json_f64(t.G())}, {"BT", matrix_to_json_f64(t.BT())}};
  j["verified"] = verified.ok;
  j["id"] = transform_id(t);
  return j;
}

Transform transform_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("transform JSON must be an object with keys m, r, AT, G, BT");
  // A later format may mean its keys otherwise: refused rather than read as this one (it was accepted).
  if (j.contains("version") &&
      !(j.at("version").is_number_integer() && j.at("version").get<long long>() == 1))
    throw Error("transform JSON \"version\" is " + j.at("version").dump() + "; this nova reads version 1");
  if (j.contains("format") && j.at("format") != "nova-transform")
    throw Error("transform JSON \"format\" is " + j.at("format").dump() + ", not \"nova-transform\"");
  TileSize tile{int_from_json(j, "m"), int_from_json(j, "r")};
  validate_tile(tile);
  const auto n = static_cast<std::size_t>(tile.n()), m = static_cast<std::size_t>(tile.m), r = static_cast<std::size_t>(tile.r);
  if (j.contains("n") && (!j.at("n").is_number_integer() || j.at("n").get<long long>() != tile.n()))
    throw Error("\"n\" = " + j.at("n").dump() + " but m + r - 1 = " + std::to_string(tile.n()));
  PointList points;
  if (j.contains("points")) {
    const json& p = j.at("points");
    if (!p.is_array()) throw Error("\"points\" must be an array of strings");
    std::string text;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (!p[i].is_string() && !p[i].is_number_integer())
        throw Error("points[" + std::to_string(i) + "] must be a string such as \"3/5\" or \"inf\"");
      text += (i ? "," : "") + (p[i].is_string() ? p[i].get<std::string>() : p[i].dump());
    }
    if (!p.empty()) points = parse_points(text);
  }
  Scaling scaling;
  scaling.convention = "unknown";
  if (j.contains("scaling")) {
    const json& s = j.at("scaling");
    if (!s.is_object()) throw Error("\"scaling\" must be an object with convention, D1, D2");
    if (s.contains("convention") && s.at("convention").is_string()) scaling.convention = s.at("convention").get<std::string>();
    scaling.d1 = diagonal_from_json(s, "D1", n);
    scaling.d2 = diagonal_from_json(s, "D2", n);
  }
  RationalMatrix AT = matrix_from_json(j, "AT", m, n, "m x n");
  RationalMatrix G = matrix_from_json(j, "G", n, r, "n x r");
  RationalMatrix BT = matrix_from_json(j, "BT", n, n, "n x n");
  return Transform::from_matrices(tile, std::move(points), std::move(scaling), std::move(AT), std::move(G), std::move(BT));
}

std::string read_text_file(const std::string& path) {
  // A directory opens as a stream and reads as empty: the reader would say "unexpected end of input".
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("cannot read '" + path + "': it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error("error while reading '" + path + "'");
  return ss.str();
}

void write_text_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write '" + path + "': " + std::strerror(errno));
  out << contents;
  if (!contents.empty() && contents.back() != '\n') out << '\n';
  out.flush();
  if (!out) throw Error("error while writing '" + path + "'");
}

Transform load_transform(const std::string& path, nlohmann::json* document) {
  const std::string text = read_text_file(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error("'" + path + "' is not valid JSON: " + e.what());
  }
  try {
    Transform t = transform_from_json(j);
    if (document) *document = std::move(j);
    return t;
  } catch (const Error& e) {
    throw Error("'" + path + "': " + e.what());
  }
}

Verification verify_derived_fields(const nlohmann::json& j, const Transform& t) {
  if (!j.is_object()) return {false, "transform JSON is not an object"};
  if (j.contains("tile")) {
    const json& tile = j.at("tile");
    bool same = false;
    try {
      same = tile.is_string() && parse_tile(tile.get<std::string>()) == t.tile();
    } catch (const Error&) {
    }
    if (!same) return {false, "\"tile\" is " + tile.dump() + " but m, r make it " + t.tile().to_string()};
  }
  if (!j.contains("float64")) return {true, {}};
  const json& f = j.at("float64");
  if (!f.is_object()) return {false, "\"float64\" is not an object with AT, G, BT"};
  for (const auto& [key, x] :
       {std::pair<const char*, const RationalMatrix*>{"AT", &t.AT()}, {"G", &t.G()}, {"BT", &t.BT()}}) {
    if (!f.contains(key)) continue;
    const json& rows = f.at(key);
    const std::string shape = std::to_string(x->rows()) + "x" + std::to_string(x->cols());
    if (!rows.is_array() || rows.size() != x->rows())
      return {false, std::string("\"float64\" ") + key + " is not " + shape + " as the exact " + key + " is"};
    for (std::size_t i = 0; i < x->rows(); ++i) {
      if (!rows[i].is_array() || rows[i].size() != x->cols())
        return {false,
                std::string("\"float64\" ") + key + " is not " + shape + " as the exact " + key + " is"};
      for (std::size_t c = 0; c < x->cols(); ++c) {
        const json& got = rows[i][c];
        const double want = to_double((*x)(i, c));
        // JSON has no inf: to_json writes null for an entry beyond double's range.
        const bool ok = std::isfinite(want) ? got.is_number() && got.get<double>() == want : got.is_null();
        if (!ok)
          return {false,
                  fmt::format("\"float64\" {}[{}][{}] is {}, not {}, the nearest double to the exact {}", key,
                              i, c, got.dump(), std::isfinite(want) ? json(want).dump() : "null",
                              to_string((*x)(i, c)))};
      }
    }
  }
  return {true, {}};
}

std::string transform_id(const Transform& t) {
  // FNV-1a over the exact entries: stable across runs and platforms.
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  for (const RationalMatrix* x : {&t.AT(), &t.G(), &t.BT()})
    for (std::size_t i = 0; i < x->rows(); ++i)
      for (std::size_t j = 0; j < x->cols(); ++j) mix(to_string((*x)(i, j)));
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return "f" + std::to_string(t.m()) + "_" + std::to_string(t.r()) + "_" + std::string(buf, 8);
}

}  // namespace nova
