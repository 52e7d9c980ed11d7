#include "nova/exact/points.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "nova/error.hpp"

namespace nova {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool is_infinity_token(const std::string& token) {
  std::string t = lower(token);
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.erase(0, 1);
  return t == "inf" || t == "infinity" || t == "\u221e" || t == "oo";
}

// Strips a pair prefix ("±", "+-", "+/-") and reports whether one was there.
bool strip_pair_prefix(std::string& token) {
  for (const char* prefix : {"\u00b1", "+/-", "+-"}) {
    const std::string p(prefix);
    if (token.rfind(p, 0) == 0) {
      token = trim(token.substr(p.size()));
      return true;
    }
  }
  return false;
}

}  // namespace

PointList parse_points(std::string_view text) {
  PointList points;
  std::vector<std::string> spellings;  // as written, for duplicate messages
  std::string all(text);
  if (trim(all).empty()) throw Error("empty point list");
  std::size_t start = 0;
  while (start <= all.size()) {
    std::size_t end = all.find_first_of(",;", start);
    if (end == std::string::npos) end = all.size();
    std::string token = trim(std::string_view(all).substr(start, end - start));
    start = end + 1;
    if (token.empty()) throw Error("empty entry in point list '" + all + "'");
    const std::string written = token;
    const bool pair = strip_pair_prefix(token);
    if (is_infinity_token(token)) {
      points.push_back(Point::infinity());
      spellings.push_back(written);
      if (pair) {  // "±inf" is two infinities
        points.push_back(Point::infinity());
        spellings.push_back(written);
      }
      continue;
    }
    Rational value;
    try {
      value = parse_rational(token);
    } catch (const Error& e) {
      throw Error("bad point '" + written + "': " + e.what());
    }
    points.push_back(Point::finite(value));
    spellings.push_back(written);
    if (pair) {
      points.push_back(Point::finite(-value));
      spellings.push_back(written);
    }
  }
  // Validate with the spellings at hand, so the message can say "0.5 and 1/2".
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string key = to_string(points[i]);
    auto [it, inserted] = seen.emplace(key, i);
    if (!inserted) {
      if (points[i].infinite) throw Error("two infinities in point list '" + all + "': at most one point may be inf");
      const std::string& a = spellings[it->second];
      const std::string& b = spellings[i];
      throw Error("duplicate point " + key + (a == b ? " (written '" + a + "')" : " (written '" + a + "' and '" + b + "')") +
                  ": interpolation points must be distinct");
    }
  }
  return points;
}

void validate_points(const PointList& points) {
  std::map<std::string, int> seen;
  for (const Point& p : points) {
    const std::string key = to_string(p);
    if (++seen[key] > 1) {
      if (p.infinite) throw Error("two infinities in point list: at most one point may be inf");
      throw Error("duplicate point " + key + ": interpolation points must be distinct");
    }
  }
}

std::string to_string(const Point& p) { return p.infinite ? "inf" : to_string(p.value); }

std::string to_string(const PointList& points) {
  std::string s;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i) s += ", ";
    s += to_string(points[i]);
  }
  return s;
}

std::vector<std::string> to_strings(const PointList& points) {
  std::vector<std::string> out;
  out.reserve(points.size());
  for (const Point& p : points) out.push_back(to_string(p));
  return out;
}

bool has_infinity(const PointList& points) {
  return std::any_of(points.begin(), points.end(), [](const Point& p) { return p.infinite; });
}

std::vector<Rational> finite_values(const PointList& points) {
  std::vector<Rational> values;
  for (const Point& p : points)
    if (!p.infinite) values.push_back(p.value);
  return values;
}

PointList standard_points(int finite_count, bool with_infinity) {
  PointList points;
  for (int i = 0; static_cast<int>(points.size()) < finite_count; ++i) {
    if (i == 0) {
      points.push_back(Point::finite(0));
      continue;
    }
    points.push_back(Point::finite(i));
    if (static_cast<int>(points.size()) < finite_count) points.push_back(Point::finite(-i));
  }
  if (with_infinity) points.push_back(Point::infinity());
  return points;
}

}  // namespace nova
