#include "cli_common.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <iostream>

#include "nova/error.hpp"
#include "nova/exact/io.hpp"

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

void emit(const std::string& path, const std::string& contents) {
  if (path.empty() || path == "-") {
    std::cout << contents;
    if (!contents.empty() && contents.back() != '\n') std::cout << '\n';
    std::cout.flush();
    return;
  }
  write_text_file(path, contents);
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

}  // namespace nova::cli
