// Importing the quantization ops: each opset's attributes (per tensor at
// 10, "axis" from 13, "block_size" and "output_dtype" from 21), what runs
// (values checked by hand), bad nodes; and three quantized models laid out
// as ONNX Runtime's quantization tools write them (QDQ, QOperator, dynamic;
// testdata/quantized/make_quantized_models.py) against ONNX Runtime's own
// outputs on them.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/npy.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using onnx_testing::AddInitializer;
using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::FindAttr;
using onnx_testing::FindOp;
using onnx_testing::FloatProto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::RunNet;
using onnx_testing::SetInt;
using onnx_testing::Values;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A UINT8 or INT8 tensor with its elements in int32_data.
onnx::TensorProto IntProto(const std::string& name, int32_t type,
                           const std::vector<int64_t>& dims,
                           const std::vector<int32_t>& values) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(type);
  for (int64_t d : dims) proto.add_dims(d);
  for (int32_t v : values) proto.add_int32_data(v);
  return proto;
}

// x [2, 2] -> QuantizeLinear(scale [2] along `axis`, int8 zero points).
onnx::ModelProto QuantizeModel(int64_t opset, bool with_axis) {
  onnx::ModelProto model = Model(opset);
  AddInput(model, "x", {2, 2});
  AddInitializer(model, FloatProto("s", {2}, {1, 4}));
  AddInitializer(model, IntProto("z", onnx::TensorProto::INT8, {2}, {0, -10}));
  onnx::NodeProto* node =
      AddNode(model, "QuantizeLinear", {"x", "s", "z"}, {"y"});
  if (with_axis) SetInt(node, "axis", 0);
  AddOutput(model, "y");
  return model;
}

TEST(QuantizationImportTest, QuantizeLinearPerAxisFromOpset13) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(QuantizeModel(13, true));
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({2, 2}, {3, -2, 6, 200})}});
  ASSERT_TRUE(out.ok()) << out.status();
  // Row 0 by 1 (zero point 0), row 1 by 4 (zero point -10): 6 / 4 = 1.5
  // rounds to 2; 200 / 4 - 10 = 40.
  EXPECT_EQ((*out)[0].dtype(), kInt8);
  EXPECT_THAT(Values<int8_t>((*out)[0]), ElementsAre(3, -2, -8, 40));
}

TEST(QuantizationImportTest, Opset10IsPerTensorOnly) {
  // Opset 10 has no "axis": a per-axis scale is refused, naming the shapes.
  absl::StatusOr<ImportedModel> imported = ImportOnnx(QuantizeModel(10, false));
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("input 1 (the scale) has shape [2]: before opset 13 "
                        "the scale is one element (per tensor)"));
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("QuantizeLinear"));
}

TEST(QuantizationImportTest, BlockSizeAndOutputDtypeFromOpset21) {
  onnx::ModelProto model = Model(21);
  AddInput(model, "x", {1, 4});
  AddInitializer(model, FloatProto("s", {1, 2}, {1, 2}));
  onnx::NodeProto* node = AddNode(model, "QuantizeLinear", {"x", "s"}, {"y"});
  SetInt(node, "axis", 1);
  SetInt(node, "block_size", 2);
  SetInt(node, "output_dtype", onnx::TensorProto::INT8);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* op = FindOp(*imported, "quantize_linear");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(FindAttr(*op, "out_dtype")->i(), kInt8);
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({1, 4}, {-300, 2, 5, 7})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int8_t>((*out)[0]), ElementsAre(-128, 2, 2, 4));

  // int16 saturates at its own limits.
  onnx::ModelProto int16 = Model(21);
  AddInput(int16, "x", {1, 4});
  AddInitializer(int16, FloatProto("s", {}, {1}));
  SetInt(AddNode(int16, "QuantizeLinear", {"x", "s"}, {"y"}), "output_dtype",
         onnx::TensorProto::INT16);
  AddOutput(int16, "y");
  imported = ImportOnnx(int16);
  ASSERT_TRUE(imported.ok()) << imported.status();
  out = RunNet(*imported,
               {{"x", MakeTensor<float>({1, 4}, {-300, 2.5f, 3.5f, 70000})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int16_t>((*out)[0]), ElementsAre(-300, 2, 4, 32767));

  // A type scopeflow does not quantize to is refused as unsupported.
  onnx::ModelProto int32 = Model(21);
  AddInput(int32, "x", {1, 4});
  AddInitializer(int32, FloatProto("s", {}, {1}));
  SetInt(AddNode(int32, "QuantizeLinear", {"x", "s"}, {"y"}), "output_dtype",
         onnx::TensorProto::INT32);
  AddOutput(int32, "y");
  imported = ImportOnnx(int32);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("QuantizeLinear to int32"));
}

TEST(QuantizationImportTest, OutputDtypeMustAgreeWithTheZeroPoint) {
  onnx::ModelProto model = Model(21);
  AddInput(model, "x", {2});
  AddInitializer(model, FloatProto("s", {}, {1}));
  AddInitializer(model, IntProto("z", onnx::TensorProto::UINT8, {}, {3}));
  onnx::NodeProto* node =
      AddNode(model, "QuantizeLinear", {"x", "s", "z"}, {"y"});
  SetInt(node, "output_dtype", onnx::TensorProto::INT8);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("attribute \"output_dtype\" is int8 but the zero "
                        "point (input 2) is uint8"));
}

