// nova error: measure a transform's error under precision models against the float64 direct
// convolution (tile level or a whole layer; generated or .npy data).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli_common.hpp"
#include "command_registry.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/first_order.hpp"

namespace nova::cli {
namespace {

struct ErrorOptions {
  std::string tile;
  std::vector<std::string> points;
  std::vector<std::string> transform_files;
  std::string scaling = "wincnn";
  bool scaling_given = false;  // for --points only: beside files alone it would be ignored
  std::string precision = "fp16-storage";
  std::string data = "gaussian";
  std::string weights;
  uint64_t seed = 1;
  int64_t tiles = 4096;
  int64_t channels = 32;
  bool tiles_given = false;  // --tiles/--channels shape tile data: beside a layer they would be ignored
  bool channels_given = false;
  std::string layer;
  std::string format = "text";
  std::string output;
  bool list = false;
  bool direct = false;
};

std::vector<Transform> transforms_of(const ErrorOptions& o) {
  std::vector<Transform> out;
  for (const std::string& f : o.transform_files) out.push_back(load_verified_transform(f));
  if (o.scaling_given && o.points.empty() && !out.empty())
    throw Error("--scaling applies to --points; the transform files have their own scaling");
  if (!o.points.empty() || out.empty()) {
    if (o.tile.empty()) throw Error("give --tile with --points, or a transform JSON file");
    const TileSize tile = parse_tile(o.tile);
    const ScalingSpec scaling = ScalingSpec::parse(o.scaling);
    if (o.points.empty()) out.push_back(Transform::construct(tile, standard_points(tile.n() - 1, true), scaling));
    for (const std::string& p : o.points) out.push_back(Transform::construct(tile, parse_points(p), scaling));
  }
  for (const Transform& t : out)
    if (!(t.tile() == out.front().tile()))
      throw Error("all transforms must have the same tile (" + out.front().tile().to_string() + " and " +
                  t.tile().to_string() + ")");
  // With files only, --tile would otherwise be ignored.
  if (!o.tile.empty() && !o.transform_files.empty() && !(parse_tile(o.tile) == out.front().tile()))
    throw Error("--tile " + o.tile + " disagrees with the tile of '" + o.transform_files.front() + "' (" +
                out.front().tile().to_string() + ")");
  return out;
}

std::string list_presets() {
  std::string s;
  for (const auto& m : precision_presets()) s += fmt::format("{:<18} {}\n", m.name, m.description);
  return s;
}

// JSON has no inf or NaN: a non-finite number is written as null (the counts say why).
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

struct Row {
  const Transform* transform;  // null: the direct convolution baseline
  const PrecisionModel* model;
  ErrorMetrics metrics;
  double p = 0, predicted = 0, predicted_uv = 0, seconds = 0;
};

void run_error(const ErrorOptions& o) {
  const OutputFormat format = parse_format(o.format, false);
  if (o.list) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& m : precision_presets()) j.push_back(to_json(m));
    emit(o.output, format == OutputFormat::kJson ? json_text(j, 2) : list_presets());
    return;
  }
  const std::vector<Transform> transforms = transforms_of(o);
  const TileSize tile = transforms.front().tile();
  std::vector<PrecisionModel> models;
  const std::vector<std::string> precisions = split_list(o.precision, ',');
  if (const std::string* twice = first_repeated(precisions))
    throw Error("--precision lists '" + *twice + "' twice");
  for (const std::string& name : precisions) models.push_back(load_precision_model(name));

