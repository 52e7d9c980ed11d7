// `nova report`, the main job: the report's tables are read back as a user reads them, and what they
// print is checked against independent references: the printed matrices against the Winograd identity
// in exact rationals, every printed kappa against Eigen's SVD of the Vandermonde matrix of the printed
// points, the 2D table against kappa(V (x) V) = kappa(V)^2, each verdict against the two numbers beside
// it. The tables are read from docs/report.md, which must be what the CLI prints today.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli_runner.hpp"
#include "common/eigen_vandermonde.hpp"
#include "nova/discover/report.hpp"
#include "nova/exact/points.hpp"
#include "nova/exact/rational.hpp"
#include "nova/exact/tile.hpp"
#include "nova/exact/transform.hpp"
#include "nova/exact/verify.hpp"

namespace nova::report_tests {
namespace {

// docs/report.md without its first comment line: the report as published. The property tests read it
// (instantly); DocsReportIsWhatTheCliPrintsToday checks that it is what nova prints today,
// so they check the code's output too, without each test process making the report again (4 s here,
// 11 s under the sanitizers).
const std::string& published_report() {
  static const std::string text = [] {
    const std::string docs = testing::read_text_file(std::string(NOVA_SOURCE_DIR) + "/docs/report.md");
    const auto end = docs.find("-->\n\n");
    return docs.rfind("<!--", 0) == 0 && end != std::string::npos ? docs.substr(end + 5) : docs;
  }();
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// The lines of the section whose "## " heading starts with `title`, up to the next heading.
std::vector<std::string> section(const std::string& text, const std::string& title) {
  std::vector<std::string> out;
  bool inside = false;
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("## ", 0) == 0) {
      if (inside) break;
      inside = line.rfind("## " + title, 0) == 0;
      continue;
    }
    if (inside) out.push_back(line);
  }
  return out;
}

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int column(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    ADD_FAILURE() << "no column '" << name << "'";
    return -1;
  }
};

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t start = 1;  // past the leading '|'
  for (std::size_t bar; (bar = line.find('|', start)) != std::string::npos; start = bar + 1)
    cells.push_back(trim(line.substr(start, bar - start)));
  return cells;
}

// The first Markdown table of a section (none of the tables read here has a '|' inside a cell).
Table table_of(const std::vector<std::string>& lines) {
  Table t;
  for (const std::string& line : lines) {
    if (line.rfind("|", 0) != 0) {
      if (!t.header.empty()) break;
      continue;
    }
    if (t.header.empty()) {
      t.header = cells_of(line);
    } else if (line.rfind("|---", 0) != 0) {
      t.rows.push_back(cells_of(line));
      EXPECT_EQ(t.rows.back().size(), t.header.size()) << line;
    }
  }
  return t;
}

// A printed number ("42.47", "1.969e+05", "76.6 (lower)", "2.93x") and half a unit of its last printed
// digit: the most its rounding can have moved it.
struct Printed {
  double value = NAN;
  double half_unit = NAN;
  bool ok() const { return std::isfinite(value); }
};

Printed printed(const std::string& cell) {
  static const std::regex number(R"(^([-+]?[0-9]+)(?:\.([0-9]+))?(?:e([-+]?[0-9]+))?)");
  std::smatch m;
  if (!std::regex_search(cell, m, number)) return {};
  const int decimals = m[2].matched ? static_cast<int>(m[2].length()) : 0;
  const int exponent = m[3].matched ? std::stoi(m[3].str()) : 0;
  return {std::stod(m[0].str()), 0.5 * std::pow(10.0, exponent - decimals)};
}

// "{0, 7/8, -7/8, 6/5, -6/5, inf}" or the seed's "{0, ±5/6, ±7/6}" as nova's points.
PointList points_of(const std::string& cell) {
  const auto open = cell.find('{'), close = cell.find('}');
  if (open == std::string::npos || close == std::string::npos) {
    ADD_FAILURE() << "no point set in '" << cell << "'";
    return {};
  }
  return parse_points(cell.substr(open + 1, close - open - 1));
}

// kappa_2 of the finite points' Vandermonde matrix V_ij = x_i^j, by Eigen's SVD: not the one-sided
// Jacobi the library uses for small matrices.
double independent_kappa(const PointList& points) {
  std::vector<double> x;
  for (const Point& p : points)
    if (!p.infinite) x.push_back(to_double(p.value));
  return testing::eigen_vandermonde_kappa(x);
}

