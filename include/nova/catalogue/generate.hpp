// Regenerating the catalogue: for each tile and precision preset, an error-driven search over points
// and power-of-two scalings together, deterministic for a seed (single-threaded by design).
//
// Per entry:
//  1. candidates: every published set for the tile (reference_points.hpp), and discover() runs with
//     the scale-invariant proxy P and with the preset's stage proxy, on the rational lattice
//     (a/b, b <= 10) and on the fp16 (dyadic) lattice;
//  2. each candidate gets its best power-of-two scaling under the stage proxy (scaling_search.hpp);
//     the best `polish` candidates are polished point by point on a finer lattice (b <= 16),
//     scoring each move with its own best scaling;
//  3. the `top_k` candidates by proxy, and every published set both as published (wincnn) and
//     rescaled, are measured on the training set (Gaussian tiles, fixed seed); the best is kept,
//     and its scaling polished on the measured error (window `refine_window`);
//  4. the winner is constructed exactly, verified, and scored on the held-out sets.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nova/catalogue/catalogue.hpp"
#include "nova/catalogue/error_objectives.hpp"
#include "nova/discover/es.hpp"

namespace nova {

struct GenerateOptions {
  std::vector<TileSize> tiles;      // empty: catalogue_tiles()
  std::vector<std::string> presets; // empty: catalogue_presets()
  uint64_t seed = 0;
  ErrorObjectiveOptions objective;
  std::vector<HeldOutSpec> held_out = default_held_out();
  EsParams es = default_es();
  int polish = 2;          // candidates polished on the lattice
  int polish_window = 2;   // lattice steps tried per coordinate
  int top_k = 4;           // discovered candidates measured
  int refine_window = 1;   // powers of two tried around the proxy's scaling, on the measured error
  std::function<void(const std::string&)> progress;
  static EsParams default_es();
};

std::vector<TileSize> catalogue_tiles();       // F(2,3) F(4,3) F(6,3) F(7,3) F(8,3) F(2,5) F(4,5) F(6,5)
std::vector<std::string> catalogue_presets();  // fp32 fp16-storage fp16-all bf16-storage int8-tensor int8-channel int8-tap

// Held-out errors of a transform under a model.
std::vector<HeldOutError> held_out_errors(const TransformF64& t, const PrecisionModel& model,
                                          const std::vector<HeldOutSpec>& sets);

CatalogueEntry search_entry(TileSize tile, const std::string& preset, const GenerateOptions& options);

// How an error-driven search picks its winner: by the measured training error (the catalogue's way),
// or by the analytic stage proxy alone (no measurement chooses; the winner is still measured and
// scored on the held-out sets).
enum class SelectBy { kMeasured, kProxy };
// The same search under any precision model (a preset or a user's model); the entry's `preset` is
// the model's name.
CatalogueEntry search_entry(TileSize tile, const PrecisionModel& model, const GenerateOptions& options,
                            SelectBy select = SelectBy::kMeasured);
Catalogue generate_catalogue(const GenerateOptions& options);

// The generator settings as recorded in the catalogue.
nlohmann::json to_json(const GenerateOptions& o);

}  // namespace nova
