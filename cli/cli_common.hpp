// Helpers shared by the commands: output destinations and formats.
#pragma once

#include <CLI/CLI.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nova/conv_shape.hpp"
#include "nova/exact/transform.hpp"
#include "nova/exact/verify.hpp"

namespace nova::cli {

enum class OutputFormat { kText, kJson, kCpp };
OutputFormat parse_format(const std::string& text, bool allow_cpp);

// Writes to the file at `path`, or to stdout when path is empty or "-". Throws nova::Error on an
// unwritable path.
void emit(const std::string& path, const std::string& contents);

// JSON as the commands print it: `indent` spaces, bytes that are not UTF-8 (a file name, a message quoting a
// file) replaced by U+FFFD (nlohmann's default threw, and the whole output was lost with an internal error).
std::string json_text(const nlohmann::json& j, int indent = 2);

// An error figure as the tables print it: 3 significant digits in e-notation, "inf" when not finite.
std::string format_error_value(double v);

// The fields of `text` between the separators, spaces removed; empty fields are kept ("a,,b" has three).
std::vector<std::string> split_list(const std::string& text, char sep);

// A layer shape written N,C,H,W,K: five integers; anything else throws nova::Error naming `option`.
std::array<int64_t, 5> parse_nchwk(const std::string& text, const std::string& option);

// Commands that compute with a transform refuse one that fails verification (as `bench --transform`
// does): their numbers would describe no convolution. Throws nova::Error naming `what` and the reason.
void require_verified(const Transform& t, const std::string& what);

// load_transform, then require_verified and verify_derived_fields (as `nova verify`), naming the file.
Transform load_verified_transform(const std::string& path);

// For unsigned options (seeds): CLI11 reads "-1" into a uint64_t as 18446744073709551615; this
// refuses a minus sign instead ("--seed: must be 0 or more, got -1"), and a value beyond 2^64 - 1,
// which strtoull saturates to 2^64 - 1.
CLI::Validator non_negative_integer();

// CLI11 reads integers with base 0: "--seed 010" was seed 8 and "--population 0x10" 16. Every integer
// option of `app` and its subcommands reads decimal instead: leading zeros are dropped, 0x is refused.
// Call after every option is added.
void read_integers_in_decimal(CLI::App& app);

// The first item of `items` that an earlier one equals, or null: lists that name an item twice are
// refused (`--precision a,a` ran twice; `--tiles '2,3;2,3'` wrote a catalogue nova then refused).
template <class T>
const T* first_repeated(const std::vector<T>& items) {
  for (std::size_t i = 0; i < items.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (items[j] == items[i]) return &items[i];
  return nullptr;
}

// An option callback (CLI::Option::each) that records `name` in (*options).*slot unless an earlier
// option of its group did: the first of a group given, for a message that refuses them together.
template <class Options>
auto note_first_given(std::shared_ptr<Options> options, std::string Options::*slot, const char* name) {
  return [options, slot, name](const std::string&) {
    if (((*options).*slot).empty()) (*options).*slot = name;
  };
}

// Every option of `app` and its subcommands that takes a value refuses an empty one ("-o ''" wrote to
// stdout, "--catalogue ''" read the shipped catalogue: an empty value meant the default, silently).
// Call after every option is added.
void refuse_empty_values(CLI::App& app);

// One line for a CLI11 parse error, in nova's words where CLI11's would puzzle: an option given twice
// ("--tile: At Most 1 required but received 2") says so, and a command without its subcommand
// ("A subcommand is required") names the subcommands there are.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error);

// For --output: checks at parse time, before any long work (a catalogue search runs for minutes), that
// the file can be written. An existing file is opened without truncating it; a new one is created and
// removed again, so a command that fails later leaves no empty file behind. "-" and "" are stdout.
CLI::Validator writable_output();

// True when stderr is a terminal (progress output goes there only then).
bool stderr_is_terminal();

// The data of `nova bench conv` and `nova cuda conv` (the same layer gives the same data in both): input and
// bias uniform in [-range, range], weights in [-0.1, 0.1], from a fixed seed.
struct BenchLayerData {
  std::vector<float> input, weights, bias;
};
// Refused (nova::Error) when the FP32 tensors alone would take over half the machine's memory.
BenchLayerData bench_layer_data(const ConvShape& s, float range);
// The --check figure of `nova bench conv` and `nova cuda conv`: the relative L2 error of `y` (NCHW) against
// the float64 direct convolution of `d` (its input as the tensor type holds it), ReLU applied to the
// reference where `relu`; none where that input holds NaN or Inf (an fp16 tensor past 65504), whose
// reference is not finite: the report says so instead of printing NaN.
struct ReferenceError {
  std::optional<double> rel_l2;
  int64_t input_nonfinite = 0;
  std::string text() const;                // the report's line
  void write_to(nlohmann::json& j) const;  // rel_l2_error (null where none) and input_nonfinite
};
ReferenceError error_vs_reference(const ConvShape& s, const BenchLayerData& d, const std::vector<float>& y,
                                  bool relu);

}  // namespace nova::cli
