// Precision models: presets are valid and documented, JSON round-trips, bad models are errors.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "common/cli_runner.hpp"
#include "common/error_message.hpp"
#include "nova/error.hpp"
#include "nova/numerics/precision_model.hpp"

namespace nova {
namespace {

using testing::error_of;

TEST(PrecisionModel, PresetsAreValidUniqueAndDocumented) {
  const std::string doc = [] {
    std::ifstream in(std::string(NOVA_SOURCE_DIR) + "/docs/precision-models.md");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  std::set<std::string> names;
  for (const auto& m : precision_presets()) {
    EXPECT_NO_THROW(m.validate()) << m.name;
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_FALSE(m.description.empty()) << m.name;
    EXPECT_NE(doc.find("`" + m.name + "`"), std::string::npos) << m.name << " is not in docs/precision-models.md";
  }
  for (const char* required : {"fp64", "fp32", "fp16-storage", "fp16-fma", "fp16-all", "bf16-storage", "bf16-all",
                               "fp8-e4m3-storage", "int8-tensor", "int8-channel", "int8-tap"})
    EXPECT_TRUE(names.count(required)) << required;
}

TEST(PrecisionModel, DocumentedExampleParses) {
  std::ifstream in(std::string(NOVA_SOURCE_DIR) + "/docs/precision-models.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), {});
  const std::size_t start = doc.find("```json\n");
  ASSERT_NE(start, std::string::npos);
  const std::size_t end = doc.find("```", start + 8);
  const PrecisionModel m = precision_model_from_json(nlohmann::json::parse(doc.substr(start + 8, end - start - 8)));
  EXPECT_EQ(m.filter_transform.granularity, Granularity::kTap);
  EXPECT_EQ(m.output.overflow, Overflow::kSaturate);
}

TEST(PrecisionModel, JsonRoundTripsEveryPreset) {
  for (const auto& m : precision_presets()) {
    const PrecisionModel back = precision_model_from_json(to_json(m));
    EXPECT_EQ(to_json(back), to_json(m)) << m.name;
    EXPECT_EQ(back.input_transform, m.input_transform) << m.name;
    EXPECT_EQ(back.accumulate, m.accumulate) << m.name;
    EXPECT_EQ(back.accumulate_chunk, m.accumulate_chunk) << m.name;
    EXPECT_EQ(back.chunk_accumulate, m.chunk_accumulate) << m.name;
  }
}

TEST(PrecisionModel, ChunkedAccumulationFieldsAndRules) {
  const PrecisionModel fma = precision_preset("fp16-fma");
  EXPECT_EQ(fma.accumulate, Format::kFp16);
  EXPECT_EQ(fma.product, Format::kFp64);  // exact product, one rounding per step: an FMA
  EXPECT_GT(fma.accumulate_chunk, 0);
  EXPECT_EQ(fma.chunk_accumulate, Format::kFp32);
  EXPECT_NE(describe(fma).find("chunks of " + std::to_string(fma.accumulate_chunk)), std::string::npos) << describe(fma);
  const nlohmann::json j = to_json(fma);
  EXPECT_EQ(j.at("accumulate_chunk"), fma.accumulate_chunk);
  EXPECT_EQ(j.at("chunk_accumulate"), "fp32");
  EXPECT_FALSE(to_json(precision_preset("fp16-storage")).contains("accumulate_chunk"));  // unchanged JSON
  const PrecisionModel m = precision_model_from_json(nlohmann::json::parse(
      R"({"accumulate": "bf16", "accumulate_chunk": 7, "chunk_accumulate": "fp16"})"));
  EXPECT_EQ(m.accumulate_chunk, 7);
  EXPECT_EQ(m.chunk_accumulate, Format::kFp16);
  EXPECT_NE(error_of([] { precision_model_from_json(nlohmann::json::parse(R"({"accumulate_chunk": -2})")); })
                .find("accumulate_chunk"),
            std::string::npos);
  EXPECT_NE(error_of([] { precision_model_from_json(nlohmann::json::parse(R"({"accumulate_chunk": 1.5})")); })
                .find("integer"),
            std::string::npos);
  EXPECT_NE(error_of([] { precision_model_from_json(nlohmann::json::parse(R"({"chunk_accumulate": "fp32"})")); })
                .find("needs accumulate_chunk"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              precision_model_from_json(nlohmann::json::parse(
                  R"({"accumulate_chunk": 4, "chunk_accumulate": "int8", "accumulate": "fp16"})"));
            }).find("chunk_accumulate"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              precision_model_from_json(nlohmann::json::parse(
                  R"({"filter_transform": "int8", "input_transform": "int8", "accumulate": "int32", "accumulate_chunk": 4})"));
            }).find("accumulate_chunk"),
            std::string::npos);
  // A length beyond int was wrapped: 2^32 + 5 read as chunks of 5, -2^32 + 4 as 4, 2^63 as 0.
  for (const char* big : {"4294967301", "-4294967292", "9223372036854775808", "2147483648"}) {
    const std::string text =
        std::string(R"({"accumulate": "fp16", "chunk_accumulate": "fp32", "accumulate_chunk": )") + big + "}";
    EXPECT_NE(error_of([&] {
                precision_model_from_json(nlohmann::json::parse(text));
              }).find(std::string("'accumulate_chunk' ") + big + " is out of range"),
              std::string::npos)
        << big;
  }
  EXPECT_EQ(precision_model_from_json(
                nlohmann::json::parse(
                    R"({"accumulate": "fp16", "chunk_accumulate": "fp32", "accumulate_chunk": 2147483647})"))
                .accumulate_chunk,
            2147483647);
}

TEST(PrecisionModel, UserModelDefaultsToFp64AndParsesStages) {
  const auto j = nlohmann::json::parse(R"({"name": "mine", "input_transform": {"format": "int8", "granularity": "tap"},
      "filter_transform": "int8", "accumulate": "int32", "transform_arith": "fp32"})");
  const PrecisionModel m = precision_model_from_json(j);
  EXPECT_EQ(m.name, "mine");
  EXPECT_EQ(m.input_transform.format, Format::kInt8);
  EXPECT_EQ(m.input_transform.granularity, Granularity::kTap);
  EXPECT_EQ(m.filter_transform.granularity, Granularity::kTensor);
  EXPECT_EQ(m.output.format, Format::kFp64);
  EXPECT_EQ(m.transform_arith, Format::kFp32);
  EXPECT_DOUBLE_EQ(m.operand_unit_roundoff(), 0.5 / 127);
}

TEST(PrecisionModel, BadModelsGiveClearErrors) {
  EXPECT_NE(error_of([] { precision_preset("fp17-storage"); }).find("int8-tap"), std::string::npos);
  EXPECT_NE(error_of([] { precision_model_from_json(nlohmann::json::parse(R"({"inptu": "fp16"})")); }).find("inptu"),
            std::string::npos);
  EXPECT_NE(error_of([] { precision_model_from_json(nlohmann::json::parse(R"({"input": "fp12"})")); }).find("fp12"),
            std::string::npos);
  EXPECT_NE(error_of([] { precision_model_from_json(nlohmann::json::parse(R"({"input": {"granularity": "tap"}})")); })
                .find("format"),
            std::string::npos);
  // Per-tap scales do not exist for a spatial-domain tensor.
  EXPECT_NE(error_of([] {
              precision_model_from_json(nlohmann::json::parse(R"({"input": {"format": "int8", "granularity": "tap"}})"));
            }).find("granularity"),
            std::string::npos);
  // int32 accumulation cannot apply a scale that changes along the input channel.
  EXPECT_NE(error_of([] {
              precision_model_from_json(nlohmann::json::parse(
                  R"({"filter_transform": "int8", "input_transform": {"format": "int8", "granularity": "tile"}, "accumulate": "int32"})"));
            }).find("int32"),
            std::string::npos);
  EXPECT_FALSE(error_of([] { precision_model_from_json(nlohmann::json::parse(R"({"filter_transform": "int8"})")); }).empty());
  EXPECT_FALSE(error_of([] { precision_model_from_json(nlohmann::json::parse(R"({"product": "int8"})")); }).empty());
  EXPECT_FALSE(error_of([] { precision_model_from_json(nlohmann::json::parse(R"([1, 2])")); }).empty());
  EXPECT_FALSE(error_of([] { precision_model_from_json(nlohmann::json::parse(R"({"input": {"format": "fp16", "scheme": "affine", "scaled": true}})")); }).empty());
  // V's power-of-two shift is for floating, unscaled V; a boolean.
  EXPECT_NE(
      error_of([] {
        precision_model_from_json(nlohmann::json::parse(
            R"({"filter_transform": "int8", "input_transform": "int8", "accumulate": "int32", "v_shift": true})"));
      }).find("v_shift"),
      std::string::npos);
  EXPECT_NE(
      error_of([] {
        precision_model_from_json(nlohmann::json::parse(R"({"input_transform": "fp16", "v_shift": 1})"));
      }).find("true or false"),
      std::string::npos);
}

TEST(PrecisionModel, VShiftParsesAndIsWrittenOnlyWhenSet) {
  const PrecisionModel m =
      precision_model_from_json(nlohmann::json::parse(R"({"input_transform": "fp16", "v_shift": true})"));
  EXPECT_TRUE(m.v_shift);
  EXPECT_EQ(to_json(m).at("v_shift"), true);
  EXPECT_FALSE(to_json(precision_preset("fp16-storage")).contains("v_shift"));
  EXPECT_TRUE(precision_preset("fp16-storage-shifted").v_shift);
  EXPECT_NE(describe(precision_preset("fp16-fma-shifted")).find("shifted by a power of two"),
            std::string::npos);
}

TEST(PrecisionModel, LoadsPresetsAndFiles) {
  EXPECT_EQ(load_precision_model("int8-tap").name, "int8-tap");
  const std::string dir = testing::temp_dir();
  {
    std::ofstream(dir + "/good.json") << R"({"name": "u-v-fp16", "filter_transform": "fp16", "input_transform": "fp16"})";
    std::ofstream(dir + "/bad.json") << R"({"name": "broken", )";
  }
  EXPECT_EQ(load_precision_model(dir + "/good.json").name, "u-v-fp16");
  const std::string bad = error_of([&] { load_precision_model(dir + "/bad.json"); });
  EXPECT_NE(bad.find("not valid JSON"), std::string::npos) << bad;
  EXPECT_NE(error_of([&] { load_precision_model(dir + "/missing.json"); }).find("does not exist"), std::string::npos);
  EXPECT_NE(describe(precision_preset("fp16-storage")).find("fp16"), std::string::npos);
}

}  // namespace
}  // namespace nova
