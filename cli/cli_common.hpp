// Helpers shared by the commands: output destinations and formats.
#pragma once

#include <string>

namespace nova::cli {

enum class OutputFormat { kText, kJson, kCpp };
OutputFormat parse_format(const std::string& text, bool allow_cpp);

// Writes to the file at `path`, or to stdout when path is empty or "-". Throws nova::Error on an
// unwritable path.
void emit(const std::string& path, const std::string& contents);

// An error figure as the tables print it: 3 significant digits in e-notation, "inf" when not finite.
std::string format_error_value(double v);

// True when stderr is a terminal (progress output goes there only then).
bool stderr_is_terminal();

}  // namespace nova::cli
