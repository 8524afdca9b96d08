// Importing GatherElements, ScatterElements, Scatter, GatherND, ScatterND,
// TopK and NonZero: each opset's attributes and inputs, what they map to,
// and what runs (values checked by hand).
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
using onnx_testing::FindAttr;
using onnx_testing::FindOp;
using onnx_testing::InputSlots;
using onnx_testing::Int64Proto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::OpTypes;
using onnx_testing::RunNet;
using onnx_testing::SetInt;
using onnx_testing::SetString;
using onnx_testing::Values;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// x [2, 3] float, i [1, 3] int64 and u [1, 3] float into `op_type`, at
// `opset`; returns the node to set attributes on.
onnx::NodeProto* ScatterModel(onnx::ModelProto& model,
                              const std::string& op_type) {
  AddInput(model, "x", {2, 3});
  AddInput(model, "i", {1, 3}, onnx::TensorProto::INT64);
  AddInput(model, "u", {1, 3});
  AddOutput(model, "y");
  return AddNode(model, op_type, {"x", "i", "u"}, {"y"});
}

std::vector<Feed> ScatterFeeds() {
  return {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
          {"i", MakeTensor<int64_t>({1, 3}, {1, 0, -1})},
          {"u", MakeTensor<float>({1, 3}, {10, 20, 30})}};
}

TEST(IndexingImportTest, ScatterAtOpset10IsScatterElements) {
  onnx::ModelProto model = Model(10);
  SetInt(ScatterModel(model, "Scatter"), "axis", 0);
  auto imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("scatter_elements"));
  auto out = RunNet(*imported, ScatterFeeds());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 20, 3, 10, 5, 30));
}

TEST(IndexingImportTest, ScatterElementsReductionPerOpset) {
  // Opset 13 has no "reduction": the importer rejects the attribute.
  onnx::ModelProto old = Model(13);
  SetString(ScatterModel(old, "ScatterElements"), "reduction", "add");
  auto imported = ImportOnnx(old);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("reduction"));
  // Opset 16 has none, add and mul, not max.
  onnx::ModelProto v16 = Model(16);
  SetString(ScatterModel(v16, "ScatterElements"), "reduction", "max");
  imported = ImportOnnx(v16);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              HasSubstr("attribute \"reduction\" is \"max\": expected "
                        "\"none\", \"add\" or \"mul\" at opset 16"));
  // Opset 18 has max.
  onnx::ModelProto v18 = Model(18);
  onnx::NodeProto* node = ScatterModel(v18, "ScatterElements");
  SetString(node, "reduction", "max");
  SetInt(node, "axis", 0);
  imported = ImportOnnx(v18);
  ASSERT_TRUE(imported.ok()) << imported.status();
  std::vector<Feed> feeds = ScatterFeeds();
  feeds[2].tensor = MakeTensor<float>({1, 3}, {10, 1, 3});
  auto out = RunNet(*imported, feeds);
  ASSERT_TRUE(out.ok()) << out.status();
  // Row 1 column 0 becomes max(4, 10), row 0 column 1 keeps max(2, 1) and
  // row 1 column 2 keeps max(6, 3).
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3, 10, 5, 6));
}

TEST(IndexingImportTest, ScatterNdAdd) {
  onnx::ModelProto model = Model(16);
  AddInput(model, "x", {3, 2});
  AddInput(model, "i", {2, 1}, onnx::TensorProto::INT64);
  AddInput(model, "u", {2, 2});
  AddOutput(model, "y");
  SetString(AddNode(model, "ScatterND", {"x", "i", "u"}, {"y"}), "reduction",
            "add");
  auto imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6})},
                         {"i", MakeTensor<int64_t>({2, 1}, {2, 2})},
                         {"u", MakeTensor<float>({2, 2}, {1, 1, 10, 10})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3, 4, 16, 17));
}

