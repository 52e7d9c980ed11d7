// Transform files: JSON (the stable exchange form), a C++ header, and readable text.
//
// JSON schema, version 1 (exact values are strings "p/q" or "p"):
//   {"format": "nova-transform", "version": 1,
//    "m": 6, "r": 3, "n": 8,
//    "points": ["0","1","-1","1/2","-1/2","2","-2","inf"],      (optional on import)
//    "scaling": {"convention": "wincnn", "D1": [...], "D2": [...]}, (optional on import)
//    "AT": [[...] x m], "G": [[...] x n], "BT": [[...] x n],        (required)
//    "float64": {"AT": [[...]], "G": [[...]], "BT": [[...]]},       (derived; ignored on import, checked
//                                                                    by verify_derived_fields / nova verify)
//    "verified": true}                                               (derived; ignored on import)
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "nova/exact/transform.hpp"
#include "nova/exact/verify.hpp"

namespace nova {

// Each exporter states whether the transform verifies exactly: by verify(t), or from `verified`, the
// result of verify(t) where the caller has it already (for points of thousands of digits a verification
// takes seconds: `nova transform` verified twice).
nlohmann::json to_json(const Transform& t);
nlohmann::json to_json(const Transform& t, const Verification& verified);
// Reads the schema above; throws nova::Error naming the key, row or entry that is wrong.
Transform transform_from_json(const nlohmann::json& j);

// Throws nova::Error when `name` is not a C++ identifier (or is a keyword), or when an entry is beyond
// float's range (a literal such as inff would not compile; the JSON keeps the exact values).
std::string to_cpp_header(const Transform& t, const std::string& name = "");
std::string to_cpp_header(const Transform& t, const std::string& name, const Verification& verified);
// Letters, digits and '_', not starting with a digit, and not a C++20 keyword or alternative token.
bool is_cpp_identifier(const std::string& name);
std::string to_text(const Transform& t);
std::string to_text(const Transform& t, const Verification& verified);

// File helpers with one-line errors for unreadable or unwritable paths.
std::string read_text_file(const std::string& path);
void write_text_file(const std::string& path, const std::string& contents);
// `document`, when given, receives the parsed JSON (for verify_derived_fields).
Transform load_transform(const std::string& path, nlohmann::json* document = nullptr);

// The derived keys of a transform's JSON checked against its exact matrices: each "float64" entry must be
// the nearest double to the exact one (null where that is beyond double's range) and "tile" must name m, r.
// Reading ignores them (they are derived), but a consumer without rationals reads "float64": a file whose
// arrays disagree with its exact matrices is wrong although they verify. Keys left out are not checked.
Verification verify_derived_fields(const nlohmann::json& document, const Transform& t);

// An identifier for generated code: "F6x3_0_p1_m1_h_mh_2_m2_inf"-style names are long, so this is
// "f6_3_" plus a short stable hash of points and scaling.
std::string transform_id(const Transform& t);

}  // namespace nova
