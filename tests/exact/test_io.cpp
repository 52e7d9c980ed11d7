#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/cli_runner.hpp"
#include "nova/error.hpp"
#include "nova/exact/io.hpp"
#include "nova/exact/verify.hpp"

namespace nova {
namespace {

using nlohmann::json;

std::string error_of(const json& j) {
  try {
    transform_from_json(j);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TransformJson, RoundTripPreservesEverything) {
  for (const char* scaling : {"wincnn", "lagrange", "d1=1,2,1/2,1,1,1,-1,4;d2=1,1,1,3,1,1,1,1/8"}) {
    const Transform t = Transform::construct({6, 3}, parse_points("0,±1,±2,±1/2,inf"), ScalingSpec::parse(scaling));
    const json j = to_json(t);
    EXPECT_EQ(j.at("points").size(), 8u);
    EXPECT_TRUE(j.at("verified").get<bool>());
    const Transform back = transform_from_json(json::parse(j.dump()));
    EXPECT_EQ(back.AT(), t.AT());
    EXPECT_EQ(back.G(), t.G());
    EXPECT_EQ(back.BT(), t.BT());
    EXPECT_EQ(back.points(), t.points());
    EXPECT_EQ(back.scaling().d1, t.scaling().d1);
    EXPECT_EQ(back.scaling().d2, t.scaling().d2);
    EXPECT_EQ(back.scaling().convention, t.scaling().convention);
    EXPECT_TRUE(verify(back));
    EXPECT_TRUE(match_points(back));
    EXPECT_EQ(transform_id(back), transform_id(t));
  }
}

TEST(TransformJson, MinimalHandWrittenFileIsAccepted) {
  // Lavin & Gray's F(2,3): only the required keys, integers as JSON numbers.
  const json j = json::parse(R"({"m": 2, "r": 3, "AT": [[1,1,1,0],[0,1,-1,-1]],
      "G": [["1","0","0"],["1/2","1/2","1/2"],["1/2","-1/2","1/2"],["0","0","1"]],
      "BT": [[1,0,-1,0],[0,1,1,0],[0,-1,1,0],[0,1,0,-1]]})");
  const Transform t = transform_from_json(j);
  EXPECT_TRUE(verify(t));
  EXPECT_TRUE(t.points().empty());
  // Written back and read again: the scaling it lacks was written as "D1": [], which could not be read.
  const Transform back = transform_from_json(json::parse(to_json(t).dump()));
  EXPECT_EQ(back.AT(), t.AT());
  EXPECT_EQ(back.G(), t.G());
  EXPECT_EQ(back.BT(), t.BT());
  EXPECT_EQ(back.scaling().convention, "unknown");
  EXPECT_TRUE(back.scaling().d1.empty());
  // With points but no scaling: wincnn matrices, which all-ones diagonals written in its place would
  // contradict.
  json with_points = json::parse(to_json(Transform::construct({2, 3}, parse_points("0,±1,inf"))).dump());
  with_points.erase("scaling");
  const Transform p = transform_from_json(with_points);
  const Transform p_back = transform_from_json(json::parse(to_json(p).dump()));
  EXPECT_EQ(p_back.points(), p.points());
  EXPECT_EQ(p_back.G(), p.G());
}

TEST(TransformJson, BadFilesNameTheProblem) {
  const json good = to_json(Transform::construct({2, 3}, parse_points("0,±1,inf")));
  json j = good;
  j.erase("BT");
  EXPECT_NE(error_of(j).find("no \"BT\" key"), std::string::npos);
  j = good;
  j["G"].erase(1);
  EXPECT_NE(error_of(j).find("\"G\" has 3 rows"), std::string::npos);
  j = good;
  j["AT"][0].push_back("1");
  EXPECT_NE(error_of(j).find("row 0 has 5 entries"), std::string::npos);
  j = good;
  j["BT"][1][2] = 0.5;
  EXPECT_NE(error_of(j).find("BT[1][2] is the JSON number"), std::string::npos);
  j = good;
  j["BT"][1][2] = "pi";
  EXPECT_NE(error_of(j).find("BT[1][2]"), std::string::npos);
  j = good;
  j["G"][0][0] = "1/0";
  EXPECT_NE(error_of(j).find("zero denominator"), std::string::npos);
  j = good;
  j["m"] = "two";
  EXPECT_NE(error_of(j).find("\"m\" must be an integer"), std::string::npos);
  j = good;
  j["m"] = 40;
  EXPECT_FALSE(error_of(j).empty());
  j = good;
  j["points"] = {"0", "1", "1", "inf"};
  EXPECT_NE(error_of(j).find("duplicate"), std::string::npos);
  j = good;
  j["n"] = 5;
  EXPECT_NE(error_of(j).find("m + r - 1 = 4"), std::string::npos);
  j = good;
  j["version"] = 99;  // a later format: refused, not read as this one (it was accepted)
  EXPECT_NE(error_of(j).find("\"version\" is 99; this nova reads version 1"), std::string::npos);
  j = good;
  j["format"] = "nova-catalogue";
  EXPECT_NE(error_of(j).find("not \"nova-transform\""), std::string::npos);
  EXPECT_FALSE(error_of(json::array()).empty());
}

// nlohmann's is_number_integer() holds for unsigned numbers too: 2^64 - 1 was read as -1, so an entry -1
// written that way verified, and "m" of 2^64 - 1 was reported as -1.
TEST(TransformJson, UnsignedNumbersAboveLongLongAreReadAsTheyAre) {
  const json good = to_json(Transform::construct({2, 3}, parse_points("0,±1,inf")));
  ASSERT_EQ(good["AT"][1][2], "-1");
  json j = good;
  j.erase("points");
  j["AT"][1][2] = 18446744073709551615ull;
  const Transform t = transform_from_json(j);
  EXPECT_EQ(t.AT()(1, 2), Rational(mpz_class("18446744073709551615")));
  EXPECT_FALSE(verify(t));
  j = good;
  j["AT"][1][1] = 1;  // an ordinary number still reads
  EXPECT_TRUE(verify(transform_from_json(j)));
  j = good;
  j["m"] = 18446744073709551615ull;
  EXPECT_NE(error_of(j).find("\"m\" = 18446744073709551615 is out of range"), std::string::npos)
      << error_of(j);
}

TEST(TransformJson, PointsAndScalingMustBeTheMatricesOwn) {
  // The matrices of {0, ±1, ±1/2, inf} under the points {0, ±1, ±2, inf}: from_json took the file's word for
  // them, verify() passed (the matrices are right), and analysis, rescaling and the C++ header described
  // points the matrices do not have (kappa_2(V) 42.47 instead of 23.53).
  const Transform half = Transform::construct({4, 3}, parse_points("0,±1,±1/2,inf"));
  json j = to_json(half);
  j["points"] = {"0", "1", "-1", "2", "-2", "inf"};
  EXPECT_NE(error_of(j).find("do not match the matrices: AT column[3] is not a multiple"), std::string::npos)
      << error_of(j);
  j["points"] = {"0", "1", "-1", "-1/2", "1/2", "inf"};  // the right points in another order
  EXPECT_NE(error_of(j).find("do not match"), std::string::npos);
  j["points"] = {"0", "1", "-1", "1/2", "-1/2", "7"};  // infinity's column under a finite point
  EXPECT_NE(error_of(j).find("AT column line 5 is zero where the reference is not"), std::string::npos)
      << error_of(j);
  // A scaling given beside them must be the matrices' factors.
  j = to_json(half);
  j["scaling"]["D1"][2] = "3";
  EXPECT_NE(error_of(j).find("the scaling does not match the matrices at point 2 (-1)"), std::string::npos)
      << error_of(j);
  // The convention's name must fit the factors too (wincnn's matrices labelled lagrange were reported and
  // measured as lagrange); an unknown name is refused, custom names none.
  j = to_json(half);
  j["scaling"]["convention"] = "lagrange";
  EXPECT_NE(error_of(j).find("not scaled as the convention 'lagrange' says"), std::string::npos)
      << error_of(j);
  j["scaling"]["convention"] = "balanced";
  EXPECT_NE(error_of(j).find("unknown scaling convention 'balanced'"), std::string::npos) << error_of(j);
  j["scaling"]["convention"] = "custom";
  EXPECT_EQ(error_of(j), "");
  j = to_json(Transform::construct({4, 3}, parse_points("0,±1,±1/2,inf"), ScalingSpec::parse("lagrange")));
  j["scaling"]["convention"] = "wincnn";
  EXPECT_NE(error_of(j).find("not scaled as the convention 'wincnn' says"), std::string::npos) << error_of(j);
  // Every convention, and a custom scaling, loads back with its points and scaling checked.
  for (const char* scaling : {"wincnn", "lagrange", "d1=1,2,1/2,1,-3,4;d2=1,-1,1,3,1,1/8"}) {
    const Transform t =
        Transform::construct({4, 3}, parse_points("0,±1,±1/2,inf"), ScalingSpec::parse(scaling));
    EXPECT_EQ(error_of(json::parse(to_json(t).dump())), "") << scaling;
  }
  // Without points (a hand-written file) nothing is claimed and nothing is checked.
  j = to_json(half);
  j.erase("points");
  j.erase("scaling");
  EXPECT_EQ(error_of(j), "");
}

// The exporters given the result of verify(t) write what they write when they verify themselves, and
// state the result they are given: a failed one is reported as failed (with its reason in the text).
TEST(TransformExport, GivenVerificationIsTheOneStated) {
  const Transform t =
      Transform::construct(TileSize{4, 3}, parse_points("0,1,-1,2,-2,inf"), ScalingSpec::parse("wincnn"));
  const Verification ok = verify(t);
  ASSERT_TRUE(ok);
  EXPECT_EQ(to_json(t, ok), to_json(t));
  EXPECT_EQ(to_text(t, ok), to_text(t));
  EXPECT_EQ(to_cpp_header(t, "f43", ok), to_cpp_header(t, "f43"));
  const Verification failed{false, "a reason of the caller's"};
  EXPECT_EQ(to_json(t, failed)["verified"], false);
  EXPECT_NE(to_text(t, failed).find("verification FAILED: a reason of the caller's"), std::string::npos);
  EXPECT_NE(to_cpp_header(t, "f43", failed).find("FAILED exact verification"), std::string::npos);
}

TEST(TransformFiles, UnreadableAndUnwritablePaths) {
  EXPECT_THROW(load_transform("/nonexistent/dir/t.json"), Error);
  EXPECT_THROW(write_text_file("/nonexistent/dir/t.json", "x"), Error);
  const std::string dir = testing::temp_dir();
  write_text_file(dir + "/bad.json", "{not json");
  try {
    load_transform(dir + "/bad.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos);
  }
}

TEST(CppHeader, HoldsExactCommentsAndNearestFloats) {
  const Transform t = Transform::construct({6, 3}, parse_points("0,±1,±2,±1/2,inf"));
  const std::string h = to_cpp_header(t, "f63");
  EXPECT_NE(h.find("namespace f63"), std::string::npos);
  EXPECT_NE(h.find("inline constexpr double BT[8][8]"), std::string::npos);
  EXPECT_NE(h.find("inline constexpr float G_f32[8][3]"), std::string::npos);
  EXPECT_NE(h.find("/* -21/4 */"), std::string::npos);
  EXPECT_NE(h.find("-0x1.5p+2 /* -21/4 */"), std::string::npos);  // -21/4 = -5.25 = -0x1.5p+2 exactly
  EXPECT_NE(h.find("Verified exactly"), std::string::npos);
  // A namespace name that would not compile, and values beyond float's range (inff), are refused.
  EXPECT_THROW(to_cpp_header(t, "a-b"), Error);
  EXPECT_THROW(to_cpp_header(t, "for"), Error);
  EXPECT_TRUE(is_cpp_identifier("_f63"));
  EXPECT_FALSE(is_cpp_identifier("9f"));
  EXPECT_THROW(to_cpp_header(Transform::construct({4, 3}, parse_points("0,±1e-50,±1e40,inf"))), Error);
  // Below it too: a nonzero entry 1e-75 under lagrange scaling was written as 0x0p+0f, silently.
  const Transform tiny =
      Transform::construct({2, 3}, parse_points("0,1e-25,1,inf"), ScalingSpec::parse("lagrange"));
  try {
    to_cpp_header(tiny);
    ADD_FAILURE() << "an entry below float's range was written as 0";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("beyond float's range"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nova
