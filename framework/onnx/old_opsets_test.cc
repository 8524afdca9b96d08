// Importing models of opsets 7 to 10, and ops whose meaning changed with
// the opset: each is converted per its definition at the model's opset, and
// where the meaning changed, both versions are run.
#include <cmath>
#include <cmath>
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

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using ::testing::FloatNear;
using namespace onnx_testing;  // NOLINT: the model builders.

std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

// Imports and runs `model` fed `x`, returning its first output.
absl::StatusOr<Tensor> ImportAndRun(const onnx::ModelProto& model,
                                    const Tensor& x) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  if (!imported.ok()) return imported.status();
  absl::StatusOr<std::vector<Tensor>> out = RunNet(*imported, {{"x", x}});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

const Tensor kTwoByTwo = MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});

TEST(OldOpsetsTest, OpsetsFromOneToTwentySevenImport) {
  for (int64_t opset : {0, 1, 6, 7, 9, 10, 26, 27, 28}) {
    SCOPED_TRACE(opset);
    onnx::ModelProto model = Model(opset);
    AddInput(model, "x", {2});
    AddNode(model, "Relu", {"x"}, {"y"});
    AddOutput(model, "y");
    absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
    if (opset >= 6 && opset <= kMaxOnnxOpset) {
      EXPECT_TRUE(imported.ok()) << imported.status();
    } else {
      EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
    }
    if (opset == 0 || opset == 28) {
      EXPECT_THAT(Message(imported.status()),
                  HasSubstr("outside the supported range 1 to 27"));
    }
  }
}

