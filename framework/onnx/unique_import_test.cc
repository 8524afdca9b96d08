// Importing Unique: flattened without "axis", the optional outputs bound
// only where the node names them.
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
using onnx_testing::RunNet;
using onnx_testing::SetInt;
using onnx_testing::Values;
using ::testing::ElementsAre;

TEST(UniqueImportTest, AxisAndOutputsAsTheNodeHasThem) {
  onnx::ModelProto model = Model(11);
  AddInput(model, "x", {3, 2});
  onnx::NodeProto* node =
      AddNode(model, "Unique", {"x"}, {"y", "", "", "counts"});
  SetInt(node, "axis", 0);
  SetInt(node, "sorted", 0);
  AddOutput(model, "y");
  AddOutput(model, "counts");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* op = FindOp(*imported, "unique");
  ASSERT_NE(op, nullptr);
  EXPECT_FALSE(FindAttr(*op, "flatten")->b());
  EXPECT_EQ(op->outputs_size(), 2);
  // Rows [3, 1], [0, 2], [3, 1] in order of first occurrence.
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({3, 2}, {3, 1, 0, 2, 3, 1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 1, 0, 2));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(2, 1));
}

TEST(UniqueImportTest, WithoutAxisFlattens) {
  onnx::ModelProto model = Model(11);
  AddInput(model, "x", {2, 2});
  AddNode(model, "Unique", {"x"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_TRUE(FindAttr(*FindOp(*imported, "unique"), "flatten")->b());
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({2, 2}, {4, 1, 4, 0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 1, 4));
}

}  // namespace
}  // namespace scopeflow