// The printed value is the independent one, rounded as printed (plus a few ulps of SVD noise).
void expect_printed_kappa(const std::string& cell, const PointList& points, const std::string& where) {
  const Printed p = printed(cell);
  ASSERT_TRUE(p.ok()) << where << ": no number in '" << cell << "'";
  const double k = independent_kappa(points);
  EXPECT_LE(std::abs(p.value - k), p.half_unit + 1e-9 * k)
      << where << ": printed " << cell << ", Eigen's SVD of the points " << to_string(points) << " gives "
      << k;
}

// The tile named in a cell ("F(2,3)  n = 4  points: ..."), read by nova's own parser.
TileSize tile_of(const std::string& cell) {
  static const std::regex f(R"(F\(\d+,\d+\))");
  std::smatch m;
  if (!std::regex_search(cell, m, f)) {
    ADD_FAILURE() << "no tile in '" << cell << "'";
    return {};
  }
  return parse_tile(m.str(0));
}

TEST(SeedReport, PrintedTransformsSatisfyTheWinogradIdentityInExactRationals) {
  // The code block of "Verified transforms": for each tile the printed A^T, G, B^T, read back as
  // rationals, must give sum_a A^T[i][a] G[a][k] B^T[a][j] = [j == i + k] (1D correlation).
  const std::vector<std::string> lines = section(published_report(), "Verified transforms");
  std::vector<std::string> tiles;
  for (std::size_t l = 0; l < lines.size(); ++l) {
    if (lines[l].rfind("F(", 0) != 0) continue;
    const TileSize tile = tile_of(lines[l]);
    tiles.push_back(tile.to_string());
    const int m = tile.m, r = tile.r, n = tile.n();
    // The matrix whose name line ("AT (4x6):") comes next, its rows after it.
    auto read = [&](const std::string& name, int rows) {
      std::vector<std::vector<Rational>> out;
      while (l < lines.size() && lines[l].rfind(name + " (", 0) != 0) ++l;
      for (int i = 0; i < rows && ++l < lines.size(); ++i) {
        std::istringstream in(lines[l]);
        std::vector<Rational> row;
        for (std::string token; in >> token;)
          if (token != "[" && token != "]") row.push_back(parse_rational(token));
        out.push_back(row);
      }
      return out;
    };
    const auto at = read("AT", m), g = read("G", n), bt = read("BT", n);
    ASSERT_EQ(at.size(), static_cast<std::size_t>(m));
    for (int i = 0; i < m; ++i)
      for (int k = 0; k < r; ++k)
        for (int j = 0; j < n; ++j) {
          Rational sum = 0;
          for (int a = 0; a < n; ++a) sum += at[i].at(a) * g[a].at(k) * bt[a].at(j);
          EXPECT_EQ(sum, Rational(j == i + k ? 1 : 0))
              << tile.to_string() << " i=" << i << " k=" << k << " j=" << j;
        }
    while (l + 1 < lines.size() && lines[l].rfind("exact verification", 0) != 0) ++l;
    EXPECT_EQ(lines[l], "exact verification: passed") << tile.to_string();
  }
  EXPECT_EQ(tiles, (std::vector<std::string>{"F(2,3)", "F(4,3)", "F(6,3)"}));
}

TEST(SeedReport, EveryPrintedKappaIsEigensSvdOfThePrintedPoints) {
  const std::string& text = published_report();
  int checked = 0;
  auto check = [&](const std::string& title, const std::string& points_col, const std::string& kappa_col) {
    const Table t = table_of(section(text, title));
    const int pc = t.column(points_col), kc = t.column(kappa_col);
    ASSERT_GE(pc, 0);
    ASSERT_GE(kc, 0);
    ASSERT_FALSE(t.rows.empty()) << title;
    for (const auto& row : t.rows) {
      expect_printed_kappa(row[kc], points_of(row[pc]), title + ", " + row[0]);
      ++checked;
    }
  };
  check("Table 1:", "points (finite)", "nova");
  check("Tables 2 and 16", "seed's points", "nova kappa of the seed's points");
  check("Tables 2 and 16", "nova's points", "nova kappa");
  check("Tables 4 and 19", "points", "nova kappa");
  check("Table 33", "nova's points", "nova disc");
  check("The seed's printed ES fitness", "points", "kappa_2(V)");
  EXPECT_EQ(checked, 4 + 4 + 4 + 5 + 2 + 3);
}