// Relu-1 (opsets 1 to 5) took consumed_inputs; Relu-6 is what converts.
TEST(OldOpsetsTest, OpChangedSinceTheModelsOpsetIsRefused) {
  onnx::ModelProto model = Model(5);
  AddInput(model, "x", {2});
  AddNode(model, "Relu", {"x"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Message(imported.status()),
              HasSubstr("at the model's opset 5, Relu means its version "
                        "before Relu-6; scopeflow converts Relu-6 and later"));
}

// Not has had one version since opset 1: an opset-1 model converts, and
// ONNX's example (test_not_2d) gives its values.
TEST(OldOpsetsTest, OpUnchangedSinceOpsetOneConverts) {
  onnx::ModelProto model = Model(1);
  AddInput(model, "x", {3}, onnx::TensorProto::BOOL);
  AddNode(model, "Not", {"x"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  Tensor x = MakeTensor<bool>({3}, {true, false, true});
  absl::StatusOr<std::vector<Tensor>> out = RunNet(*imported, {{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<bool>((*out)[0]), ElementsAre(false, true, false));
}

// An op that opset 7 does not define is no op of an older opset either.
TEST(OldOpsetsTest, OpNewerThanOpsetSevenIsRefusedInAnOldModel) {
  onnx::ModelProto model = Model(3);
  AddInput(model, "x", {2});
  AddNode(model, "Gelu", {"x"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(Message(imported.status()),
              HasSubstr("Gelu is not an op of default-domain opset 3"));
}

// Upsample 7-8 takes the scales as an attribute; output = floor(in * scale),
// the nearest cell at or left of x / scale.
TEST(OldOpsetsTest, UpsampleScalesAttributeAtOpset7) {
  onnx::ModelProto model = Model(7);
  AddInput(model, "x", {1, 1, 2, 2});
  onnx::NodeProto* node = AddNode(model, "Upsample", {"x"}, {"y"});
  SetFloats(node, "scales", {1, 1, 2, 3});
  AddOutput(model, "y");
  absl::StatusOr<Tensor> y = ImportAndRun(model, kTwoByTwo);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 1, 4, 6));
  EXPECT_THAT(Values<float>(*y),
              ElementsAreArray<float>({1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                       3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
}

// Upsample 9 takes them as input 1. Linear is over the asymmetric
// coordinates x / scale, clamped at the last cell: ONNX's own example.
TEST(OldOpsetsTest, UpsampleScalesInputAtOpset9Linear) {
  onnx::ModelProto model = Model(9);
  AddInput(model, "x", {1, 1, 2, 2});
  AddInitializer(model, FloatProto("scales", {4}, {1, 1, 2, 4}));
  SetString(AddNode(model, "Upsample", {"x", "scales"}, {"y"}), "mode",
            "linear");
  AddOutput(model, "y");
  absl::StatusOr<Tensor> y = ImportAndRun(model, kTwoByTwo);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 1, 4, 8));
  EXPECT_THAT(Values<float>(*y),
              ElementsAreArray<float>(
                  {1, 1.25, 1.5, 1.75, 2, 2, 2, 2,  //
                   2, 2.25, 2.5, 2.75, 3, 3, 3, 3,  //
                   3, 3.25, 3.5, 3.75, 4, 4, 4, 4,  //
                   3, 3.25, 3.5, 3.75, 4, 4, 4, 4}));
}

TEST(OldOpsetsTest, UpsampleScalesFedAtRunTime) {
  onnx::ModelProto model = Model(9);
  AddInput(model, "x", {1, 1, 2, 2});
  AddInput(model, "scales", {4});
  AddNode(model, "Upsample", {"x", "scales"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_NE(FindOp(*imported, "resize"), nullptr);
  EXPECT_THAT(InputSlots(*FindOp(*imported, "resize")),
              ElementsAre("X", "Scales"));
  absl::StatusOr<std::vector<Tensor>> out = RunNet(
      *imported,
      {{"x", kTwoByTwo}, {"scales", MakeTensor<float>({4}, {1, 1, 2, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 4, 4));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAreArray<float>(
                  {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(OldOpsetsTest, UpsampleRefusals) {
  struct Case {
    int64_t opset;
    std::vector<float> scales;
    std::string mode;
    std::string error;
  };
  const std::vector<Case> cases = {
      {9, {1, 1, 0.5, 1}, "nearest", "scale 0.5: expected at least 1"},
      {9, {1, 1, 2}, "nearest", "3 scales for an input of rank 4"},
      {10, {1, 1, 2, 2}, "cubic", "expected nearest or linear"},
      {11, {1, 1, 2, 2}, "nearest", "Upsample is no operator of opset 11"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    onnx::ModelProto model = Model(c.opset);
    AddInput(model, "x", {1, 1, 2, 2});
    AddInitializer(model,
                   FloatProto("scales", {static_cast<int64_t>(c.scales.size())},
                              c.scales));
    SetString(AddNode(model, "Upsample", {"x", "scales"}, {"y"}), "mode",
              c.mode);
    AddOutput(model, "y");
    absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
    EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(imported.status()), HasSubstr(c.error));
  }
}

// Resize 10 takes (X, scales) with asymmetric coordinates; nearest takes
// the cell at or left of x / scale scaling up, at or right scaling down
// (ONNX's opset-10 cases).
TEST(OldOpsetsTest, ResizeAtOpset10NearestUpAndDown) {
  struct Case {
    std::vector<float> scales;
    std::vector<int64_t> dims;
    std::vector<float> want;
  };
  const Tensor x = MakeTensor<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const std::vector<Case> cases = {
      {{1, 1, 0.6f, 0.6f}, {1, 1, 1, 2}, {1, 3}},
      {{1, 1, 1, 1.5f}, {1, 1, 2, 6}, {1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8}},
      // One axis up, the other down.
      {{1, 1, 1.5f, 0.5f}, {1, 1, 3, 2}, {1, 3, 1, 3, 5, 7}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.scales));
    onnx::ModelProto model = Model(10);
    AddInput(model, "x", {1, 1, 2, 4});
    AddInitializer(model, FloatProto("scales", {4}, c.scales));
    AddNode(model, "Resize", {"x", "scales"}, {"y"});
    AddOutput(model, "y");
    absl::StatusOr<Tensor> y = ImportAndRun(model, x);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_THAT(y->dims(), ElementsAreArray(c.dims));
    EXPECT_THAT(Values<float>(*y), ElementsAreArray(c.want));
  }
}

// Linear resizing of [1, 2, 3, 4] by 2: asymmetric at opset 10 (x / 2),
// half_pixel by default at opset 11 ((x + 0.5) / 2 - 0.5).
TEST(OldOpsetsTest, ResizeCoordinatesChangedAtOpset11) {
  const Tensor x = MakeTensor<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  onnx::ModelProto old_model = Model(10);
  AddInput(old_model, "x", {1, 1, 1, 4});
  AddInitializer(old_model, FloatProto("scales", {4}, {1, 1, 1, 2}));
  SetString(AddNode(old_model, "Resize", {"x", "scales"}, {"y"}), "mode",
            "linear");
  AddOutput(old_model, "y");
  absl::StatusOr<Tensor> old_y = ImportAndRun(old_model, x);
  ASSERT_TRUE(old_y.ok()) << old_y.status();
  EXPECT_THAT(Values<float>(*old_y),
              ElementsAreArray<float>({1, 1.5, 2, 2.5, 3, 3.5, 4, 4}));

  onnx::ModelProto new_model = Model(11);
  AddInput(new_model, "x", {1, 1, 1, 4});
  AddInitializer(new_model, FloatProto("roi", {0}, {}));
  AddInitializer(new_model, FloatProto("scales", {4}, {1, 1, 1, 2}));
  SetString(AddNode(new_model, "Resize", {"x", "roi", "scales"}, {"y"}),
            "mode", "linear");
  AddOutput(new_model, "y");
  absl::StatusOr<Tensor> new_y = ImportAndRun(new_model, x);
  ASSERT_TRUE(new_y.ok()) << new_y.status();
  EXPECT_THAT(Values<float>(*new_y),
              ElementsAreArray<float>(
                  {1, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4}));
}

// Slice's bounds are attributes before opset 10 and inputs since.
TEST(OldOpsetsTest, SliceBoundsMoveFromAttributesToInputs) {
  const Tensor x = MakeTensor<float>({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                              10, 11});
  onnx::ModelProto old_model = Model(9);
  AddInput(old_model, "x", {3, 4});
  onnx::NodeProto* node = AddNode(old_model, "Slice", {"x"}, {"y"});
  SetInts(node, "starts", {1, -3});
  SetInts(node, "ends", {1000, -1});
  SetInts(node, "axes", {0, 1});
  AddOutput(old_model, "y");

  onnx::ModelProto new_model = Model(10);
  AddInput(new_model, "x", {3, 4});
  AddInitializer(new_model, Int64Proto("starts", {2}, {1, -3}));
  AddInitializer(new_model, Int64Proto("ends", {2}, {1000, -1}));
  AddInitializer(new_model, Int64Proto("axes", {2}, {0, 1}));
  AddNode(new_model, "Slice", {"x", "starts", "ends", "axes"}, {"y"});
  AddOutput(new_model, "y");
  for (const onnx::ModelProto* model : {&old_model, &new_model}) {
    absl::StatusOr<Tensor> y = ImportAndRun(*model, x);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_THAT(y->dims(), ElementsAre(2, 2));
    EXPECT_THAT(Values<float>(*y), ElementsAre(5, 6, 9, 10));
  }

  // Without axes, the first len(starts) axes.
  onnx::ModelProto rows = Model(7);
  AddInput(rows, "x", {3, 4});
  onnx::NodeProto* row = AddNode(rows, "Slice", {"x"}, {"y"});
  SetInts(row, "starts", {1});
  SetInts(row, "ends", {2});
  AddOutput(rows, "y");
  absl::StatusOr<Tensor> y = ImportAndRun(rows, x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAre(4, 5, 6, 7));

  // Opset 10 reads the inputs: attributes are no longer Slice's.
  onnx::ModelProto stale = Model(10);
  AddInput(stale, "x", {3, 4});
  SetInts(AddNode(stale, "Slice", {"x"}, {"y"}), "starts", {1});
  AddOutput(stale, "y");
  EXPECT_THAT(Message(ImportOnnx(stale).status()),
              HasSubstr("inputs 1 (starts) and 2 (ends) are required"));
}

void AddBatchNorm(onnx::ModelProto& model,
                  const std::vector<int64_t>& param_dims,
                  const std::vector<std::vector<float>>& params) {
  const char* names[] = {"scale", "b", "mean", "var"};
  for (int i = 0; i < 4; ++i) {
    AddInitializer(model, FloatProto(names[i], param_dims, params[i]));
  }
}

// BatchNormalization 7-8: spatial = 1 (the default) normalizes per channel;
// spatial = 0 per activation, with parameters of X's shape less the batch.
// Opset 9 has no spatial.
TEST(OldOpsetsTest, BatchNormalizationSpatialBeforeOpset9) {
  onnx::ModelProto spatial = Model(7);
  AddInput(spatial, "x", {1, 2, 1, 2});
  AddBatchNorm(spatial, {2}, {{1, 2}, {0, 1}, {1, 3}, {4, 1}});
  onnx::NodeProto* node = AddNode(
      spatial, "BatchNormalization", {"x", "scale", "b", "mean", "var"}, {"y"});
  SetFloat(node, "epsilon", 0);
  SetFloat(node, "momentum", 0.9f);
  AddOutput(spatial, "y");
  absl::StatusOr<Tensor> y =
      ImportAndRun(spatial, MakeTensor<float>({1, 2, 1, 2}, {1, 2, 3, 4}));
  ASSERT_TRUE(y.ok()) << y.status();
  // (x - mean) / sqrt(var) * scale + b per channel.
  EXPECT_THAT(Values<float>(*y), ElementsAre(0, 0.5, 1, 3));

  onnx::ModelProto activation = Model(8);
  AddInput(activation, "x", {-1, 2, 2});
  AddBatchNorm(activation, {2, 2},
               {{1, 1, 1, 2}, {0, 0, 0, 1}, {0, 0, 1, 0}, {1, 4, 1, 1}});
  onnx::NodeProto* per_activation =
      AddNode(activation, "BatchNormalization",
              {"x", "scale", "b", "mean", "var"}, {"y"});
  SetFloat(per_activation, "epsilon", 0);
  SetInt(per_activation, "spatial", 0);
  AddOutput(activation, "y");
  y = ImportAndRun(activation,
                   MakeTensor<float>({2, 2, 2}, {1, 2, 3, 4, 1, 2, 3, 4}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAre(1, 1, 2, 9, 1, 1, 2, 9));

  // Per-activation parameters must have X's shape less the batch axis.
  onnx::ModelProto wrong = Model(8);
  AddInput(wrong, "x", {1, 2, 2});
  AddBatchNorm(wrong, {2}, {{1, 1}, {0, 0}, {0, 0}, {1, 1}});
  SetInt(AddNode(wrong, "BatchNormalization",
                 {"x", "scale", "b", "mean", "var"}, {"y"}),
         "spatial", 0);
  AddOutput(wrong, "y");
  EXPECT_THAT(Message(ImportOnnx(wrong).status()),
              HasSubstr("expected X's shape [1, 2, 2] without the batch axis"));

  onnx::ModelProto stale = Model(9);
  AddInput(stale, "x", {1, 2, 1, 2});
  AddBatchNorm(stale, {2}, {{1, 2}, {0, 1}, {1, 3}, {4, 1}});
  SetInt(AddNode(stale, "BatchNormalization",
                 {"x", "scale", "b", "mean", "var"}, {"y"}),
         "spatial", 1);
  AddOutput(stale, "y");
  EXPECT_THAT(Message(ImportOnnx(stale).status()),
              HasSubstr("attribute \"spatial\" not supported"));
}

// Clip's bounds: attributes before opset 11, defaulting to float's finite
// extremes; inputs since, unbounded without them.
TEST(OldOpsetsTest, ClipBoundsMoveFromAttributesToInputs) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Tensor x = MakeTensor<float>({4}, {kInf, -kInf, -1, 7});
  onnx::ModelProto bounded = Model(10);
  AddInput(bounded, "x", {4});
  onnx::NodeProto* node = AddNode(bounded, "Clip", {"x"}, {"y"});
  SetFloat(node, "min", 0);
  SetFloat(node, "max", 6);
  AddOutput(bounded, "y");
  absl::StatusOr<Tensor> y = ImportAndRun(bounded, x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAre(6, 0, 0, 6));

  onnx::ModelProto defaults = Model(10);
  AddInput(defaults, "x", {4});
  AddNode(defaults, "Clip", {"x"}, {"y"});
  AddOutput(defaults, "y");
  y = ImportAndRun(defaults, x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y),
              ElementsAre(std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::lowest(), -1, 7));

  onnx::ModelProto unbounded = Model(11);
  AddInput(unbounded, "x", {4});
  AddNode(unbounded, "Clip", {"x"}, {"y"});
  AddOutput(unbounded, "y");
  y = ImportAndRun(unbounded, x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAre(kInf, -kInf, -1, 7));
}

// Dropout infers as the identity; its mask has X's dtype before opset 10
// and is bool since.
TEST(OldOpsetsTest, DropoutMaskDtypeChangedAtOpset10) {
  for (int64_t opset : {7, 10}) {
    SCOPED_TRACE(opset);
    onnx::ModelProto model = Model(opset);
    AddInput(model, "x", {3});
    SetFloat(AddNode(model, "Dropout", {"x"}, {"y", "mask"}), "ratio", 0.3f);
    AddOutput(model, "y");
    AddOutput(model, "mask");
    absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
    ASSERT_TRUE(imported.ok()) << imported.status();
    absl::StatusOr<std::vector<Tensor>> out =
        RunNet(*imported, {{"x", MakeTensor<float>({3}, {1, -2, 3})}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, -2, 3));
    const Tensor& mask = (*out)[1];
    if (opset < 10) {
      ASSERT_EQ(mask.dtype(), kFloat32);
      EXPECT_THAT(Values<float>(mask), ElementsAre(1, 1, 1));
    } else {
      ASSERT_EQ(mask.dtype(), kBool);
      EXPECT_THAT(Values<bool>(mask), ElementsAre(true, true, true));
    }
  }
}

// Pad's pads and value are attributes before opset 11.
TEST(OldOpsetsTest, PadAttributesBeforeOpset11) {
  const Tensor x = MakeTensor<float>({1, 2}, {1, 2});
  onnx::ModelProto constant = Model(10);
  AddInput(constant, "x", {1, 2});
  onnx::NodeProto* node = AddNode(constant, "Pad", {"x"}, {"y"});
  SetInts(node, "pads", {0, 1, 0, 2});
  SetFloat(node, "value", 9);
  AddOutput(constant, "y");
  absl::StatusOr<Tensor> y = ImportAndRun(constant, x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 5));
  EXPECT_THAT(Values<float>(*y), ElementsAre(9, 1, 2, 9, 9));

  onnx::ModelProto edge = Model(7);
  AddInput(edge, "x", {1, 2});
  onnx::NodeProto* edge_node = AddNode(edge, "Pad", {"x"}, {"y"});
  SetInts(edge_node, "pads", {0, 2, 0, 1});
  SetString(edge_node, "mode", "edge");
  AddOutput(edge, "y");
  y = ImportAndRun(edge, x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>(*y), ElementsAre(1, 1, 1, 2, 2));

  // Opset 11 takes the pads as input 1.
  onnx::ModelProto stale = Model(11);
  AddInput(stale, "x", {1, 2});
  SetInts(AddNode(stale, "Pad", {"x"}, {"y"}), "pads", {0, 1, 0, 2});
  AddOutput(stale, "y");
  EXPECT_FALSE(ImportOnnx(stale).ok());
}

// Reductions take axes as an attribute until ReduceSum's opset 13 (the
// others': 18); Squeeze, Unsqueeze and Split theirs until 13.
TEST(OldOpsetsTest, AxesAttributesBeforeOpset13) {
  onnx::ModelProto model = Model(9);
  AddInput(model, "x", {2, 3});
  onnx::NodeProto* sum = AddNode(model, "ReduceSum", {"x"}, {"sum"});
  SetInts(sum, "axes", {1});
  onnx::NodeProto* max = AddNode(model, "ReduceMax", {"x"}, {"max"});
  SetInts(max, "axes", {0});
  SetInt(max, "keepdims", 0);
  SetInts(AddNode(model, "Unsqueeze", {"max"}, {"row"}), "axes", {0});
  SetInts(AddNode(model, "Squeeze", {"sum"}, {"column"}), "axes", {1});
  onnx::NodeProto* split =
      AddNode(model, "Split", {"x"}, {"left", "right"});
  SetInt(split, "axis", 1);
  SetInts(split, "split", {1, 2});
  for (const char* name : {"sum", "row", "column", "left", "right"}) {
    AddOutput(model, name);
  }
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out = RunNet(
      *imported, {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(6, 15));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(1, 3));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(4, 5, 6));
  EXPECT_THAT((*out)[2].dims(), ElementsAre(2));
  EXPECT_THAT(Values<float>((*out)[3]), ElementsAre(1, 4));
  EXPECT_THAT(Values<float>((*out)[4]), ElementsAre(2, 3, 5, 6));
}

// Softmax and LogSoftmax before opset 13 coerce X to 2-D at axis and work
// along the trailing block; since, along the axis alone.
TEST(OldOpsetsTest, SoftmaxAxisMeaningChangedAtOpset13) {
  const Tensor x = MakeTensor<float>({2, 2, 2}, {0, 0, 0, 0, 1, 1, 1, 1});
  for (int64_t opset : {9, 13}) {
    SCOPED_TRACE(opset);
    onnx::ModelProto model = Model(opset);
    AddInput(model, "x", {-1, 2, 2});
    SetInt(AddNode(model, "Softmax", {"x"}, {"y"}), "axis", 1);
    SetInt(AddNode(model, "LogSoftmax", {"x"}, {"log_y"}), "axis", 1);
    AddOutput(model, "y");
    AddOutput(model, "log_y");
    absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
    ASSERT_TRUE(imported.ok()) << imported.status();
    absl::StatusOr<std::vector<Tensor>> out = RunNet(*imported, {{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2, 2));
    // Over 4 elements per batch item before 13, over 2 since.
    const float p = opset < 13 ? 0.25f : 0.5f;
    EXPECT_THAT(Values<float>((*out)[0]),
                Pointwise(FloatNear(1e-6), std::vector<float>(8, p)));
    EXPECT_THAT(Values<float>((*out)[1]),
                Pointwise(FloatNear(1e-6), std::vector<float>(8, std::log(p))));
  }
}

// ConstantOfShape (opset 9): a constant shape folds into a constant; a fed
// one expands the value at run time.
TEST(OldOpsetsTest, ConstantOfShape) {
  onnx::ModelProto model = Model(9);
  AddInput(model, "shape", {2}, onnx::TensorProto::INT64);
  AddInitializer(model, Int64Proto("fixed", {2}, {2, 3}));
  SetTensor(AddNode(model, "ConstantOfShape", {"fixed"}, {"sevens"}), "value",
            Int64Proto("", {1}, {7}));
  onnx::TensorProto half = FloatProto("", {1}, {1.5f});
  SetTensor(AddNode(model, "ConstantOfShape", {"shape"}, {"halves"}), "value",
            half);
  AddNode(model, "ConstantOfShape", {"shape"}, {"zeros"});
  AddOutput(model, "sevens");
  AddOutput(model, "halves");
  AddOutput(model, "zeros");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("expand", "expand"));
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"shape", MakeTensor<int64_t>({2}, {2, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), kInt64);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(7, 7, 7, 7, 7, 7));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(1.5, 1.5, 1.5, 1.5));
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(0, 0, 0, 0));

  onnx::ModelProto wide = Model(9);
  AddInitializer(wide, Int64Proto("fixed", {1}, {2}));
  SetTensor(AddNode(wide, "ConstantOfShape", {"fixed"}, {"y"}), "value",
            FloatProto("", {2}, {1, 2}));
  AddOutput(wide, "y");
  EXPECT_THAT(Message(ImportOnnx(wide).status()),
              HasSubstr("holds 2 elements: expected one"));
}

// MaxPool 8 added the Indices output and storage_order.
TEST(OldOpsetsTest, MaxPoolIndicesAtOpset8) {
  onnx::ModelProto model = Model(8);
  AddInput(model, "x", {1, 1, 2, 2});
  onnx::NodeProto* node = AddNode(model, "MaxPool", {"x"}, {"y", "indices"});
  SetInts(node, "kernel_shape", {2, 2});
  SetInt(node, "storage_order", 1);
  AddOutput(model, "y");
  AddOutput(model, "indices");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", MakeTensor<float>({1, 1, 2, 2}, {1, 4, 3, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(4));
  // Column major: [0, 1] is offset 1 * 2 + 0.
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(2));
}

}  // namespace
}  // namespace scopeflow
