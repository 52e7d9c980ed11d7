#include "cli_common.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <regex>

#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/numerics/reference_conv.hpp"

namespace nova::cli {

OutputFormat parse_format(const std::string& text, bool allow_cpp) {
  if (text == "text") return OutputFormat::kText;
  if (text == "json") return OutputFormat::kJson;
  if (allow_cpp && text == "cpp") return OutputFormat::kCpp;
  throw Error("unknown --format '" + text + "' (expected text, json" + (allow_cpp ? ", cpp)" : ")"));
}

std::string format_error_value(double v) {
  return std::isfinite(v) ? fmt::format("{:.3e}", v) : "inf";
}

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::array<int64_t, 5> parse_nchwk(const std::string& text, const std::string& option) {
  const auto parts = split_list(text, ',');
  if (parts.size() != 5) throw Error(option + " wants N,C,H,W,K (five integers), got '" + text + "'");
  std::array<int64_t, 5> v{};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    std::size_t used = 0;
    try {
      v[i] = std::stoll(p, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != p.size() || p.empty()) throw Error(option + ": '" + p + "' is not an integer");
  }
  return v;
}

void emit(const std::string& path, const std::string& contents) {
  if (path.empty() || path == "-") {
    std::cout << contents;
    if (!contents.empty() && contents.back() != '\n') std::cout << '\n';
    std::cout.flush();
    // A full disk or a closed pipe: the output is lost, which the exit status must say.
    if (!std::cout) throw Error(std::string("cannot write to stdout: ") + std::strerror(errno));
    return;
  }
  write_text_file(path, contents);
}

void require_verified(const Transform& t, const std::string& what) {
  if (const Verification v = verify(t); !v)
    throw Error(what + " fails exact verification (nova verify): " + v.reason);
}

Transform load_verified_transform(const std::string& path) {
  nlohmann::json document;
  Transform t = load_transform(path, &document);
  require_verified(t, "'" + path + "'");
  // What `nova verify` refuses, every command refuses: a "float64" copy that disagrees with the exact
  // matrices was read past (the engine uses the exact ones), and the file handed on as it was.
  if (const Verification v = verify_derived_fields(document, t); !v)
    throw Error("'" + path + "' fails verification (nova verify): " + v.reason);
  return t;
}

CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& text) {
        const auto first = text.find_first_not_of(" \t");
        if (first != std::string::npos && text[first] == '-') return "must be 0 or more, got " + text;
        // CLI11 reads with strtoull, which saturates: "--seed 18446744073709551616" was seed 2^64 - 1.
        errno = 0;
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text.c_str(), &end, 0);
        if (errno == ERANGE && end != text.c_str())
          return "must be at most " + std::to_string(value) + ", got " + text;
        return std::string();
      },
      "");
}

void read_integers_in_decimal(CLI::App& app) {
  const CLI::Validator decimal(
      [](std::string& text) {
        std::size_t digits = text.find_first_not_of(" \t");
        if (digits == std::string::npos) return std::string();
        if (text[digits] == '-' || text[digits] == '+') ++digits;
        if (text.find_first_of("xX", digits) != std::string::npos)
          return "must be a decimal integer, got " + text;
        while (digits + 1 < text.size() && text[digits] == '0' &&
               std::isdigit(static_cast<unsigned char>(text[digits + 1])))
          text.erase(digits, 1);
        return std::string();
      },
      "", "decimal");
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type == "INT" || type == "UINT") option->transform(decimal);
  }
  for (CLI::App* sub : app.get_subcommands({})) read_integers_in_decimal(*sub);
}

void refuse_empty_values(CLI::App& app) {
  const CLI::Validator nonempty(
      [](const std::string& text) {
        return text.find_first_not_of(" \t") == std::string::npos
                   ? std::string("the value is empty (leave the option out for its default)")
                   : std::string();
      },
      "", "nonempty");
  for (CLI::Option* option : app.get_options())
    if (option->get_expected_min() > 0) option->check(nonempty);
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error) {
  std::string message = error.what();
  std::replace(message.begin(), message.end(), '\n', ' ');
  while (!message.empty() && message.back() == ' ') message.pop_back();

  static const std::regex given_twice(R"(^(\S+): At Most 1 required but received (\d+)$)");
  if (std::smatch m; std::regex_match(message, m, given_twice))
    return m[1].str() + " is given " + m[2].str() + " times; it takes one value";

  if (message == "A subcommand is required") {
    // The innermost command that was parsed is the one missing its subcommand.
    const CLI::App* command = &app;
    for (auto parsed = command->get_subcommands(); !parsed.empty(); parsed = command->get_subcommands())
      command = parsed.front();
    std::string names;
    for (const CLI::App* sub : command->get_subcommands({}))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    const std::string path = command == &app ? "nova" : "nova " + command->get_name();
    // A word that names none of them is left over as an extra argument: say which.
    if (const auto rest = command->remaining();
        !rest.empty() && !rest.front().empty() && rest.front()[0] != '-')
      return "unknown command '" + rest.front() + "' for " + path + " (commands: " + names + "; " + path +
             " --help says what each does)";
    return path + " needs a command: " + names + " (" + path + " --help says what each does)";
  }
  return message;
}

