// Importing RotaryEmbedding: the op and attributes it maps to, and what
// runs.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::FindAttr;
using onnx_testing::FindOp;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::OpTypes;
using onnx_testing::RunNet;
using onnx_testing::SetInt;
using onnx_testing::Values;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RotaryImportTest, ThreeDimensionalInputWithPositionIds) {
  onnx::ModelProto model = Model(23);
  AddInput(model, "x", {1, 2, 4});
  AddInput(model, "cos", {3, 1});
  AddInput(model, "sin", {3, 1});
  AddInput(model, "ids", {1, 2}, onnx::TensorProto::INT64);
  onnx::NodeProto* node =
      AddNode(model, "RotaryEmbedding", {"x", "cos", "sin", "ids"}, {"y"});
  SetInt(node, "num_heads", 2);
  SetInt(node, "interleaved", 1);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("rotary_embedding"));
  const OpDef* op = FindOp(*imported, "rotary_embedding");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(FindAttr(*op, "num_heads")->i(), 2);
  // Row 2 turns a quarter ((a, b) -> (-b, a)), row 0 not at all.
  auto out = RunNet(
      *imported, {{"x", MakeTensor<float>({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})},
                  {"cos", MakeTensor<float>({3, 1}, {1, 0.5, 0})},
                  {"sin", MakeTensor<float>({3, 1}, {0, 0.5, 1})},
                  {"ids", MakeTensor<int64_t>({1, 2}, {2, 0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-2, 1, -4, 3, 5, 6, 7, 8));
}

TEST(RotaryImportTest, BeforeOpset23IsRejected) {
  onnx::ModelProto model = Model(22);
  AddInput(model, "x", {1, 1, 2, 4});
  AddInput(model, "cos", {1, 2, 2});
  AddInput(model, "sin", {1, 2, 2});
  AddNode(model, "RotaryEmbedding", {"x", "cos", "sin"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("ONNX RotaryEmbedding exists from opset 23 on"));
}

}  // namespace
}  // namespace scopeflow
