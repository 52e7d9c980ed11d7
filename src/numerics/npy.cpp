#include "nova/numerics/npy.hpp"

#include <fmt/format.h>

#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "nova/error.hpp"
#include "nova/exact/io.hpp"

namespace nova {
namespace {

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

[[noreturn]] void fail(const std::string& name, const std::string& why) { throw Error(fmt::format("'{}': not a usable .npy file: {}", name, why)); }

// The header is a Python dict literal; only the three keys NumPy writes are accepted.
std::string dict_value(const std::string& header, const std::string& key, const std::string& name) {
  const std::string pat = "'" + key + "':";
  const std::size_t at = header.find(pat);
  if (at == std::string::npos) fail(name, "header has no '" + key + "'");
  std::size_t i = at + pat.size();
  while (i < header.size() && header[i] == ' ') ++i;
  if (i >= header.size()) fail(name, "header is truncated");
  std::size_t end = i;
  if (header[i] == '\'') {
    end = header.find('\'', i + 1);
    if (end == std::string::npos) fail(name, "header string is not closed");
    return header.substr(i, end - i + 1);
  }
  if (header[i] == '(') {
    end = header.find(')', i);
    if (end == std::string::npos) fail(name, "header shape is not closed");
    return header.substr(i, end - i + 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(i, end - i);
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& name) {
  // "(2, 3, 4)", "(5,)", "()"
  std::vector<int64_t> shape;
  std::size_t i = 1;
  while (i + 1 < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i + 1 >= text.size()) break;
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) fail(name, "bad shape " + text);
    int64_t v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (v > (int64_t{1} << 40)) fail(name, "shape too large");
      v = v * 10 + (text[i] - '0');
      ++i;
    }
    shape.push_back(v);
  }
  if (shape.empty()) fail(name, "a scalar (shape ()) is not an array of values");
  return shape;
}

}  // namespace

int64_t NpyArray::size() const {
  int64_t s = 1;
  for (int64_t d : shape) s *= d;
  return s;
}

NpyArray parse_npy(const std::string& bytes, const std::string& name) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) fail(name, "missing the \\x93NUMPY magic");
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(name, "truncated header");
    for (int b = 0; b < 4; ++b) header_len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + b])) << (8 * b);
    offset = 12;
  } else {
    fail(name, fmt::format("unsupported format version {}", major));
  }
  if (bytes.size() < offset + header_len) fail(name, "truncated header");
  const std::string header = bytes.substr(offset, header_len);
  NpyArray a;
  const std::string descr = dict_value(header, "descr", name);
  if (descr == "'<f4'") a.dtype = "<f4";
  else if (descr == "'<f8'") a.dtype = "<f8";
  else fail(name, "dtype " + descr + " (expected float32 '<f4' or float64 '<f8')");
  const std::string order = dict_value(header, "fortran_order", name);
  if (order != "False") fail(name, "Fortran order (save a C-contiguous array)");
  a.shape = parse_shape(dict_value(header, "shape", name), name);
  int64_t count = 1;
  for (int64_t d : a.shape) {
    if (d != 0 && count > (int64_t{1} << 40) / d) fail(name, "array too large");
    count *= d;
  }
  if (count == 0) fail(name, "the array is empty (zero-size axis)");
  const std::size_t elem = a.dtype == "<f4" ? 4 : 8;
  const std::size_t data_at = offset + header_len;
  const std::size_t want = static_cast<std::size_t>(count) * elem;
  if (bytes.size() - data_at != want)
    fail(name, fmt::format("payload has {} bytes, shape and dtype need {}", bytes.size() - data_at, want));
  a.data.resize(static_cast<std::size_t>(count));
  const char* p = bytes.data() + data_at;
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    if (elem == 4) {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      a.data[i] = static_cast<double>(f);
    } else {
      std::memcpy(&a.data[i], p + 8 * i, 8);
    }
  }
  return a;
}

NpyArray read_npy(const std::string& path) { return parse_npy(read_text_file(path), path); }

std::string npy_bytes(std::span<const int64_t> shape, std::span<const double> data) {
  std::string dims;
  int64_t count = 1;
  for (int64_t d : shape) {
    dims += std::to_string(d) + ", ";
    count *= d;
  }
  // "(2, 3)" but "(5,)"
  if (shape.size() == 1) dims.pop_back();
  else if (shape.size() > 1) dims.resize(dims.size() - 2);
  if (static_cast<std::size_t>(count) != data.size()) throw Error("write_npy: data size does not match the shape");
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces so that the data starts at a multiple of 64, ending the header with '\n'.
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(double));
  return out;
}

void write_npy(const std::string& path, std::span<const int64_t> shape, std::span<const double> data) {
  // Binary: written here rather than through write_text_file, which ends text with a newline.
  const std::string bytes = npy_bytes(shape, data);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write '" + path + "': " + std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) throw Error("error while writing '" + path + "'");
}

}  // namespace nova