  // The dataset: generated tiles, a generated layer, or a layer from .npy files.
  std::string data_text;
  nlohmann::json data_json;
  std::optional<TileDataset> tiles;
  std::optional<LayerDataset> layer;
  const bool from_files = o.data != "gaussian" && o.data != "relu" && o.data != "uniform";
  // Generated data makes its own weights; a weights file beside it would be ignored.
  if (!o.weights.empty() && !from_files)
    throw Error("--weights needs --data FILE.npy or a directory (generated --data " + o.data +
                " makes its own weights)");
  if ((from_files || !o.layer.empty()) && (o.tiles_given || o.channels_given))
    throw Error(std::string(o.tiles_given ? "--tiles" : "--channels") + " applies to tile data; " +
                (from_files ? "the --data file" : "--layer") +
                " gives a layer, whose shape fixes the tiles and channels");
  if (from_files) {
    std::string input = o.data, weights = o.weights;
    if (std::filesystem::is_directory(input)) {
      const std::filesystem::path dir(input);
      input = (dir / "input.npy").string();
      if (weights.empty() && std::filesystem::exists(dir / "weights.npy")) weights = (dir / "weights.npy").string();
    } else if (input.size() < 4 || input.substr(input.size() - 4) != ".npy") {
      try {
        parse_data_kind(o.data);  // throws the list of data kinds
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + "; or a .npy file, or a folder holding input.npy");
      }
    }
    if (!std::filesystem::exists(input)) throw Error("--data: '" + input + "' does not exist");
    const int64_t K = o.layer.empty() ? 8 : parse_nchwk(o.layer, "--layer")[4];
    layer = load_layer_dataset(input, weights, K, tile.r, o.seed);
    // The data fixes N, C, H, W (and K with a weights file); a --layer saying otherwise would be ignored.
    if (!o.layer.empty()) {
      const ConvShape& s = layer->shape;
      if (parse_nchwk(o.layer, "--layer") != std::array<int64_t, 5>{s.N, s.C, s.H, s.W, s.K})
        throw Error(fmt::format("--layer {} disagrees with the data: N,C,H,W,K = {},{},{},{},{} from '{}'{}",
                                o.layer, s.N, s.C, s.H, s.W, s.K, input,
                                weights.empty() ? "" : " and '" + weights + "'"));
    }
  } else if (!o.layer.empty()) {
    const auto l = parse_nchwk(o.layer, "--layer");
    layer = make_layer_dataset(l[0], l[1], l[2], l[3], l[4], tile.r, parse_data_kind(o.data), o.seed);
  } else {
    tiles = make_tile_dataset(tile, parse_data_kind(o.data), o.tiles, o.channels, o.seed);
  }
  if (layer) {
    data_text = fmt::format("layer {} ({})", layer->shape.to_string(), layer->source);
    data_json = {{"kind", "layer"}, {"shape", layer->shape.to_string()}, {"source", layer->source}};
  } else {
    data_text = fmt::format("{} tiles x {} channels ({})", tiles->tiles, tiles->channels, tiles->source);
    data_json = {{"kind", "tiles"}, {"tiles", tiles->tiles}, {"channels", tiles->channels}, {"source", tiles->source}};
  }

  std::vector<Row> rows;
  for (const PrecisionModel& model : models) {
    // The last model takes the tile data over instead of copying it (it can be gigabytes).
    const bool last = &model == &models.back();
    const ErrorEvaluator eval = layer    ? ErrorEvaluator(*layer, model, tile)
                                : last ? ErrorEvaluator(std::move(*tiles), model)
                                       : ErrorEvaluator(*tiles, model);
    if (o.direct) {
      const auto start = std::chrono::steady_clock::now();
      Row row{nullptr, &model, eval.evaluate_direct()};
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      row.predicted = row.predicted_uv = std::nan("");
      rows.push_back(row);
    }
    for (const Transform& t : transforms) {
      const TransformF64 f = t.to_f64();
      const auto start = std::chrono::steady_clock::now();
      Row row{&t, &model, eval.evaluate(f)};
      row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      row.p = winograd_p(f);
      row.predicted_uv = predicted_rel_error_2d(f, model.operand_unit_roundoff());
      // The stage-by-stage model covers floating pipelines; quantized ones have no such prediction.
      try {
        row.predicted = predicted_rel_error_2d(f, model, eval.channels());
      } catch (const Error&) {
        row.predicted = std::nan("");
      }
      rows.push_back(row);
    }
  }

  if (format == OutputFormat::kJson) {
    nlohmann::json results = nlohmann::json::array();
    for (const Row& r : rows) {
      if (!r.transform) {
        results.push_back({{"algorithm", "direct"},
                           {"precision", r.model->name},
                           {"rel_l2", number(r.metrics.rel_l2)},
                           {"max_abs", number(r.metrics.max_abs)},
                           {"elementwise_rel", number(r.metrics.elementwise)},
                           {"nan_count", r.metrics.nan_count},
                           {"inf_count", r.metrics.inf_count},
                           {"outputs", r.metrics.count},
                           {"seconds", r.seconds}});
        continue;
      }
      results.push_back({{"algorithm", "winograd"},
                         {"points", to_strings(r.transform->points())},
                         {"scaling", r.transform->scaling().convention},
                         {"precision", r.model->name},
                         {"rel_l2", number(r.metrics.rel_l2)},
                         {"max_abs", number(r.metrics.max_abs)},
                         {"elementwise_rel", number(r.metrics.elementwise)},
                         {"nan_count", r.metrics.nan_count},
                         {"inf_count", r.metrics.inf_count},
                         {"outputs", r.metrics.count},
                         {"reference_rms", number(r.metrics.reference_rms)},
                         {"P", number(r.p)},
                         {"first_order_prediction", number(r.predicted)},
                         {"first_order_uv_only", number(r.predicted_uv)},
                         {"seconds", r.seconds}});
    }
    emit(o.output,
         json_text(nlohmann::json{{"tile", tile.to_string()}, {"data", data_json}, {"results", results}}, 2));
    return;
  }
  std::string text = fmt::format("{} error against the float64 direct convolution; data: {}\n", tile.to_string(), data_text);
  text += fmt::format("{:<32} {:<9} {:<18} {:>10} {:>10} {:>11} {:>8} {:>8} {:>10} {:>7}\n", "points", "scaling",
                      "precision", "rel_l2", "max_abs", "elementwise", "nan", "inf", "1st-order", "sec");
  for (const Row& r : rows) {
    const std::string pts = !r.transform                     ? "(direct convolution)"
                            : r.transform->points().empty() ? "(from file)"
                                                            : to_string(r.transform->points());
    text += fmt::format("{:<32} {:<9} {:<18} {:>10.3e} {:>10.3e} {:>11.3e} {:>8} {:>8} {:>10.3e} {:>7.2f}\n", pts,
                        r.transform ? r.transform->scaling().convention : "-", r.model->name, r.metrics.rel_l2, r.metrics.max_abs,
                        r.metrics.elementwise, r.metrics.nan_count, r.metrics.inf_count, r.predicted, r.seconds);
  }
  text +=
      "rel_l2 = ||y - y_ref|| / ||y_ref||; elementwise = mean |y - y_ref| / |y_ref| (the seed's metric; "
      "dominated\n"
      "by near-zero outputs); rel_l2, max_abs and elementwise are inf when any output is inf/NaN. 1st-order "
      "=\n"
      "stage-by-stage first-order prediction for iid zero-mean data (nan for quantized models; see\n"
      "docs/precision-models.md).\n";
  emit(o.output, text);
}

