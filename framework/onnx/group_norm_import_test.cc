// Importing InstanceNormalization and GroupNormalization (opset 18's
// per-group and 21's per-channel scale and bias).
#include <cstdint>
#include <string>
#include <vector>

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
using onnx_testing::FloatProto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::OpTypes;
using onnx_testing::RunNet;
using onnx_testing::SetFloat;
using onnx_testing::SetInt;
using onnx_testing::Values;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(GroupNormImportTest, InstanceNormalization) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {1, 2, 2});
  AddInitializer(model, FloatProto("s", {2}, {2, 3}));
  AddInitializer(model, FloatProto("b", {2}, {0, 1}));
  SetFloat(AddNode(model, "InstanceNormalization", {"x", "s", "b"}, {"y"}),
           "epsilon", 0);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("instance_norm"));
  // Channel 0: mean 2, variance 1; channel 1: mean 4, variance 4.
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({1, 2, 2}, {1, 3, 2, 6})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-2, 2, -2, 4));
}

// One group over x = [1, 1, 3, 3] (mean 2, variance 1): normalized
// [-1, -1, 1, 1].
onnx::ModelProto GroupNormModel(int64_t opset, std::vector<float> scale,
                                std::vector<float> bias) {
  onnx::ModelProto model = Model(opset);
  AddInput(model, "x", {1, 2, 2});
  const int64_t n = static_cast<int64_t>(scale.size());
  AddInitializer(model, FloatProto("s", {n}, scale));
  AddInitializer(model, FloatProto("b", {n}, bias));
  onnx::NodeProto* node =
      AddNode(model, "GroupNormalization", {"x", "s", "b"}, {"y"});
  SetInt(node, "num_groups", 1);
  SetFloat(node, "epsilon", 0);
  AddOutput(model, "y");
  return model;
}

TEST(GroupNormImportTest, Opset18ScalesPerGroupAnd21PerChannel) {
  const Tensor x = MakeTensor<float>({1, 2, 2}, {1, 1, 3, 3});
  absl::StatusOr<ImportedModel> imported =
      ImportOnnx(GroupNormModel(18, {2}, {1}));
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("group_norm"));
  auto out = RunNet(*imported, {{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-1, -1, 3, 3));
  imported = ImportOnnx(GroupNormModel(21, {2, 3}, {0, 1}));
  ASSERT_TRUE(imported.ok()) << imported.status();
  out = RunNet(*imported, {{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-2, -2, 4, 4));
}

TEST(GroupNormImportTest, ScaleOfTheOtherOpsetsFormIsRejected) {
  absl::StatusOr<ImportedModel> imported =
      ImportOnnx(GroupNormModel(18, {2, 3}, {0, 1}));
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("input 1 (\"s\") has 2 values: GroupNormalization "
                        "before opset 21 expects 1, one per group"));
  imported = ImportOnnx(GroupNormModel(21, {2}, {1}));
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("input 1 (\"s\") has 1 values: GroupNormalization "
                        "from opset 21 expects 2, one per channel"));
}

}  // namespace
}  // namespace scopeflow
