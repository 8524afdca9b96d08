// Importing NonMaxSuppression (constant limits fold into attributes, fed
// ones bind inputs) and RoiAlign (each opset's coordinate mode); what runs
// (values checked by hand); bad attributes.
#include <cstdint>
#include <limits>
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
using onnx_testing::FloatProto;
using onnx_testing::InputSlots;
using onnx_testing::Int64Proto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::RunNet;
using onnx_testing::SetInt;
using onnx_testing::SetString;
using onnx_testing::Values;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Corners (y1, x1, y2, x2): box 0 = [0, 0, 2, 2]; box 1 = [0, 1, 2, 3],
// IoU 1/3 with box 0; box 2 = [5, 5, 6, 6], apart. Scores 0.9, 0.8, 0.1.
std::vector<Feed> BoxFeeds() {
  return {{"boxes",
           MakeTensor<float>({1, 3, 4}, {0, 0, 2, 2, 0, 1, 2, 3, 5, 5, 6, 6})},
          {"scores", MakeTensor<float>({1, 1, 3}, {0.9f, 0.8f, 0.1f})}};
}

void AddBoxInputs(onnx::ModelProto& model) {
  AddInput(model, "boxes", {1, 3, 4});
  AddInput(model, "scores", {1, 1, 3});
  AddOutput(model, "selected");
}

TEST(DetectionImportTest, ConstantLimitsAreAttributes) {
  onnx::ModelProto model = Model(11);
  AddBoxInputs(model);
  // torchvision writes "no limit" as INT64_MAX.
  AddInitializer(model,
                 Int64Proto("max", {1}, {std::numeric_limits<int64_t>::max()}));
  AddInitializer(model, FloatProto("iou", {1}, {0.3f}));
  AddInitializer(model, FloatProto("score", {1}, {0.5f}));
  AddNode(model, "NonMaxSuppression",
          {"boxes", "scores", "max", "iou", "score"}, {"selected"});
  auto imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* op = FindOp(*imported, "non_max_suppression");
  ASSERT_NE(op, nullptr);
  EXPECT_THAT(InputSlots(*op), ElementsAre("Boxes", "Scores"));
  ASSERT_NE(FindAttr(*op, "max_output_boxes_per_class"), nullptr);
  EXPECT_EQ(FindAttr(*op, "max_output_boxes_per_class")->i64(),
            std::numeric_limits<int64_t>::max());
  // Box 1 goes (IoU 1/3 > 0.3), box 2 too (score 0.1 not above 0.5).
  auto out = RunNet(*imported, BoxFeeds());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 3));
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(0, 0, 0));
}

TEST(DetectionImportTest, FedLimitsAreInputsAndAbsentOnesDefault) {
  onnx::ModelProto model = Model(10);
  AddBoxInputs(model);
  AddInput(model, "max", {1}, onnx::TensorProto::INT64);
  AddInput(model, "iou", {1});
  AddNode(model, "NonMaxSuppression", {"boxes", "scores", "max", "iou"},
          {"selected"});
  auto imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* op = FindOp(*imported, "non_max_suppression");
  ASSERT_NE(op, nullptr);
  EXPECT_THAT(
      InputSlots(*op),
      ElementsAre("Boxes", "Scores", "MaxOutputBoxesPerClass", "IouThreshold"));
  std::vector<Feed> feeds = BoxFeeds();
  feeds.push_back({"max", MakeTensor<int64_t>({1}, {2})});
  feeds.push_back({"iou", MakeTensor<float>({1}, {0.5f})});
  // No score threshold: box 1 (IoU 1/3 <= 0.5) stays, the limit of 2 cuts
  // box 2.
  auto out = RunNet(*imported, feeds);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(0, 0, 0, 0, 0, 1));
  // Without max_output_boxes_per_class ONNX selects nothing.
  onnx::ModelProto bare = Model(11);
  AddBoxInputs(bare);
  AddNode(bare, "NonMaxSuppression", {"boxes", "scores"}, {"selected"});
  imported = ImportOnnx(bare);
  ASSERT_TRUE(imported.ok()) << imported.status();
  out = RunNet(*imported, BoxFeeds());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(0, 3));
}

TEST(DetectionImportTest, BadAttributesAndThresholdsAreRefused) {
  onnx::ModelProto model = Model(11);
  AddBoxInputs(model);
  SetInt(AddNode(model, "NonMaxSuppression", {"boxes", "scores"}, {"selected"}),
         "center_point_box", 2);
  auto imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(
      imported.status().message(),
      HasSubstr("attribute \"center_point_box\" is 2: expected 0 or 1"));
  onnx::ModelProto iou = Model(11);
  AddBoxInputs(iou);
  AddInitializer(iou, Int64Proto("max", {1}, {5}));
  AddInitializer(iou, FloatProto("iou", {1}, {-0.5f}));
  AddNode(iou, "NonMaxSuppression", {"boxes", "scores", "max", "iou"},
          {"selected"});
  imported = ImportOnnx(iou);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              HasSubstr("input 3 (iou_threshold) is -0.5: expected a value "
                        "within [0, 1]"));
}

// RoiAlign over X[y][x] = 3y + x ([1, 1, 3, 3]), one 1 x 1 bin of one
// sample: the region (1, 1, 2, 2) samples (1.5, 1.5) = 6 unshifted (opset
// 10, output_half_pixel) and (1, 1) = 4 shifted by half a pixel (opset
// 16's default half_pixel).
TEST(DetectionImportTest, RoiAlignCoordinateModeByOpset) {
  for (const int64_t opset : {10, 16}) {
    onnx::ModelProto model = Model(opset);
    AddInput(model, "x", {1, 1, 3, 3});
    AddInput(model, "rois", {1, 4});
    AddInput(model, "batch", {1}, onnx::TensorProto::INT64);
    AddOutput(model, "y");
    onnx::NodeProto* node =
        AddNode(model, "RoiAlign", {"x", "rois", "batch"}, {"y"});
    SetInt(node, "sampling_ratio", 1);
    SetString(node, "mode", "avg");
    auto imported = ImportOnnx(model);
    ASSERT_TRUE(imported.ok()) << imported.status();
    const OpDef* op = FindOp(*imported, "roi_align");
    ASSERT_NE(op, nullptr);
    ASSERT_NE(FindAttr(*op, "coordinate_transformation_mode"), nullptr);
    EXPECT_EQ(FindAttr(*op, "coordinate_transformation_mode")->s(),
              opset == 10 ? "output_half_pixel" : "half_pixel");
    auto out = RunNet(
        *imported,
        {{"x", MakeTensor<float>({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})},
         {"rois", MakeTensor<float>({1, 4}, {1, 1, 2, 2})},
         {"batch", MakeTensor<int64_t>({1}, {0})}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(opset == 10 ? 6 : 4));
  }
}

}  // namespace
}  // namespace scopeflow