const CommandRegistration error_registration("error", 40, [](CLI::App& app) {
  auto o = std::make_shared<ErrorOptions>();
  CLI::App* sub = app.add_subcommand("error", "Measure a transform's error under precision models against float64 direct convolution");
  // No ExistingFile check: CLI11 validates positionals before it reports unknown options, so with one
  // `error -t 2,3 --threads 2` blamed a file named 2. A missing file is reported when it is read.
  sub->add_option("transforms", o->transform_files, "Transform JSON files (instead of or with --points)");
  sub->add_option("--tile,-t", o->tile, "Tile F(m,r), written 6,3 or F(6,3)");
  sub->add_option("--points,-p", o->points, "Points, e.g. \"0,±1,±2,±1/2,inf\"; repeat to compare several "
                                            "(default: the standard 0, ±1, ±2, ... with inf)");
  sub->add_option("--scaling,-s", o->scaling,
                  "Diagonal scaling for --points: wincnn, lagrange, or d1=...;d2=...")
      ->capture_default_str()
      ->each([o](const std::string&) { o->scaling_given = true; });
  sub->add_option("--precision", o->precision, "Precision model preset or JSON file; comma-separated for several")
      ->capture_default_str();
  sub->add_flag("--list-precisions", o->list, "List the precision model presets and exit");
  sub->add_flag("--direct", o->direct, "Also measure a direct convolution in each model's product/accumulate formats");
  sub->add_option("--data", o->data, "gaussian, relu, uniform, an activations .npy file, or a directory with input.npy "
                                     "(and weights.npy)")
      ->capture_default_str();
  sub->add_option("--weights", o->weights, "Weights .npy [K,C,r,r] for --data FILE.npy");
  sub->add_option("--seed", o->seed, "Seed of the generated data")
      ->capture_default_str()
      ->check(non_negative_integer());
  sub->add_option("--tiles", o->tiles, "Number of independent tiles (tile-level data)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->tiles_given = true; });
  sub->add_option("--channels", o->channels, "Input channels accumulated per tile (tile-level data)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->channels_given = true; });
  sub->add_option("--layer", o->layer, "A whole layer N,C,H,W,K (stride 1, same padding) instead of tiles");
  sub->add_option("--format,-f", o->format, "Output: text or json")->capture_default_str();
  sub->add_option("--output,-o", o->output, "Write to this file instead of stdout")->check(writable_output());
  sub->callback([o] { run_error(*o); });
});

}  // namespace
}  // namespace nova::cli