TEST(QuantizationImportTest, DequantizeZeroPointOfAnotherDtype) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2}, onnx::TensorProto::UINT8);
  AddInitializer(model, FloatProto("s", {}, {0.5f}));
  AddInitializer(model, IntProto("z", onnx::TensorProto::INT8, {}, {1}));
  AddNode(model, "DequantizeLinear", {"x", "s", "z"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("the zero point must have the dtype of input \"X\""));
}

TEST(QuantizationImportTest, ConvIntegerSameUpperPadding) {
  // A 2x2 all-ones filter over x - 1 of [[0, 1], [2, 3]] padded at the end
  // (SAME_UPPER): window sums [[6, 4], [5, 3]].
  onnx::ModelProto model = Model(10);
  AddInput(model, "x", {1, 1, 2, 2}, onnx::TensorProto::UINT8);
  AddInitializer(model, IntProto("w", onnx::TensorProto::UINT8, {1, 1, 2, 2},
                                 {1, 1, 1, 1}));
  AddInitializer(model, IntProto("xz", onnx::TensorProto::UINT8, {}, {1}));
  onnx::NodeProto* node =
      AddNode(model, "ConvInteger", {"x", "w", "xz"}, {"y"});
  onnx_testing::SetString(node, "auto_pad", "SAME_UPPER");
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out = RunNet(*imported,
                    {{"x", MakeTensor<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(6, 4, 5, 3));
}

// --- The models of testdata/quantized against ONNX Runtime.

constexpr char kDir[] = "framework/onnx/testdata/quantized/";

struct Reference {
  const char* model;
  std::vector<const char*> outputs;
};

// Runs `model` on its saved input and returns its outputs with ONNX
// Runtime's.
void RunAgainstOnnxRuntime(const Reference& ref, std::vector<Tensor>& ours,
                           std::vector<Tensor>& theirs) {
  const std::string base = std::string(kDir) + ref.model;
  absl::StatusOr<onnx::ModelProto> model = ReadOnnxModel(base + ".onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<ImportedModel> imported = ImportOnnx(*model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<Tensor> x = ReadNpy(base + ".input.x.npy");
  ASSERT_TRUE(x.ok()) << x.status();
  absl::StatusOr<std::vector<Tensor>> out = RunNet(*imported, {{"x", *x}});
  ASSERT_TRUE(out.ok()) << out.status();
  ours = *out;
  for (const char* name : ref.outputs) {
    absl::StatusOr<Tensor> expected = ReadNpy(base + ".ort." + name + ".npy");
    ASSERT_TRUE(expected.ok()) << expected.status();
    theirs.push_back(*expected);
  }
  ASSERT_EQ(ours.size(), theirs.size());
}

// Integer outputs must be equal; float ones within `tolerance` of ONNX
// Runtime's, relative to the largest |value|.
void ExpectMatches(const Tensor& ours, const Tensor& theirs, double tolerance,
                   const std::string& what) {
  ASSERT_EQ(ours.dtype(), theirs.dtype()) << what;
  ASSERT_EQ(ours.dims(), theirs.dims()) << what;
  if (ours.dtype() == kFloat32) {
    double largest = 0, worst = 0;
    for (int64_t i = 0; i < ours.numel(); ++i) {
      largest = std::max(largest, std::fabs(double{theirs.data<float>()[i]}));
      worst = std::max(worst, std::fabs(double{ours.data<float>()[i]} -
                                        theirs.data<float>()[i]));
    }
    EXPECT_LE(worst, tolerance * largest) << what;
    return;
  }
  ASSERT_EQ(ours.dtype(), kUInt8) << what;
  EXPECT_EQ(Values<uint8_t>(ours), Values<uint8_t>(theirs)) << what;
}

TEST(QuantizedModelsTest, QdqCnnMatchesOnnxRuntime) {
  std::vector<Tensor> ours, theirs;
  RunAgainstOnnxRuntime({"qdq_cnn", {"y"}}, ours, theirs);
  ASSERT_FALSE(HasFailure());
  ExpectMatches(ours[0], theirs[0], 1e-5, "y");
}

TEST(QuantizedModelsTest, QOperatorCnnMatchesOnnxRuntime) {
  std::vector<Tensor> ours, theirs;
  RunAgainstOnnxRuntime({"qoperator_cnn", {"y", "yq", "cq"}}, ours, theirs);
  ASSERT_FALSE(HasFailure());
  ExpectMatches(ours[0], theirs[0], 1e-6, "y");
  ExpectMatches(ours[1], theirs[1], 0, "yq");
  ExpectMatches(ours[2], theirs[2], 0, "cq");
}

TEST(QuantizedModelsTest, DynamicMlpMatchesOnnxRuntime) {
  std::vector<Tensor> ours, theirs;
  RunAgainstOnnxRuntime({"dynamic_mlp", {"y", "z", "xq"}}, ours, theirs);
  ASSERT_FALSE(HasFailure());
  ExpectMatches(ours[0], theirs[0], 1e-6, "y");
  ExpectMatches(ours[1], theirs[1], 1e-6, "z");
  ExpectMatches(ours[2], theirs[2], 0, "xq");
}

}  // namespace
}  // namespace scopeflow
