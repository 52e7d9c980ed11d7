// The shipped catalogue (data/catalogue.json): for each tile and precision preset, the best
// transform nova found, with its exact matrices, scaling, held-out errors and provenance.
//
// Path resolution: an explicit path; else the environment variable NOVA_CATALOGUE; else the source
// tree's data/catalogue.json (compiled in). JSON schema, version 1:
//   {"format": "nova-catalogue", "version": 1, "nova_version": "0.1.0",
//    "generator": {...settings, seconds...},
//    "held_out": [{"name": "gaussian", "kind": "gaussian", "seed": 101, "tiles": 512, "channels": 32, "scale": 1}, ...],
//    "entries": [{"tile": "F(4,3)", "preset": "fp16-storage", "transform": <nova-transform JSON>,
//                 "points": [...], "scaling_choice": {...}, "kappa_v": 14.5, "proxy": ..., "train_error": ...,
//                 "held_out": {"gaussian": {"rel_l2": ..., "max_abs": ..., "nonfinite": 0}, ...},
//                 "found": {"candidate": "...", "objective": "...", "seed": 0, ...}}, ...]}
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "nova/catalogue/scaling_search.hpp"
#include "nova/exact/transform.hpp"
#include "nova/numerics/error_harness.hpp"

namespace nova {

// A held-out dataset: tiles from one generator and seed, the activations multiplied by `scale`.
struct HeldOutSpec {
  std::string name;
  DataKind kind = DataKind::kGaussian;
  uint64_t seed = 101;
  int64_t tiles = 512, channels = 32;
  double scale = 1.0;
};
// The held-out sets every entry is scored on (never used for selection): Gaussian, ReLU and
// uniform activations, and ReLU activations of amplitude 16 (the range of real networks).
std::vector<HeldOutSpec> default_held_out();
TileDataset make_held_out(TileSize tile, const HeldOutSpec& spec);
nlohmann::json to_json(const HeldOutSpec& s);
HeldOutSpec held_out_from_json(const nlohmann::json& j);

struct HeldOutError {
  std::string data;
  double rel_l2 = 0;
  double max_abs = 0;
  int64_t nonfinite = 0;
};

struct CatalogueEntry {
  TileSize tile;
  std::string preset;
  Transform transform;
  ScalingChoice scaling_choice;
  double kappa_v = 0;
  double proxy = 0;
  double train_error = 0;
  std::vector<HeldOutError> held_out;
  nlohmann::json found;  // provenance
  const HeldOutError* error(std::string_view data) const;
};

struct Catalogue {
  std::string nova_version;
  nlohmann::json generator;
  std::vector<HeldOutSpec> held_out;
  std::vector<CatalogueEntry> entries;

  const CatalogueEntry* find(TileSize tile, std::string_view preset) const;
  // Throws nova::Error naming the tiles or presets the catalogue has.
  const CatalogueEntry& best(TileSize tile, std::string_view preset) const;
  std::vector<std::string> presets() const;
  std::vector<TileSize> tiles() const;
};

std::string default_catalogue_path();  // NOVA_CATALOGUE, else the compiled-in source path
Catalogue catalogue_from_json(const nlohmann::json& j);  // throws nova::Error naming what is wrong
nlohmann::json to_json(const Catalogue& c);
nlohmann::json to_json(const CatalogueEntry& e);
Catalogue load_catalogue(const std::string& path = "");  // "" = default_catalogue_path()
// The shipped catalogue, loaded once (thread-safe).
const Catalogue& shipped_catalogue();
// best(tile, preset) of the shipped catalogue.
Transform catalogue_transform(TileSize tile, std::string_view preset);

std::string nova_version();

}  // namespace nova
