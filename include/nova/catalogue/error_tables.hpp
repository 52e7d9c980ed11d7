// The error tables of `nova catalogue report` (issue 4, item 5): for F(4,3), F(6,3), F(8,3) and each
// preset, the published point sets and nova's catalogue entry side by side, each with kappa_2(V)
// and its measured error; then nova's measurements of the seed paper's Tables 9, 10, 18 (with 19),
// 20 and 34, printed next to the seed's own numbers. Markdown text and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nova/catalogue/catalogue.hpp"

namespace nova {

struct ErrorTablesOptions {
  std::vector<TileSize> tiles{{4, 3}, {6, 3}, {7, 3}, {8, 3}};
  std::vector<std::string> presets;  // empty: catalogue_presets()
  // Held-out data (not the training set the catalogue was chosen on).
  HeldOutSpec data{"gaussian", DataKind::kGaussian, 101, 256, 32, 1.0};
  const Catalogue* catalogue = nullptr;  // null: the shipped catalogue
  bool seed_tables = true;
};

struct ErrorTables {
  std::string markdown;
  nlohmann::json json;
};

// The library call behind `nova catalogue report` (and for `nova report`).
ErrorTables error_tables(const ErrorTablesOptions& options = {});

}  // namespace nova
