// Importing GridSample (both namings of its modes), AffineGrid, Col2Im,
// CenterCropPad and DeformConv: the ops they map to and what runs.
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
using onnx_testing::Int64Proto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::OpTypes;
using onnx_testing::RunNet;
using onnx_testing::SetInt;
using onnx_testing::SetInts;
using onnx_testing::SetString;
using onnx_testing::Values;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Opset 16's bilinear is opset 20's linear: [0, 10] sampled half way.
TEST(SpatialImportTest, GridSampleOfOpset16) {
  onnx::ModelProto model = Model(16);
  AddInput(model, "x", {1, 1, 1, 2});
  AddInput(model, "grid", {1, 1, 1, 2});
  onnx::NodeProto* node = AddNode(model, "GridSample", {"x", "grid"}, {"y"});
  SetString(node, "mode", "bilinear");
  SetInt(node, "align_corners", 1);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("grid_sample"));
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({1, 1, 1, 2}, {0, 10})},
                         {"grid", MakeTensor<float>({1, 1, 1, 2}, {0, 0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(5));
}

TEST(SpatialImportTest, GridSampleModeNamesFollowTheOpset) {
  onnx::ModelProto model = Model(20);
  AddInput(model, "x", {1, 1, 1, 2});
  AddInput(model, "grid", {1, 1, 1, 2});
  onnx::NodeProto* node = AddNode(model, "GridSample", {"x", "grid"}, {"y"});
  SetString(node, "mode", "bicubic");
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("mode \"bicubic\": expected \"linear\", \"nearest\" or "
                        "\"cubic\" at opset 20"));
}

TEST(SpatialImportTest, AffineGridFeedsGridSample) {
  onnx::ModelProto model = Model(20);
  AddInput(model, "theta", {1, 2, 3});
  AddInitializer(model, Int64Proto("size", {4}, {1, 1, 1, 3}));
  AddNode(model, "AffineGrid", {"theta", "size"}, {"grid"});
  AddOutput(model, "grid");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("affine_grid"));
  // Identity theta: x at the cell centres -2/3, 0, 2/3, y 0.
  auto out = RunNet(
      *imported, {{"theta", MakeTensor<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(-2.0f / 3, 0, 0, 0, 2.0f / 3, 0));
}

TEST(SpatialImportTest, Col2ImWithStrides) {
  onnx::ModelProto model = Model(18);
  AddInput(model, "x", {1, 2, 2});
  AddInitializer(model, Int64Proto("image", {2}, {1, 4}));
  AddInitializer(model, Int64Proto("block", {2}, {1, 2}));
  onnx::NodeProto* node =
      AddNode(model, "Col2Im", {"x", "image", "block"}, {"y"});
  SetInts(node, "strides", {1, 2});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("col2im"));
  auto out =
      RunNet(*imported, {{"x", MakeTensor<float>({1, 2, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 3, 2, 4));
}

TEST(SpatialImportTest, CenterCropPadOnChosenAxes) {
  onnx::ModelProto model = Model(18);
  AddInput(model, "x", {3, 1});
  AddInput(model, "shape", {1}, onnx::TensorProto::INT64);
  onnx::NodeProto* node =
      AddNode(model, "CenterCropPad", {"x", "shape"}, {"y"});
  SetInts(node, "axes", {-1});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("center_crop_pad"));
  auto out = RunNet(*imported, {{"x", MakeTensor<float>({3, 1}, {1, 2, 3})},
                                {"shape", MakeTensor<int64_t>({1}, {2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 0, 2, 0, 3, 0));
}

// A 1x1 kernel of weight 2 shifted half a row down, with the mask after
// the absent bias.
TEST(SpatialImportTest, DeformConvWithMaskAndNoBias) {
  onnx::ModelProto model = Model(19);
  AddInput(model, "x", {1, 1, 2, 1});
  AddInitializer(model, FloatProto("w", {1, 1, 1, 1}, {2}));
  AddInput(model, "offset", {1, 2, 2, 1});
  AddInput(model, "mask", {1, 1, 2, 1});
  AddNode(model, "DeformConv", {"x", "w", "offset", "", "mask"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("deform_conv"));
  auto out =
      RunNet(*imported,
             {{"x", MakeTensor<float>({1, 1, 2, 1}, {4, 8})},
              {"offset", MakeTensor<float>({1, 2, 2, 1}, {0.5f, 0.5f, 0, 0})},
              {"mask", MakeTensor<float>({1, 1, 2, 1}, {1, 0.5f})}});
  ASSERT_TRUE(out.ok()) << out.status();
  // Row 0.5 reads 6; row 1.5 reads half of 8 (row 2 is outside), masked by
  // a half.
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(12, 4));
}

TEST(SpatialImportTest, Col2ImBeforeOpset18IsRejected) {
  onnx::ModelProto model = Model(17);
  AddInput(model, "x", {1, 2, 2});
  AddInitializer(model, Int64Proto("image", {2}, {1, 4}));
  AddInitializer(model, Int64Proto("block", {2}, {1, 2}));
  AddNode(model, "Col2Im", {"x", "image", "block"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("ONNX Col2Im exists from opset 18 on"));
}

}  // namespace
}  // namespace scopeflow
