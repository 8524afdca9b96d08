// Importing Range, CumSum, OneHot, Trilu, DepthToSpace, SpaceToDepth and
// Einsum: the ops they map to, the attributes and inputs per opset, and
// what runs.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/bfloat16.h"
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
using onnx_testing::Int64Proto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::OpTypes;
using onnx_testing::RunNet;
using onnx_testing::SetInt;
using onnx_testing::SetString;
using onnx_testing::Values;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TensorOpsImportTest, RangeFromFedScalars) {
  onnx::ModelProto model = Model(11);
  AddInput(model, "start", {}, onnx::TensorProto::INT64);
  AddInput(model, "limit", {}, onnx::TensorProto::INT64);
  AddInitializer(model, Int64Proto("delta", {}, {2}));
  AddNode(model, "Range", {"start", "limit", "delta"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("range"));
  auto out = RunNet(*imported, {{"start", MakeTensor<int64_t>({}, {1})},
                                {"limit", MakeTensor<int64_t>({}, {8})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(1, 3, 5, 7));
  // The length follows the fed values from run to run.
  out = RunNet(*imported, {{"start", MakeTensor<int64_t>({}, {0})},
                           {"limit", MakeTensor<int64_t>({}, {3})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(0, 2));
}

// Opset 27's stash_type (1 by default) computes bfloat16 in float32.
TEST(TensorOpsImportTest, RangeOfBFloat16IsComputedInFloat32) {
  onnx::ModelProto model = Model(27);
  for (const char* name : {"start", "limit", "delta"}) {
    AddInput(model, name, {}, onnx::TensorProto::BFLOAT16);
  }
  AddNode(model, "Range", {"start", "limit", "delta"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported),
              ElementsAre("cast", "cast", "cast", "range", "cast"));
  auto scalar = [](float v) {
    return MakeTensor<bfloat16>({}, {FloatToBFloat16(v)});
  };
  auto out = RunNet(*imported, {{"start", scalar(1)},
                                {"limit", scalar(5)},
                                {"delta", scalar(2)}});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), kBFloat16);
  ASSERT_EQ((*out)[0].numel(), 2);
  EXPECT_EQ(BFloat16ToFloat((*out)[0].data<bfloat16>()[0]), 1.0f);
  EXPECT_EQ(BFloat16ToFloat((*out)[0].data<bfloat16>()[1]), 3.0f);
}

TEST(TensorOpsImportTest, RangeBeforeOpset11IsRejected) {
  onnx::ModelProto model = Model(10);
  AddInput(model, "s", {}, onnx::TensorProto::FLOAT);
  AddNode(model, "Range", {"s", "s", "s"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("ONNX Range exists from opset 11 on: the model "
                        "imports opset 10"));
}

TEST(TensorOpsImportTest, CumSumReverseExclusiveWithFedAxis) {
  onnx::ModelProto model = Model(14);
  AddInput(model, "x", {2, 3});
  AddInput(model, "axis", {}, onnx::TensorProto::INT32);
  onnx::NodeProto* node = AddNode(model, "CumSum", {"x", "axis"}, {"y"});
  SetInt(node, "exclusive", 1);
  SetInt(node, "reverse", 1);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("cumsum"));
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunNet(*imported,
                    {{"x", x}, {"axis", MakeTensor<int32_t>({}, {1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(5, 3, 0, 11, 6, 0));
  out = RunNet(*imported, {{"x", x}, {"axis", MakeTensor<int32_t>({}, {0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(4, 5, 6, 0, 0, 0));
}

TEST(TensorOpsImportTest, OneHotWithConstantDepth) {
  onnx::ModelProto model = Model(11);
  AddInput(model, "i", {3}, onnx::TensorProto::INT64);
  AddInitializer(model, Int64Proto("depth", {}, {4}));
  AddInitializer(model, Int64Proto("values", {2}, {7, 9}));
  SetInt(AddNode(model, "OneHot", {"i", "depth", "values"}, {"y"}), "axis", 0);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("one_hot"));
  auto out =
      RunNet(*imported, {{"i", MakeTensor<int64_t>({3}, {3, -4, 1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(4, 3));
  EXPECT_THAT(Values<int64_t>((*out)[0]),
              ElementsAre(7, 9, 7, 7, 7, 9, 7, 7, 7, 9, 7, 7));
}

TEST(TensorOpsImportTest, TriluLowerWithAndWithoutK) {
  onnx::ModelProto model = Model(14);
  AddInput(model, "x", {2, 3});
  AddInitializer(model, Int64Proto("k", {}, {1}));
  SetInt(AddNode(model, "Trilu", {"x", "k"}, {"lower"}), "upper", 0);
  AddNode(model, "Trilu", {"x"}, {"upper"});
  AddOutput(model, "lower");
  AddOutput(model, "upper");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 0, 4, 5, 6));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(1, 2, 3, 0, 5, 6));
}

TEST(TensorOpsImportTest, DepthToSpaceModesAndSpaceToDepthRoundTrip) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {1, 4, 1, 2});
  onnx::NodeProto* crd = AddNode(model, "DepthToSpace", {"x"}, {"crd"});
  SetInt(crd, "blocksize", 2);
  SetString(crd, "mode", "CRD");
  SetInt(AddNode(model, "DepthToSpace", {"x"}, {"dcr"}), "blocksize", 2);
  SetInt(AddNode(model, "SpaceToDepth", {"dcr"}, {"back"}), "blocksize", 2);
  for (const char* out : {"crd", "dcr", "back"}) AddOutput(model, out);
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const Tensor x = MakeTensor<float>({1, 4, 1, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto out = RunNet(*imported, {{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 2, 4));
  // CRD: channel i * 2 + j fills pixel (i, j); DCR the same with one
  // output channel.
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 2, 1, 3, 4, 6, 5, 7));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(0, 2, 1, 3, 4, 6, 5, 7));
  EXPECT_EQ(Values<float>((*out)[2]), Values<float>(x));
}

TEST(TensorOpsImportTest, DepthToSpaceModeBeforeOpset11IsRejected) {
  onnx::ModelProto model = Model(10);
  AddInput(model, "x", {1, 4, 1, 1});
  onnx::NodeProto* node = AddNode(model, "DepthToSpace", {"x"}, {"y"});
  SetInt(node, "blocksize", 2);
  SetString(node, "mode", "CRD");
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()), HasSubstr("mode"));
}

TEST(TensorOpsImportTest, EinsumAttentionScores) {
  onnx::ModelProto model = Model(12);
  AddInput(model, "q", {1, 1, 2, 2});
  AddInput(model, "k", {1, 1, 2, 2});
  SetString(AddNode(model, "Einsum", {"q", "k"}, {"s"}), "equation",
            "bhqd,bhkd->bhqk");
  AddOutput(model, "s");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("einsum"));
  auto out = RunNet(*imported,
                    {{"q", MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4})},
                     {"k", MakeTensor<float>({1, 1, 2, 2}, {5, 6, 7, 8})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(17, 23, 39, 53));
}

TEST(TensorOpsImportTest, MalformedEinsumNamesTheEquation) {
  onnx::ModelProto model = Model(12);
  AddInput(model, "a", {2, 3});
  SetString(AddNode(model, "Einsum", {"a"}, {"y"}), "equation", "ij->k");
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("output label 'k' is in no input term"));
}

TEST(TensorOpsImportTest, WindowsOfAFedLength) {
  onnx::ModelProto model = Model(17);
  AddInput(model, "n", {}, onnx::TensorProto::INT64);
  onnx::NodeProto* node = AddNode(model, "HannWindow", {"n"}, {"y"});
  SetInt(node, "periodic", 0);
  SetInt(node, "output_datatype", onnx::TensorProto::DOUBLE);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("window"));
  // Symmetric, M = 2: 0.5 - 0.5 cos(pi n) = 0, 1, 0.
  auto out = RunNet(*imported, {{"n", MakeTensor<int64_t>({}, {3})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]),
              ElementsAre(DoubleNear(0, 1e-15), DoubleNear(1, 1e-15),
                          DoubleNear(0, 1e-15)));
}

TEST(TensorOpsImportTest, WindowBeforeOpset17IsRejected) {
  onnx::ModelProto model = Model(16);
  AddInput(model, "n", {}, onnx::TensorProto::INT64);
  AddNode(model, "BlackmanWindow", {"n"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("ONNX BlackmanWindow exists from opset 17 on"));
}

}  // namespace
}  // namespace scopeflow
