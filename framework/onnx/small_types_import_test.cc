// ONNX's sub-byte and exponent-only element types (framework/small_types.h)
// through the importer: packed tensors unpacked to one element per byte,
// their errors, and Cast, CastLike, QuantizeLinear and DequantizeLinear
// with them, against hand-computed values.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_tensor.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using onnx_testing::AddInitializer;
using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::FloatProto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::RunNet;
using onnx_testing::SetInt;
using onnx_testing::SetString;
using onnx_testing::Values;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

onnx::TensorProto RawProto(const std::string& name, int32_t type,
                           const std::vector<int64_t>& dims,
                           std::vector<int> bytes) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(type);
  for (int64_t d : dims) proto.add_dims(d);
  std::string raw;
  for (int b : bytes) raw.push_back(static_cast<char>(b));
  proto.set_raw_data(raw);
  return proto;
}

onnx::TensorProto Int32Proto(const std::string& name, int32_t type,
                             const std::vector<int64_t>& dims,
                             const std::vector<int32_t>& entries) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(type);
  for (int64_t d : dims) proto.add_dims(d);
  for (int32_t v : entries) proto.add_int32_data(v);
  return proto;
}

template <typename T>
std::vector<int> Ints(const Tensor& tensor) {
  std::vector<int> values;
  for (const T& v : Values<T>(tensor)) values.push_back(v.value);
  return values;
}

template <typename T>
std::vector<int> Bits(const Tensor& tensor) {
  std::vector<int> values;
  for (const T& v : Values<T>(tensor)) values.push_back(v.bits);
  return values;
}

std::vector<Tensor> ImportAndRun(const onnx::ModelProto& model,
                                 std::vector<Feed> feeds) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_TRUE(imported.ok()) << imported.status();
  if (!imported.ok()) return {};
  absl::StatusOr<std::vector<Tensor>> out = RunNet(*imported, feeds);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

TEST(SmallTypesImportTest, UnpacksLowBitsFirstWithOddCounts) {
  // -1, 2 | -8 (high nibble of the last byte unused).
  absl::StatusOr<Tensor> int4 = onnx_import::TensorFromOnnx(
      RawProto("w", onnx::TensorProto::INT4, {3}, {0x2f, 0x08}));
  ASSERT_TRUE(int4.ok()) << int4.status();
  EXPECT_EQ(int4->dtype(), kInt4);
  EXPECT_THAT(Ints<qint4>(*int4), ElementsAre(-1, 2, -8));
  absl::StatusOr<Tensor> uint4 = onnx_import::TensorFromOnnx(
      RawProto("w", onnx::TensorProto::UINT4, {3}, {0x2f, 0x08}));
  ASSERT_TRUE(uint4.ok()) << uint4.status();
  EXPECT_THAT(Ints<quint4>(*uint4), ElementsAre(15, 2, 8));
  // int32_data holds a packed byte per entry, as onnx.numpy_helper writes.
  absl::StatusOr<Tensor> uint2 = onnx_import::TensorFromOnnx(
      Int32Proto("z", onnx::TensorProto::UINT2, {5}, {0x39, 0x01}));
  ASSERT_TRUE(uint2.ok()) << uint2.status();
  EXPECT_THAT(Ints<quint2>(*uint2), ElementsAre(1, 2, 3, 0, 1));
  absl::StatusOr<Tensor> int2 = onnx_import::TensorFromOnnx(
      Int32Proto("z", onnx::TensorProto::INT2, {5}, {0x39, 0x01}));
  ASSERT_TRUE(int2.ok()) << int2.status();
  EXPECT_THAT(Ints<qint2>(*int2), ElementsAre(1, -2, -1, 0, 1));
  absl::StatusOr<Tensor> fp4 = onnx_import::TensorFromOnnx(
      RawProto("f", onnx::TensorProto::FLOAT4E2M1, {1}, {0x0e}));
  ASSERT_TRUE(fp4.ok()) << fp4.status();
  EXPECT_THAT(Bits<float4_e2m1>(*fp4), ElementsAre(0x0e));
  // float8e8m0 is a byte an element: raw_data or one per int32_data entry.
  absl::StatusOr<Tensor> e8m0 = onnx_import::TensorFromOnnx(
      Int32Proto("s", onnx::TensorProto::FLOAT8E8M0, {2}, {0x7f, 0xff}));
  ASSERT_TRUE(e8m0.ok()) << e8m0.status();
  EXPECT_THAT(Bits<float8_e8m0>(*e8m0), ElementsAre(0x7f, 0xff));
  absl::StatusOr<Tensor> empty = onnx_import::TensorFromOnnx(
      RawProto("e", onnx::TensorProto::INT4, {0, 3}, {}));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->numel(), 0);
}

TEST(SmallTypesImportTest, PackedSizesAreChecked) {
  absl::Status short_raw =
      onnx_import::TensorFromOnnx(
          RawProto("w", onnx::TensorProto::INT4, {5}, {0x21, 0x43}))
          .status();
  EXPECT_EQ(short_raw.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(short_raw.message()),
              HasSubstr("tensor \"w\": INT4 [5] packs its 5 elements (two per "
                        "byte) into 3 bytes, but the file holds 2"));
  absl::Status long_raw =
      onnx_import::TensorFromOnnx(
          RawProto("w", onnx::TensorProto::UINT2, {5}, {0, 0, 0}))
          .status();
  EXPECT_THAT(std::string(long_raw.message()),
              HasSubstr("tensor \"w\": raw_data holds 3 bytes, but UINT2 [5] "
                        "packs its 5 elements (four per byte) into 2"));
  absl::Status bad_entry =
      onnx_import::TensorFromOnnx(
          Int32Proto("z", onnx::TensorProto::INT4, {2}, {300}))
          .status();
  EXPECT_THAT(std::string(bad_entry.message()),
              HasSubstr("tensor \"z\": int32_data[0] is 300: expected a packed "
                        "byte (0 to 255) of INT4"));
}