CLI::Validator writable_output() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path.empty() || path == "-") return {};
        // Not a regular file (a FIFO, a device): permission only. Opening and closing a FIFO ended a waiting
        // reader's stream, and the real write then blocked for ever.
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
          if (::access(path.c_str(), W_OK) == 0) return {};
          return "cannot write '" + path + "': " + std::strerror(errno);
        }
        // Another process may create or remove the file between these steps (two runs writing the same
        // path: the exclusive create then failed with "File exists"), so a step that finds the file's
        // state changed under it starts again, a few times.
        for (int attempt = 0; attempt < 4; ++attempt) {
          int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);  // an existing file, not truncated
          if (fd >= 0) {
            ::close(fd);
            return {};
          }
          if (errno != ENOENT) break;
          struct stat link {};
          if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
            // A dangling symbolic link: the write will create its target (O_EXCL refuses every link), so
            // create the target, and remove the target, not the link.
            fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
            if (fd < 0) break;
            ::close(fd);
            if (char* target = ::realpath(path.c_str(), nullptr)) {
              ::unlink(target);
              std::free(target);
            }
            return {};
          }
          fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
          if (fd >= 0) {
            ::close(fd);
            ::unlink(path.c_str());
            return {};
          }
          if (errno != EEXIST) break;  // EEXIST: created since the first open; look again
        }
        return "cannot write '" + path + "': " + std::strerror(errno);
      },
      "");
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

BenchLayerData bench_layer_data(const ConvShape& s, float range) {
  // A layer whose FP32 tensors alone fill more than half the machine's memory (before the plan's own
  // buffers and the typed copies) was tried anyway: minutes of paging, or a bare "out of memory".
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double in = 4.0 * static_cast<double>(s.input_size()) / gib,
               out = 4.0 * static_cast<double>(s.output_size()) / gib,
               wt = 4.0 * static_cast<double>(s.weight_size()) / gib;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const double memory =
      pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) / gib : 0.0;
  if (memory > 0.0 && in + out + wt > memory / 2)
    throw Error(
        fmt::format("the layer's FP32 tensors need {:.3g} GiB (input {:.3g}, output {:.3g}, weights {:.3g}), "
                    "over half this machine's {:.3g} GiB of memory; choose a smaller --shape",
                    in + out + wt, in, out, wt, memory));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  BenchLayerData d;
  d.input.resize(static_cast<std::size_t>(s.input_size()));
  d.weights.resize(static_cast<std::size_t>(s.weight_size()));
  d.bias.resize(static_cast<std::size_t>(s.K));
  for (auto& v : d.input) v = u(rng) * range;
  for (auto& v : d.weights) v = u(rng) * 0.1f;
  for (auto& v : d.bias) v = u(rng) * range;
  return d;
}

std::string ReferenceError::text() const {
  if (rel_l2) return fmt::format("  relative L2 error vs float64 reference: {:.3e}\n", *rel_l2);
  return fmt::format(
      "  relative L2 error vs float64 reference: none (the input as its tensor type holds {} NaN/Inf values, "
      "past the type's range: fp16's ends at 65504)\n",
      input_nonfinite);
}

void ReferenceError::write_to(nlohmann::json& j) const {
  j["rel_l2_error"] = rel_l2 ? nlohmann::json(*rel_l2) : nlohmann::json(nullptr);
  if (input_nonfinite > 0) j["input_nonfinite"] = input_nonfinite;
}

ReferenceError error_vs_reference(const ConvShape& s, const BenchLayerData& d, const std::vector<float>& y,
                                  bool relu) {
  ReferenceError e;
  for (float v : d.input) e.input_nonfinite += std::isfinite(v) ? 0 : 1;
  if (e.input_nonfinite > 0) return e;
  const std::vector<double> x(d.input.begin(), d.input.end()), w(d.weights.begin(), d.weights.end()),
      b(d.bias.begin(), d.bias.end());
  const std::vector<double> ref = reference_conv2d(s, x, w, b);
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double r = relu ? std::max(ref[i], 0.0) : ref[i];
    num += (static_cast<double>(y[i]) - r) * (static_cast<double>(y[i]) - r);
    den += r * r;
  }
  e.rel_l2 = std::sqrt(num / std::max(den, 1e-300));
  return e;
}

}  // namespace nova::cli