TEST(IndexingImportTest, GatherNdBatchDimsSinceOpset12) {
  onnx::ModelProto old = Model(11);
  AddInput(old, "x", {2, 3});
  AddInput(old, "i", {2, 1}, onnx::TensorProto::INT64);
  AddOutput(old, "y");
  SetInt(AddNode(old, "GatherND", {"x", "i"}, {"y"}), "batch_dims", 1);
  EXPECT_FALSE(ImportOnnx(old).ok());
  onnx::ModelProto model = old;
  model.mutable_opset_import(0)->set_version(12);
  auto imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                         {"i", MakeTensor<int64_t>({2, 1}, {2, 0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 4));
}

TEST(IndexingImportTest, TopKAttributeBeforeOpset10) {
  onnx::ModelProto model = Model(9);
  AddInput(model, "x", {2, 3});
  AddOutput(model, "v");
  AddOutput(model, "i");
  SetInt(AddNode(model, "TopK", {"x"}, {"v", "i"}), "k", 2);
  auto imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({2, 3}, {1, 3, 2, 6, 5, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 2, 6, 5));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 2, 0, 1));
}

TEST(IndexingImportTest, TopKInputConstantOrFed) {
  // A constant K folds into attribute "k"; smallest first at opset 11.
  onnx::ModelProto model = Model(11);
  AddInput(model, "x", {4});
  AddInitializer(model, Int64Proto("k", {1}, {3}));
  AddOutput(model, "v");
  AddOutput(model, "i");
  onnx::NodeProto* node = AddNode(model, "TopK", {"x", "k"}, {"v", "i"});
  SetInt(node, "largest", 0);
  SetInt(node, "sorted", 1);
  auto imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* op = FindOp(*imported, "top_k");
  ASSERT_NE(op, nullptr);
  EXPECT_THAT(InputSlots(*op), ElementsAre("X"));
  ASSERT_NE(FindAttr(*op, "k"), nullptr);
  EXPECT_EQ(FindAttr(*op, "k")->i64(), 3);
  const Tensor x = MakeTensor<float>({4}, {4, -1, 7, 0});
  auto out = RunNet(*imported, {{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-1, 0, 4));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 3, 0));
  // K fed at run time binds top_k's input "K".
  onnx::ModelProto fed = Model(10);
  AddInput(fed, "x", {4});
  AddInput(fed, "k", {1}, onnx::TensorProto::INT64);
  AddOutput(fed, "v");
  AddOutput(fed, "i");
  AddNode(fed, "TopK", {"x", "k"}, {"v", "i"});
  imported = ImportOnnx(fed);
  ASSERT_TRUE(imported.ok()) << imported.status();
  op = FindOp(*imported, "top_k");
  ASSERT_NE(op, nullptr);
  EXPECT_THAT(InputSlots(*op), ElementsAre("X", "K"));
  out = RunNet(*imported, {{"x", x}, {"k", MakeTensor<int64_t>({1}, {2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(7, 4));
}

// The pattern of torchvision's detection post-processing: the indices of
// the boxes over a threshold (NonZero, then Transpose), gathered with
// GatherND, then GatherElements on the result.
TEST(IndexingImportTest, NonZeroFeedsGatherNd) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "scores", {2, 3});
  AddInput(model, "mask", {2, 3}, onnx::TensorProto::BOOL);
  AddOutput(model, "picked");
  AddNode(model, "NonZero", {"mask"}, {"nz"});
  onnx::NodeProto* transpose = AddNode(model, "Transpose", {"nz"}, {"rows"});
  onnx_testing::SetInts(transpose, "perm", {1, 0});
  AddNode(model, "GatherND", {"scores", "rows"}, {"picked"});
  auto imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out = RunNet(
      *imported,
      {{"scores",
        MakeTensor<float>({2, 3}, {0.1f, 0.9f, 0.3f, 0.8f, 0.2f, 0.7f})},
       {"mask",
        MakeTensor<bool>({2, 3}, {false, true, false, true, false, true})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.9f, 0.8f, 0.7f));
}

TEST(IndexingImportTest, GatherElementsNegativeAxis) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2, 2});
  AddInput(model, "i", {2, 1}, onnx::TensorProto::INT32);
  AddOutput(model, "y");
  SetInt(AddNode(model, "GatherElements", {"x", "i"}, {"y"}), "axis", -1);
  auto imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out = RunNet(*imported, {{"x", MakeTensor<float>({2, 2}, {1, 2, 3, 4})},
                                {"i", MakeTensor<int32_t>({2, 1}, {1, -2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 3));
}

}  // namespace
}  // namespace scopeflow