TEST(SeedReport, DiscoveredPointsAreExactTransformsAtLeastAsWellConditionedAsTheSeeds) {
  // Each point set nova discovered makes a transform that passes exact verification, and its kappa is
  // no higher than that of the seed's own discovered points (both recomputed here by Eigen's SVD).
  const Table t = table_of(section(published_report(), "Tables 2 and 16"));
  const int seed_col = t.column("seed's points"), nova_col = t.column("nova's points");
  ASSERT_EQ(t.rows.size(), 4u);
  for (const auto& row : t.rows) {
    const TileSize tile = tile_of(row[0]);
    const PointList mine = points_of(row[nova_col]);
    ASSERT_EQ(static_cast<int>(mine.size()), tile.n()) << row[0];
    const Verification v = verify(Transform::construct(tile, mine));
    EXPECT_TRUE(v.ok) << row[0] << ": " << v.reason;
    EXPECT_LE(independent_kappa(mine), independent_kappa(points_of(row[seed_col])) * (1 + 1e-12)) << row[0];
  }
}

TEST(SeedReport, TwoDimensionalKappaIsTheSquareOfTheOneDimensional) {
  // Closed form: the singular values of V (x) V are the products of V's, so kappa(V (x) V) = kappa(V)^2.
  const std::string& text = published_report();
  const Table two_d = table_of(section(text, "Table 17"));
  const Table one_d = table_of(section(text, "Table 1:"));
  ASSERT_EQ(two_d.rows.size(), one_d.rows.size());
  const int ratio = two_d.column("kappa(V(x)V)/kappa(V)^2"), std2 = two_d.column("nova std");
  const int std1 = one_d.column("nova"), pts = one_d.column("points (finite)");
  for (std::size_t i = 0; i < two_d.rows.size(); ++i) {
    const auto& row = two_d.rows[i];
    ASSERT_EQ(row[0], one_d.rows[i][0]);
    const Printed q = printed(row[ratio]);
    EXPECT_NEAR(q.value, 1.0, q.half_unit + 1e-12) << row[0];
    const double k = independent_kappa(points_of(one_d.rows[i][pts]));
    const Printed p = printed(row[std2]);
    EXPECT_LE(std::abs(p.value - k * k), p.half_unit + 1e-9 * k * k) << row[0] << ": printed " << row[std2];
    EXPECT_LE(std::abs(printed(one_d.rows[i][std1]).value - k), printed(one_d.rows[i][std1]).half_unit);
  }
}

TEST(SeedReport, FiveByFiveKernelsHaveTheConditioningOfTheirPointCounts) {
  // kappa_2(V) depends on the points alone: F(4,5) and F(6,3) have 8 points, F(6,5) and F(8,3) 10, so
  // Table 33's standard column repeats Table 1's and its discovered one Table 2's.
  const std::string& text = published_report();
  const Table t33 = table_of(section(text, "Table 33"));
  const Table t1 = table_of(section(text, "Table 1:"));
  const Table t2 = table_of(section(text, "Tables 2 and 16"));
  auto row_of = [](const Table& t, const std::string& tile) {
    for (const auto& row : t.rows)
      if (row[0] == tile) return row;
    ADD_FAILURE() << "no row " << tile;
    return std::vector<std::string>(t.header.size());
  };
  for (const auto& [five, three] : {std::pair{"F(4,5)", "F(6,3)"}, std::pair{"F(6,5)", "F(8,3)"}}) {
    EXPECT_EQ(row_of(t33, five)[t33.column("nova std")], row_of(t1, three)[t1.column("nova")]) << five;
    EXPECT_EQ(printed(row_of(t33, five)[t33.column("nova disc")]).value,
              printed(row_of(t2, three)[t2.column("nova kappa")]).value)
        << five;
  }
}

