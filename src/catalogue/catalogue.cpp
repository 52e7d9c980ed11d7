#include "nova/catalogue/catalogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/numerics/precision_model.hpp"

#ifndef NOVA_DEFAULT_CATALOGUE
#define NOVA_DEFAULT_CATALOGUE "data/catalogue.json"
#endif
#ifndef NOVA_VERSION_STRING
#define NOVA_VERSION_STRING "unknown"
#endif

namespace nova {

using json = nlohmann::json;

std::string nova_version() { return NOVA_VERSION_STRING; }

std::vector<HeldOutSpec> default_held_out() {
  return {
      {"gaussian", DataKind::kGaussian, 101, 512, 32, 1.0},
      {"relu", DataKind::kRelu, 102, 512, 32, 1.0},
      {"uniform", DataKind::kUniform, 103, 512, 32, 1.0},
      {"relu-x16", DataKind::kRelu, 104, 512, 32, 16.0},
  };
}

TileDataset make_held_out(TileSize tile, const HeldOutSpec& spec) {
  TileDataset d = make_tile_dataset(tile, spec.kind, spec.tiles, spec.channels, spec.seed);
  if (spec.scale != 1.0) {
    for (double& v : d.d) v *= spec.scale;
    d.source += fmt::format(", activations x{}", spec.scale);
  }
  return d;
}

json to_json(const HeldOutSpec& s) {
  return {{"name", s.name}, {"kind", std::string(to_string(s.kind))}, {"seed", s.seed},
          {"tiles", s.tiles}, {"channels", s.channels}, {"scale", s.scale}};
}

namespace {

const json& need(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw Error(fmt::format("catalogue: {} has no \"{}\"", where, key));
  return j.at(key);
}
template <class T>
T get(const json& j, const char* key, const std::string& where) {
  const json& v = need(j, key, where);
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    throw Error(fmt::format("catalogue: \"{}\" of {} has the wrong type", key, where));
  }
}

ScalingChoice choice_from_json(const json& j, std::size_t n, const std::string& where) {
  ScalingChoice s;
  s.e1 = get<std::vector<int>>(j, "e1", where);
  s.e2 = get<std::vector<int>>(j, "e2", where);
  for (const auto& p : get<std::vector<std::string>>(j, "normalizer", where)) {
    if (p == "G") s.place.push_back(Normalizer::kG);
    else if (p == "BT") s.place.push_back(Normalizer::kBT);
    else if (p == "AT") s.place.push_back(Normalizer::kAT);
    else throw Error(fmt::format("catalogue: {}: unknown normalizer place '{}'", where, p));
  }
  if (s.e1.size() != n || s.e2.size() != n || s.place.size() != n)
    throw Error(fmt::format("catalogue: {}: scaling_choice needs {} positions", where, n));
  return s;
}

}  // namespace

HeldOutSpec held_out_from_json(const json& j) {
  HeldOutSpec s;
  s.name = get<std::string>(j, "name", "a held-out set");
  const std::string where = "held-out set '" + s.name + "'";
  s.kind = parse_data_kind(get<std::string>(j, "kind", where));
  s.seed = get<uint64_t>(j, "seed", where);
  s.tiles = get<int64_t>(j, "tiles", where);
  s.channels = get<int64_t>(j, "channels", where);
  s.scale = get<double>(j, "scale", where);
  if (s.tiles < 1 || s.channels < 1) throw Error("catalogue: " + where + " needs tiles and channels >= 1");
  return s;
}

const HeldOutError* CatalogueEntry::error(std::string_view data) const {
  for (const auto& e : held_out)
    if (e.data == data) return &e;
  return nullptr;
}

const CatalogueEntry* Catalogue::find(TileSize tile, std::string_view preset) const {
  for (const auto& e : entries)
    if (e.tile == tile && e.preset == preset) return &e;
  return nullptr;
}

std::vector<std::string> Catalogue::presets() const {
  std::vector<std::string> out;
  for (const auto& e : entries)
    if (std::find(out.begin(), out.end(), e.preset) == out.end()) out.push_back(e.preset);
  return out;
}

std::vector<TileSize> Catalogue::tiles() const {
  std::vector<TileSize> out;
  for (const auto& e : entries)
    if (std::find(out.begin(), out.end(), e.tile) == out.end()) out.push_back(e.tile);
  return out;
}

const CatalogueEntry& Catalogue::best(TileSize tile, std::string_view preset) const {
  if (const auto* e = find(tile, preset)) return *e;
  auto join = [](const auto& items, auto fn) {
    std::string s;
    for (const auto& x : items) s += (s.empty() ? "" : ", ") + fn(x);
    return s;
  };
  const auto ps = presets();
  if (std::find(ps.begin(), ps.end(), preset) == ps.end())
    throw Error(fmt::format("the catalogue has no preset '{}' (it has {})", preset,
                            join(ps, [](const std::string& s) { return s; })));
  throw Error(fmt::format("the catalogue has no tile {} for '{}' (it has {})", tile.to_string(), preset,
                          join(tiles(), [](const TileSize& t) { return t.to_string(); })));
}

std::string default_catalogue_path() {
  if (const char* env = std::getenv("NOVA_CATALOGUE"); env && *env) return env;
  return NOVA_DEFAULT_CATALOGUE;
}

