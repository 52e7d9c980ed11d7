// The strict .npy reader: NumPy's byte layout, accepted and rejected files.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "common/cli_runner.hpp"
#include "nova/error.hpp"
#include "nova/numerics/error_harness.hpp"
#include "nova/numerics/npy.hpp"

namespace nova {
namespace {

// An .npy file as NumPy writes it (version 1.0), from its parts.
std::string npy(const std::string& dict, const std::string& payload) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + payload;
}

std::string floats(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

std::string message(const std::string& bytes) {
  try {
    parse_npy(bytes, "x.npy");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Npy, ReadsFloat32AndRoundTripsFloat64) {
  const NpyArray a = parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                   floats({1, 2, 3, 4.5f, -5, 6})), "a.npy");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.dtype, "<f4");
  EXPECT_EQ(a.data[3], 4.5);
  const std::vector<int64_t> shape = {5};
  const std::vector<double> data = {0.1, -2, 3e300, 4, 5};
  const NpyArray b = parse_npy(npy_bytes(shape, data), "b.npy");
  EXPECT_EQ(b.shape, shape);
  EXPECT_EQ(b.data, data);
  const std::vector<int64_t> shape4 = {1, 2, 1, 2};
  const NpyArray c = parse_npy(npy_bytes(shape4, std::vector<double>{1, 2, 3, 4}), "c.npy");
  EXPECT_EQ(c.shape, shape4);
}

TEST(Npy, RejectsWhatItCannotUse) {
  EXPECT_NE(message(npy("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", floats({1}))).find("dtype"),
            std::string::npos);
  EXPECT_NE(message(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", floats({1}))).find("dtype"),
            std::string::npos);
  EXPECT_NE(message(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", floats({1}))).find("Fortran"),
            std::string::npos);
  EXPECT_NE(message(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", floats({1, 2}))).find("payload"),
            std::string::npos);
  EXPECT_NE(message(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", "")).find("empty"),
            std::string::npos);
  EXPECT_NE(message(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", floats({1}))).find("scalar"),
            std::string::npos);
  EXPECT_NE(message("PK\x03\x04 not numpy at all").find("magic"), std::string::npos);
  EXPECT_NE(message(npy("{'descr': '<f4', 'fortran_order': False}", floats({1}))).find("shape"), std::string::npos);
  EXPECT_THROW(read_npy("/nonexistent/file.npy"), Error);
}

// Every truncation and every single corrupted byte of a valid file is either read or rejected
// with nova::Error: never a crash, never another exception.
TEST(Npy, DamagedFilesAreRejectedCleanly) {
  const std::vector<int64_t> shape = {2, 3};
  const std::string good = npy_bytes(shape, std::vector<double>{1, 2, 3, 4, 5, 6});
  for (std::size_t len = 0; len < good.size(); ++len) EXPECT_THROW(parse_npy(good.substr(0, len), "t.npy"), Error) << len;
  for (std::size_t i = 0; i < 128 && i < good.size(); ++i)
    for (int v : {0, 0x27, 0x29, 0x7f, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(v);
      try {
        parse_npy(bad, "t.npy");
      } catch (const Error&) {
      }
    }
}

TEST(Npy, LayerDatasetChecksShapes) {
  const std::string dir = testing::temp_dir();
  const std::vector<int64_t> in_shape = {2, 5, 6}, w_shape = {4, 2, 3, 3}, bad_w = {4, 3, 3, 3}, flat = {60};
  write_npy(dir + "/in.npy", in_shape, std::vector<double>(60, 0.5));
  write_npy(dir + "/w.npy", w_shape, std::vector<double>(72, 0.25));
  write_npy(dir + "/badw.npy", bad_w, std::vector<double>(108, 0.25));
  write_npy(dir + "/flat.npy", flat, std::vector<double>(60, 0.5));
  const LayerDataset l = load_layer_dataset(dir + "/in.npy", dir + "/w.npy", 0, 3, 1);
  EXPECT_EQ(l.shape.N, 1);
  EXPECT_EQ(l.shape.C, 2);
  EXPECT_EQ(l.shape.K, 4);
  const LayerDataset g = load_layer_dataset(dir + "/in.npy", "", 3, 3, 1);  // generated weights
  EXPECT_EQ(g.weights.size(), 3U * 2 * 9);
  EXPECT_THROW(load_layer_dataset(dir + "/in.npy", dir + "/badw.npy", 0, 3, 1), Error);  // channels differ
  EXPECT_THROW(load_layer_dataset(dir + "/in.npy", dir + "/w.npy", 0, 5, 1), Error);     // filter size
  EXPECT_THROW(load_layer_dataset(dir + "/flat.npy", "", 2, 3, 1), Error);               // rank
}

}  // namespace
}  // namespace nova
