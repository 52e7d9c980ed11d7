// Each part of the library binds itself in its own file; module.cpp calls them in layer order.
#pragma once

#include <nanobind/nanobind.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "nova/error.hpp"

namespace nova::python {

void bind_exact(nanobind::module_& m);
void bind_analysis(nanobind::module_& m);
void bind_numerics(nanobind::module_& m);
void bind_discover(nanobind::module_& m);
void bind_catalogue(nanobind::module_& m);
void bind_conv(nanobind::module_& m);
void bind_cuda(nanobind::module_& m);
void bind_memory_fingerprint(nanobind::module_& m);  // for nova.torch

// nova's JSON results as plain Python objects (dict, list, str, float, int, bool, None), through the
// json module: one well-tested conversion instead of a hand-written one per result type. Non-finite
// numbers (JSON null in nova's output) arrive as None.
inline nanobind::object to_python(const nlohmann::json& j) {
  return nanobind::module_::import_("json").attr("loads")(j.dump());
}
// The same for a JSON object or array, typed so that signatures and stubs say dict or list, not object.
inline nanobind::dict to_python_dict(const nlohmann::json& object) {
  return nanobind::cast<nanobind::dict>(to_python(object));
}
inline nanobind::list to_python_list(const nlohmann::json& array) {
  return nanobind::cast<nanobind::list>(to_python(array));
}
// A seed: any Python int from 0 to 2^64 - 1. Taken as uint64_t, a negative one got nanobind's "incompatible
// function arguments" and its whole signature dump.
inline uint64_t seed_from(const nanobind::int_& seed) {
  const std::string text = nanobind::cast<std::string>(nanobind::str(seed));
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    throw nova::Error("seed must be an integer from 0 to 2^64 - 1, got " + text);
  return value;
}

// A Python object (dict, list, ...) as JSON, through the json module.
inline nlohmann::json from_python(const nanobind::handle& o) {
  const nanobind::object text = nanobind::module_::import_("json").attr("dumps")(o);
  return nlohmann::json::parse(nanobind::cast<std::string>(text));
}

}  // namespace nova::python