json to_json(const CatalogueEntry& e) {
  json held = json::object();
  for (const auto& h : e.held_out) held[h.data] = {{"rel_l2", h.rel_l2}, {"max_abs", h.max_abs}, {"nonfinite", h.nonfinite}};
  // JSON has no infinity: a transform that overflows on a set is recorded as null.
  for (auto& [k, v] : held.items()) {
    (void)k;
    if (!std::isfinite(v["rel_l2"].get<double>())) v["rel_l2"] = nullptr;
    if (!std::isfinite(v["max_abs"].get<double>())) v["max_abs"] = nullptr;
  }
  return {{"tile", e.tile.to_string()},
          {"preset", e.preset},
          {"points", to_strings(e.transform.points())},
          {"scaling_choice", to_json(e.scaling_choice)},
          {"kappa_v", e.kappa_v},
          {"proxy", e.proxy},
          {"train_error", e.train_error},
          {"held_out", held},
          {"found", e.found},
          {"transform", to_json(e.transform)}};
}

json to_json(const Catalogue& c) {
  json held = json::array();
  for (const auto& h : c.held_out) held.push_back(to_json(h));
  json entries = json::array();
  for (const auto& e : c.entries) entries.push_back(to_json(e));
  return {{"format", "nova-catalogue"}, {"version", 1},         {"nova_version", c.nova_version},
          {"generator", c.generator},   {"held_out", held},     {"entries", entries}};
}

Catalogue catalogue_from_json(const json& j) {
  if (!j.is_object()) throw Error("catalogue: the top level must be a JSON object");
  if (get<std::string>(j, "format", "the catalogue") != "nova-catalogue")
    throw Error("catalogue: \"format\" must be \"nova-catalogue\"");
  if (get<int>(j, "version", "the catalogue") != 1) throw Error("catalogue: unsupported version (expected 1)");
  Catalogue c;
  c.nova_version = get<std::string>(j, "nova_version", "the catalogue");
  c.generator = j.value("generator", json::object());
  for (const auto& h : need(j, "held_out", "the catalogue")) c.held_out.push_back(held_out_from_json(h));
  const json& entries = need(j, "entries", "the catalogue");
  if (!entries.is_array()) throw Error("catalogue: \"entries\" must be an array");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json& je = entries[i];
    std::string where = fmt::format("entry {}", i);
    CatalogueEntry e;
    e.tile = parse_tile(get<std::string>(je, "tile", where));
    e.preset = get<std::string>(je, "preset", where);
    where = fmt::format("entry {} ({} {})", i, e.tile.to_string(), e.preset);
    try {
      e.transform = transform_from_json(need(je, "transform", where));
    } catch (const Error& err) {
      throw Error(fmt::format("catalogue: {}: {}", where, err.what()));
    }
    if (!(e.transform.tile() == e.tile)) throw Error("catalogue: " + where + ": the transform is for another tile");
    e.scaling_choice = choice_from_json(need(je, "scaling_choice", where), static_cast<std::size_t>(e.tile.n()), where);
    e.kappa_v = get<double>(je, "kappa_v", where);
    // null is a proxy of +inf (JSON has no inf: a float stage overflows for every candidate, F(8,3) and
    // F(6,5) under fp16-all); it was read as 0, and `catalogue show` printed "proxy 0.000e+00" for it.
    e.proxy = je.contains("proxy") && je["proxy"].is_number() ? je["proxy"].get<double>()
              : je.contains("proxy") && je["proxy"].is_null() ? HUGE_VAL
                                                              : 0.0;
    e.train_error = get<double>(je, "train_error", where);
    const json& held = need(je, "held_out", where);
    if (!held.is_object()) throw Error("catalogue: " + where + ": \"held_out\" must be an object");
    for (auto it = held.begin(); it != held.end(); ++it) {
      HeldOutError h;
      h.data = it.key();
      const json& v = it.value();
      h.rel_l2 = v.contains("rel_l2") && v["rel_l2"].is_number() ? v["rel_l2"].get<double>() : HUGE_VAL;
      h.nonfinite = v.value("nonfinite", int64_t{0});
      // A non-finite output is an unbounded error (error_harness.hpp), written as null; files
      // written before that gave the finite outputs' maximum beside a nonzero "nonfinite".
      h.max_abs = h.nonfinite > 0 || (v.contains("max_abs") && v["max_abs"].is_null())
                      ? HUGE_VAL
                      : v.value("max_abs", 0.0);
      e.held_out.push_back(h);
    }
    e.found = je.value("found", json::object());
    if (c.find(e.tile, e.preset)) throw Error("catalogue: " + where + " appears twice");
    c.entries.push_back(std::move(e));
  }
  return c;
}

Catalogue load_catalogue(const std::string& path) {
  const std::string p = path.empty() ? default_catalogue_path() : path;
  const std::string text = read_text_file(p);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(fmt::format("catalogue {}: not valid JSON ({})", p, e.what()));
  }
  try {
    return catalogue_from_json(j);
  } catch (const Error& e) {
    throw Error(fmt::format("{} ({})", e.what(), p));
  }
}

const Catalogue& shipped_catalogue() {
  static std::once_flag once;
  static std::optional<Catalogue> cat;
  std::call_once(once, [] { cat = load_catalogue(); });
  return *cat;
}

Transform catalogue_transform(TileSize tile, std::string_view preset) { return shipped_catalogue().best(tile, preset).transform; }

}  // namespace nova