TEST(SeedReport, EachVerdictFollowsFromTheTwoNumbersBesideIt) {
  // A verdict cell judges the nearest number to its left (nova's) against the nearest column to its
  // left headed "seed...". "agrees": the two printed values are within their rounding of each other.
  // "differs: nova lower/higher (R x the seed's)": the order holds and R is nova / seed. A nova value
  // that lies inside the seed's rounding interval even after its own rounding must agree.
  const std::string& text = published_report();
  static const std::regex differs(R"(\*\*differs\*\*: nova (lower|higher) \(([0-9.e+-]+)x the seed's\))");
  int agrees = 0, differ = 0;
  for (const std::string title : {"Table 1:", "Tables 2 and 16", "Tables 3 and 26", "Tables 4 and 19",
                                  "Table 5:", "Table 17", "Table 25", "Table 33"}) {
    const Table t = table_of(section(text, title));
    ASSERT_FALSE(t.rows.empty()) << title;
    for (const auto& row : t.rows)
      for (std::size_t v = 0; v < row.size(); ++v) {
        if (t.header[v] != "verdict") continue;
        const std::string where = std::string(title) + " " + row[0] + " column " + std::to_string(v);
        int nova_col = static_cast<int>(v) - 1;
        while (nova_col >= 0 && (t.header[nova_col] == "verdict" || !printed(row[nova_col]).ok())) --nova_col;
        int seed_col = static_cast<int>(v) - 1;
        while (seed_col >= 0 && t.header[seed_col].rfind("seed", 0) != 0) --seed_col;
        ASSERT_GE(nova_col, 0) << where;
        ASSERT_GE(seed_col, 0) << where;
        const Printed nova = printed(row[nova_col]), seed = printed(row[seed_col]);
        if (row[v].empty()) {  // no seed figure to judge against
          EXPECT_EQ(row[seed_col], "-") << where;
          continue;
        }
        ASSERT_TRUE(seed.ok() && nova.ok()) << where;
        const double gap = std::abs(nova.value - seed.value);
        std::smatch m;
        if (row[v] == "agrees") {
          ++agrees;
          EXPECT_LE(gap, seed.half_unit + nova.half_unit) << where;
        } else if (std::regex_match(row[v], m, differs)) {
          ++differ;
          EXPECT_GT(gap, seed.half_unit - nova.half_unit) << where << ": inside the seed's rounding";
          if (m[1] == "lower") {
            EXPECT_LT(nova.value, seed.value + nova.half_unit) << where;
          } else {
            EXPECT_GT(nova.value, seed.value - nova.half_unit) << where;
          }
          const Printed ratio = printed(m[2].str());
          const double lo = (nova.value - nova.half_unit) / (seed.value + seed.half_unit);
          const double hi = (nova.value + nova.half_unit) / (seed.value - seed.half_unit);
          EXPECT_GE(ratio.value + ratio.half_unit, lo * (1 - 1e-9)) << where;
          EXPECT_LE(ratio.value - ratio.half_unit, hi * (1 + 1e-9)) << where;
        } else {
          ADD_FAILURE() << where << ": unknown verdict '" << row[v] << "'";
        }
      }
  }
  // Guards against a table the parser silently skipped.
  EXPECT_GE(agrees, 40);
  EXPECT_GE(differ, 25);  // 47 and 30 in session 46
}

// Machine name and times differ from run to run; everything else must not.
std::string without_machine_and_times(const std::string& text) {
  std::string out = std::regex_replace(text, std::regex(R"(on .*, \d+ hardware threads)"), "on MACHINE");
  out = std::regex_replace(out, std::regex(R"([0-9.]+ s \([0-9.]+ s\))"), "T");
  out = std::regex_replace(out, std::regex(R"(Report generated in [0-9.]+ s\.)"), "Report generated in T.");
  return out;
}

TEST(SeedReport, DocsReportIsWhatTheCliPrintsToday) {
  // docs/report.md is `nova report --no-errors` output under an HTML comment that says how it was made.
  // (That discovery gives the same points on any number of threads is Discover.SameResultForAnyThreadCount's
  // to check.)
  const std::string file = testing::temp_dir() + "/report.md";
  const auto r = testing::run_cli("report --no-errors -o " + file);
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string cli = testing::read_text_file(file);
  ASSERT_EQ(testing::read_text_file(std::string(NOVA_SOURCE_DIR) + "/docs/report.md").rfind("<!--", 0), 0u)
      << "docs/report.md lost its first comment line";
  EXPECT_EQ(without_machine_and_times(published_report()), without_machine_and_times(cli))
      << "docs/report.md is stale: regenerate it with `build/nova report --no-errors -o docs/report.md` and "
         "put its first comment line back";
}

TEST(SeedReport, BadThreadCountsAreRefused) {
  const auto r = testing::run_cli("report --threads -1 --no-errors");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--threads must be 0 (all cores) or more, got -1"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace nova::report_tests
