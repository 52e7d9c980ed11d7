// Error-driven discovery under any precision model (search_entry with a model; `nova discover
// --objective measured-error:<preset> | proxy:<preset>`), with a small search budget.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/cli_runner.hpp"
#include "nova/analysis/vandermonde.hpp"
#include "nova/catalogue/error_objectives.hpp"
#include "nova/catalogue/generate.hpp"
#include "nova/catalogue/reference_points.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/exact/verify.hpp"

namespace nova {
namespace {

GenerateOptions small_options() {
  GenerateOptions g;
  g.es.population = 8;
  g.es.generations = 6;
  g.es.restarts = 1;
  g.objective.training.channels = 4;
  g.objective.training.min_outputs = 4096;
  g.top_k = 2;
  g.polish = 1;
  return g;
}

TEST(ErrorDiscovery, MeasuredWinnerIsExactAndNoWorseThanEveryPublishedSet) {
  const TileSize tile{4, 3};
  const PrecisionModel model = precision_preset("fp16-storage");
  const GenerateOptions g = small_options();
  const CatalogueEntry e = search_entry(tile, model, g, SelectBy::kMeasured);
  // Exact: the rational identity holds, and the recorded scaling reproduces the matrices.
  ASSERT_TRUE(verify(e.transform));
  EXPECT_EQ(
      Transform::construct(tile, e.transform.points(), exact_scaling(e.transform.points(), e.scaling_choice))
          .BT(),
      e.transform.BT());
  // The training error is the harness's error on the fixed training set (float64 direct reference).
  const auto& tr = g.objective.training;
  const ErrorEvaluator train(make_tile_dataset(tile, tr.kind, tr.tiles_for(tile), tr.channels, tr.seed),
                             model);
  EXPECT_EQ(e.train_error, train.score(e.transform.to_f64()));
  // Every published set is a finalist, as published: the winner is at least as good on the training set
  // (up to the float64 rounding of the matrices, which the selection saw built in floating point).
  for (const auto& r : reference_sets(tile)) {
    if (!r.points) continue;
    EXPECT_LE(e.train_error, 1.001 * train.score(reference_transform(r))) << r.label;
  }
  // Held-out errors are on the held-out sets, not the training set.
  ASSERT_EQ(e.held_out.size(), g.held_out.size());
  for (std::size_t i = 0; i < e.held_out.size(); ++i) {
    const ErrorEvaluator ev(make_held_out(tile, g.held_out[i]), model);
    EXPECT_EQ(e.held_out[i].rel_l2, ev.evaluate(e.transform.to_f64()).rel_l2);
  }
  EXPECT_NE(g.held_out.front().seed, tr.seed);
  // fp16-storage F(4,3): well below Lavin's {0, +-1, +-2} (3.1e-3 on these sets).
  EXPECT_LT(e.held_out.front().rel_l2, 2.5e-3);
  // Deterministic.
  const CatalogueEntry again = search_entry(tile, model, g, SelectBy::kMeasured);
  EXPECT_EQ(again.transform.points(), e.transform.points());
  EXPECT_EQ(again.scaling_choice, e.scaling_choice);
  EXPECT_EQ(again.train_error, e.train_error);
}

TEST(ErrorDiscovery, ProxySelectionPicksTheProxyBest) {
  const TileSize tile{2, 3};
  const PrecisionModel model = precision_preset("int8-tensor");
  const GenerateOptions g = small_options();
  const CatalogueEntry e = search_entry(tile, model, g, SelectBy::kProxy);
  ASSERT_TRUE(verify(e.transform));
  EXPECT_EQ(e.found["objective"].get<std::string>().rfind("stage-proxy:int8-tensor", 0), 0u);
  const StageProxyObjective proxy(model, g.objective);
  const auto mine = proxy.scaled(tile, finite_doubles(e.transform.points()));
  for (const auto& r : reference_sets(tile)) {
    if (!r.points) continue;
    EXPECT_LE(mine.proxy, proxy.evaluate(tile, finite_doubles(*r.points)) * (1 + 1e-12)) << r.label;
  }
  EXPECT_TRUE(std::isfinite(e.train_error));
}

TEST(ErrorDiscovery, BadEsSettingsAreRefusedNotSkipped) {
  // search_entry's discover() calls catch nova::Error (an infeasible lattice skips that discovery), so an
  // ES population of 1 or a negative sigma0 had skipped every discovery and returned a published set.
  for (auto set :
       {+[](GenerateOptions& g) { g.es.population = 1; }, +[](GenerateOptions& g) { g.es.sigma0 = -5; },
        +[](GenerateOptions& g) { g.es.generations = 0; }}) {
    GenerateOptions g = small_options();
    set(g);
    EXPECT_THROW(search_entry({2, 3}, precision_preset("fp16-storage"), g, SelectBy::kProxy), Error);
  }
}

TEST(ErrorDiscovery, UserModelName) {
  // A model that is not a preset: its name labels the entry.
  PrecisionModel model = precision_preset("bf16-storage");
  model.name = "my-bf16";
  const CatalogueEntry e = search_entry({2, 3}, model, small_options(), SelectBy::kProxy);
  EXPECT_EQ(e.preset, "my-bf16");
  EXPECT_TRUE(verify(e.transform));
}

TEST(ErrorDiscoveryCli, MeasuredErrorJson) {
  const std::string dir = testing::temp_dir();
  const auto r = testing::run_cli(
      "discover --tile 2,3 --objective measured-error:fp16-storage --population 8 --generations 4 --restarts "
      "1 "
      "--train-channels 4 --top-k 1 --format json -o " +
      dir + "/out.json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(read_text_file(dir + "/out.json"));
  EXPECT_TRUE(verify(transform_from_json(j.at("transform"))));  // re-verified exactly from the file
  EXPECT_GT(j.at("train_error").get<double>(), 0);
  EXPECT_GT(j.at("held_out").at("gaussian").at("rel_l2").get<double>(), 0);
  EXPECT_EQ(j.at("training").at("channels").get<int>(), 4);
  EXPECT_TRUE(j.contains("catalogue_entry"));  // the shipped entry for comparison
  EXPECT_NE(r.output.find("F(2,3) fp16-storage"), std::string::npos) << r.output;  // progress on stderr
}

TEST(ErrorDiscoveryCli, TextAndBadInput) {
  const auto ok = testing::run_cli(
      "discover --tile 2,3 --objective proxy:int8-tap --population 8 --generations 4 --restarts 1 "
      "--train-channels 4");
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("training error"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("held-out gaussian"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("verified exactly"), std::string::npos) << ok.output;

  const auto bad = testing::run_cli("discover --tile 4,3 --objective measured-error:fp17");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("fp17"), std::string::npos) << bad.output;
  EXPECT_EQ(testing::run_cli("discover --tile 4,3 --objective proxy:").status, 2);
  EXPECT_EQ(testing::run_cli("discover --tile 4,3 --objective measured-error:fp16-storage --budget 1").status,
            2);
  EXPECT_EQ(testing::run_cli("discover --tile 4,3 --objective measured-error:fp16-storage --train-channels 0")
                .status,
            2);
  EXPECT_EQ(testing::run_cli("discover --tile 0,3 --objective measured-error:fp16-storage").status, 2);
}

}  // namespace
}  // namespace nova

namespace nova {
namespace {

TEST(ErrorDiscoveryCli, OptionsTheErrorSearchDoesNotHonourAreRefused) {
  // The error search has its own lattices and scaling: --dtype fp16 was ignored and F(4,3) proxy:fp16-storage
  // printed {0, 9/14, -9/14, 23/15, -23/15, inf} (not fp16 values, denominators above --max-denominator 10).
  const std::string base =
      "discover --tile 4,3 --objective proxy:fp16-storage --population 8 --generations 4 --restarts 1 "
      "--train-channels 4 ";
  const std::string out = testing::temp_dir() + "/fp16.json";
  const auto fp16 = testing::run_cli(base + "--dtype fp16 --format json -o " + out);
  if (fp16.status == 0) {
    // Accepted: then every finite point must be an fp16 value, a/2^k with |a| < 2^11 (the range is no issue
    // here).
    const auto j = nlohmann::json::parse(read_text_file(out));
    for (const auto& p : j.at("transform").at("points")) {
      if (p == "inf") continue;
      const Rational x = parse_rational(p.get<std::string>());
      const mpz_class den = x.get_den(), num = abs(x.get_num());
      EXPECT_TRUE((den & (den - 1)) == 0 && num < 2048) << p << " is not an fp16 value";
    }
  } else {
    EXPECT_EQ(fp16.status, 2) << fp16.output;
    EXPECT_NE(fp16.output.find("--dtype"), std::string::npos) << fp16.output;
  }
  for (const auto& [extra, option] :
       {std::pair{"--max-denominator 4", "--max-denominator"}, std::pair{"--max-ratio 2", "--max-ratio"},
        std::pair{"--scaling lagrange", "--scaling"}, std::pair{"--no-es", "--no-es"},
        std::pair{"--no-polish", "--no-polish"}}) {
    const auto r = testing::run_cli(base + extra);
    EXPECT_EQ(r.status, 2) << extra
                           << " was accepted and ignored: " << r.output.substr(0, r.output.find('\n'));
    EXPECT_NE(r.output.find(option), std::string::npos) << extra << ": " << r.output;
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << extra << ": " << r.output;
  }
  // --dtype any is the error search's own lattice: accepted.
  EXPECT_EQ(testing::run_cli(base + "--dtype any").status, 0);
}

// The other way round: the error objectives' options beside a kappa-style objective were ignored.
TEST(ErrorDiscoveryCli, ErrorObjectiveOptionsAreRefusedBesideKappaObjectives) {
  for (const std::string option :
       {"--train-tiles 5", "--train-channels 3", "--top-k 2", "--refine-window 1"}) {
    const auto r = testing::run_cli("discover --tile 2,3 --objective kappa-v " + option);
    EXPECT_EQ(r.status, 2) << option << ": " << r.output;
    EXPECT_NE(
        r.output.find("nova: error: " + option.substr(0, option.find(' ')) +
                      " applies to the error objectives (measured-error:, proxy:) only, not to kappa-v"),
        std::string::npos)
        << r.output;
  }
}

// Only a measured-error objective measures: beside the stage proxy (-p) or a kappa objective the
// training sizes and the refine window were ignored (--train-tiles 99999999999 ran in 2 s, exit 0).
TEST(CatalogueSearchCli, MeasuringOptionsAreRefusedBesideObjectivesThatDoNotMeasure) {
  for (const auto& [args, option] : {std::pair{"-p fp16-storage --train-tiles 99999999999", "--train-tiles"},
                                     std::pair{"-p fp16-storage --train-channels 4", "--train-channels"},
                                     std::pair{"--objective kappa-v --refine-window 2", "--refine-window"}}) {
    const auto r = testing::run_cli(std::string("catalogue search --tile 2,3 ") + args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_NE(
        r.output.find(std::string("nova: error: ") + option + " applies to measured-error objectives only"),
        std::string::npos)
        << args << ": " << r.output;
  }
}

TEST(CatalogueSearchCli, RefineWindowAndTrainingSizesAreChecked) {
  // nova discover refused these; catalogue search ran --refine-window -1 as 0 and exited 0.
  for (const auto& [args, part] :
       {std::pair{"--objective measured-error:fp16-storage --refine-window -1", "--refine-window"},
        std::pair{"-p fp16-storage --train-tiles 0", "--train-tiles"},
        std::pair{"-p fp16-storage --train-channels -2", "--train-channels"}}) {
    const auto r = testing::run_cli(std::string("catalogue search --tile 2,3 ") + args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find(part), std::string::npos) << args << ": " << r.output;
  }
}

// A search that succeeds (the tests above only see refusals): the stage proxy under fp16-storage on
// F(2,3), with a small lattice. The winner is exact, its matrices are the construction from its points
// up to a diagonal scaling, and the proxy it reports predicts the error `nova error` measures on
// independent data to within the factor 1.5 the stage-proxy tests hold it to.
TEST(CatalogueSearchCli, StageProxySearchGivesAnExactTransformWhoseProxyPredictsItsError) {
  const std::string file = testing::temp_dir() + "/found.json";
  auto r =
      testing::run_cli("catalogue search --tile 2,3 -p fp16-storage --max-den 4 --format json -o " + file);
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(file);
  const nlohmann::json j = nlohmann::json::parse(in);
  const Transform t = transform_from_json(j);
  EXPECT_TRUE(verify(t).ok);
  EXPECT_TRUE(match_points(t).ok);  // the construction from its points, up to a diagonal scaling
  EXPECT_TRUE(j.at("scaling_choice").contains("e1"));
  const double proxy = j.at("proxy").get<double>();
  r = testing::run_cli("error " + file + " --precision fp16-storage --seed 5 --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  const double measured = nlohmann::json::parse(r.output).at("results").at(0).at("rel_l2").get<double>();
  EXPECT_GT(measured, proxy / 1.5);
  EXPECT_LT(measured, proxy * 1.5);
  r = testing::run_cli("catalogue search --tile 2,3 -p fp16-storage --max-den 4");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("best power-of-two scaling under stage-proxy:fp16-storage: proxy"),
            std::string::npos)
      << r.output;
}

// Spearman's rho with average ranks for ties and NaN (a JSON null: the error overflowed) ranked above
// every number, written here apart from the library's: the check of the study's printed rhos.
double spearman_of(const nlohmann::json& x, const nlohmann::json& y) {
  auto ranks = [](const nlohmann::json& v) {
    std::vector<double> a;
    for (const auto& e : v) a.push_back(e.is_null() ? INFINITY : e.get<double>());
    std::vector<double> r(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      double below = 0, equal = 0;
      for (double b : a) {
        below += b < a[i];
        equal += b == a[i];
      }
      r[i] = below + (equal + 1) / 2;  // 1-based, ties share their mean rank
    }
    return r;
  };
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(rx.size()), mean = (n + 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  return sxy / std::sqrt(sxx * syy);
}

// `catalogue correlation` as a user runs it (only its refusals were tested): every set drawn as its
// help says (n - 1 points on the 1/64 grid, in [-2.5, 2.5], 0.05 apart), the counts, and each printed
// rho recomputed from the printed values.
TEST(CatalogueCorrelationCli, StudiesAreDrawnAsDocumentedAndTheirRhosFollowFromTheirValues) {
  const auto r = testing::run_cli(
      "catalogue correlation --tile 4,3 --count 24 --presets fp16-storage,int8-tap --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json studies = nlohmann::json::parse(r.output);
  ASSERT_EQ(studies.size(), 2u);
  for (const auto& st : studies) {
    const std::string what = st.at("preset").get<std::string>();
    ASSERT_EQ(st.at("count"), 24) << what;
    ASSERT_EQ(st.at("points").size(), 24u) << what;
    int usable = 0;
    for (const auto& m : st.at("measured")) usable += !m.is_null() && m.get<double>() < 1.0;
    EXPECT_EQ(st.at("usable"), usable) << what;
    for (const auto& set : st.at("points")) {
      ASSERT_EQ(set.size(), 5u);
      for (std::size_t i = 0; i < set.size(); ++i) {
        const double v = set[i].get<double>();
        EXPECT_EQ(v * 64, std::round(v * 64)) << what << ": " << v;
        EXPECT_LE(std::abs(v), 2.5) << what;
        for (std::size_t k = 0; k < i; ++k) EXPECT_GE(std::abs(v - set[k].get<double>()), 0.05) << what;
      }
    }
    EXPECT_NEAR(st.at("rho_proxy").get<double>(), spearman_of(st.at("proxy"), st.at("measured")), 1e-12)
        << what;
    EXPECT_NEAR(st.at("rho_kappa_v").get<double>(), spearman_of(st.at("kappa_v"), st.at("measured")), 1e-12)
        << what;
    EXPECT_NEAR(st.at("rho_p").get<double>(), spearman_of(st.at("p"), st.at("measured")), 1e-12) << what;
    EXPECT_NEAR(st.at("rho_proxy_scaled").get<double>(),
                spearman_of(st.at("proxy_scaled"), st.at("measured_scaled")), 1e-12)
        << what;
  }
  // The two presets drew the same sets (one seed), and the stage proxy ranks them better than kappa_2(V).
  EXPECT_EQ(studies[0].at("points"), studies[1].at("points"));
  for (const auto& st : studies)
    EXPECT_GT(st.at("rho_proxy").get<double>(), st.at("rho_kappa_v").get<double>());
}
}  // namespace
}  // namespace nova