TEST(SmallTypesImportTest, CastToAndFromInt4) {
  onnx::ModelProto to_int4 = Model(25);
  AddInput(to_int4, "x", {4});
  SetInt(AddNode(to_int4, "Cast", {"x"}, {"y"}), "to", onnx::TensorProto::INT4);
  AddOutput(to_int4, "y");
  std::vector<Tensor> out =
      ImportAndRun(to_int4, {{"x", MakeTensor<float>({4}, {-9, 8, 2.5f, -1})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Ints<qint4>(out[0]), ElementsAre(7, -8, 2, -1));

  onnx::ModelProto from_uint2 = Model(25);
  AddInput(from_uint2, "x", {3}, onnx::TensorProto::UINT2);
  SetInt(AddNode(from_uint2, "Cast", {"x"}, {"y"}), "to",
         onnx::TensorProto::FLOAT);
  AddOutput(from_uint2, "y");
  out = ImportAndRun(
      from_uint2,
      {{"x", MakeTensor<quint2>({3}, {quint2{3}, quint2{0}, quint2{1}})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Values<float>(out[0]), ElementsAre(3, 0, 1));
}

// CastLike passes "saturate" on, as Cast does: without it a float8 target
// gets NaN (e4m3fn) for values beyond its range.
TEST(SmallTypesImportTest, CastLikeKeepsSaturateAndRoundMode) {
  onnx::ModelProto model = Model(25);
  AddInput(model, "x", {3});
  AddInput(model, "like", {1}, onnx::TensorProto::FLOAT8E4M3FN);
  SetInt(AddNode(model, "CastLike", {"x", "like"}, {"y"}), "saturate", 0);
  AddOutput(model, "y");
  std::vector<Tensor> out =
      ImportAndRun(model, {{"x", MakeTensor<float>({3}, {1000, 1, -500})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Bits<float8_e4m3fn>(out[0]), ElementsAre(0x7f, 0x38, 0xff));

  onnx::ModelProto e8m0 = Model(25);
  AddInput(e8m0, "x", {3});
  AddInput(e8m0, "like", {1}, onnx::TensorProto::FLOAT8E8M0);
  SetString(AddNode(e8m0, "CastLike", {"x", "like"}, {"y"}), "round_mode",
            "down");
  AddOutput(e8m0, "y");
  out = ImportAndRun(e8m0, {{"x", MakeTensor<float>({3}, {3, 1.5f, 0.25f})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Bits<float8_e8m0>(out[0]), ElementsAre(0x80, 0x7f, 0x7d));
}

TEST(SmallTypesImportTest, CastRefusesAnUnknownRoundMode) {
  onnx::ModelProto model = Model(25);
  AddInput(model, "x", {1});
  onnx::NodeProto* node = AddNode(model, "Cast", {"x"}, {"y"});
  SetInt(node, "to", onnx::TensorProto::FLOAT8E8M0);
  SetString(node, "round_mode", "sideways");
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("attribute \"round_mode\" is \"sideways\": expected "
                        "\"up\", \"down\" or \"nearest\""));
}

// QuantizeLinear saturates at int4's own range; DequantizeLinear reads
// packed uint2 with its zero point.
TEST(SmallTypesImportTest, QuantizeToInt4AndDequantizeUInt2) {
  onnx::ModelProto quantize = Model(21);
  AddInput(quantize, "x", {5});
  AddInitializer(quantize, FloatProto("s", {}, {2}));
  AddInitializer(quantize,
                 Int32Proto("z", onnx::TensorProto::INT4, {}, {0x01}));
  AddNode(quantize, "QuantizeLinear", {"x", "s", "z"}, {"y"});
  AddOutput(quantize, "y");
  std::vector<Tensor> out = ImportAndRun(
      quantize, {{"x", MakeTensor<float>({5}, {-30, 3, 5, 7, 100})}});
  ASSERT_EQ(out.size(), 1u);
  // -15 + 1 -> -8; 1.5 -> 2, + 1; 2.5 -> 2, + 1; 3.5 -> 4, + 1; 50 -> 7.
  EXPECT_THAT(Ints<qint4>(out[0]), ElementsAre(-8, 3, 3, 5, 7));

  onnx::ModelProto dequantize = Model(21);
  AddInitializer(dequantize,
                 Int32Proto("x", onnx::TensorProto::UINT2, {4}, {0xe4}));
  AddInitializer(dequantize, FloatProto("s", {}, {2}));
  AddInitializer(dequantize,
                 Int32Proto("z", onnx::TensorProto::UINT2, {}, {0x01}));
  AddNode(dequantize, "DequantizeLinear", {"x", "s", "z"}, {"y"});
  AddOutput(dequantize, "y");
  out = ImportAndRun(dequantize, {});
  ASSERT_EQ(out.size(), 1u);
  // 0xe4 = 0b11100100: 0, 1, 2, 3.
  EXPECT_THAT(Values<float>(out[0]), ElementsAre(-2, 0, 2, 4));
}

}  // namespace
}  // namespace scopeflow
