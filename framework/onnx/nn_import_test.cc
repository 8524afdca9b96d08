// Importing the ONNX ops of network layers (Conv, pooling, Pad,
// LayerNormalization, ArgMax, Pow, BatchNormalization): the attributes
// they map to, what runs, and what is refused.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using onnx_testing::AddInitializer;
using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::FindAttr;
using onnx_testing::FindOp;
using onnx_testing::FloatProto;
using onnx_testing::Int64Proto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::RunNet;
using onnx_testing::SetFloat;
using onnx_testing::SetInt;
using onnx_testing::SetInts;
using onnx_testing::SetString;

Tensor FloatTensor(Dims dims, const std::vector<float>& values) {
  return MakeTensor<float>(std::move(dims), values);
}

Tensor Int64Tensor(Dims dims, const std::vector<int64_t>& values) {
  return MakeTensor<int64_t>(std::move(dims), values);
}

std::vector<float> Values(const Tensor& tensor) {
  return onnx_testing::Values<float>(tensor);
}

TEST(OnnxImporterTest, ConvSamePaddingAndPoolAttributes) {
  onnx::ModelProto model = Model(22);
  AddInput(model, "x", {1, 1, 4, 4});
  AddInitializer(model, FloatProto("w", {1, 1, 2, 2}, {1, 1, 1, 1}));
  onnx::NodeProto* conv = AddNode(model, "Conv", {"x", "w"}, {"c"});
  SetString(conv, "auto_pad", "SAME_UPPER");
  onnx::NodeProto* pool = AddNode(model, "AveragePool", {"c"}, {"p"});
  SetInts(pool, "kernel_shape", {2, 2});
  SetInts(pool, "strides", {2, 2});
  SetInts(pool, "pads", {0, 0, 1, 1});
  SetInt(pool, "count_include_pad", 1);
  AddOutput(model, "p");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* conv2d = FindOp(*imported, "conv2d");
  ASSERT_NE(conv2d, nullptr);
  // SAME_UPPER puts the one cell of padding at the end: [top, bottom,
  // left, right] = [0, 1, 0, 1].
  EXPECT_THAT(FindAttr(*conv2d, "paddings")->ints().values(),
              ElementsAre(0, 1, 0, 1));
  const OpDef* pool2d = FindOp(*imported, "pool2d");
  ASSERT_NE(pool2d, nullptr);
  EXPECT_THAT(FindAttr(*pool2d, "paddings")->ints().values(),
              ElementsAre(0, 1, 0, 1));
  EXPECT_FALSE(FindAttr(*pool2d, "exclusive")->b());
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported,
             {{"x", FloatTensor({1, 1, 4, 4}, std::vector<float>(16, 1.0f))}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 1, 2, 2));
}

TEST(OnnxImporterTest, PadWithAxesAtOpset18) {
  onnx::ModelProto model = Model(18);
  AddInput(model, "x", {1, 2});
  AddInitializer(model, Int64Proto("pads", {2}, {1, 2}));
  AddInitializer(model, FloatProto("value", {}, {9}));
  AddInitializer(model, Int64Proto("axes", {1}, {-1}));
  AddNode(model, "Pad", {"x", "pads", "value", "axes"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({1, 2}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values((*out)[0]), ElementsAre(9, 1, 2, 9, 9));
}

// A CPU tensor of `dtype` holding `values` converted to it.
template <typename T>
Tensor TypedTensor(Dims dims, const std::vector<T>& values) {
  Tensor tensor;
  EXPECT_TRUE(tensor.Allocate(CPUPlace(), DataTypeOf<T>(), dims).ok());
  EXPECT_EQ(tensor.numel(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) tensor.data<T>()[i] = values[i];
  return tensor;
}

template <typename T>
std::vector<T> TypedValues(const Tensor& tensor) {
  const T* data = tensor.data<T>();
  return std::vector<T>(data, data + tensor.numel());
}

TEST(OnnxImporterTest, PoolingOverOneToThreeAxes) {
  onnx::ModelProto model = Model(22);
  AddInput(model, "line", {1, 1, 5});
  AddInput(model, "cube", {1, 1, 3, 4, 5});
  onnx::NodeProto* max1d = AddNode(model, "MaxPool", {"line"}, {"m"});
  SetInts(max1d, "kernel_shape", {2});
  SetInts(max1d, "strides", {2});
  SetInts(max1d, "pads", {0, 1});
  onnx::NodeProto* avg3d = AddNode(model, "AveragePool", {"cube"}, {"a"});
  SetInts(avg3d, "kernel_shape", {2, 2, 2});
  SetInts(avg3d, "dilations", {1, 2, 2});
  // ONNX orders pads [begins..., ends...].
  SetInts(avg3d, "pads", {1, 0, 2, 0, 1, 0});
  SetInt(avg3d, "ceil_mode", 1);
  AddNode(model, "GlobalMaxPool", {"cube"}, {"g"});
  AddOutput(model, "m");
  AddOutput(model, "a");
  AddOutput(model, "g");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* pool1d = FindOp(*imported, "pool1d");
  ASSERT_NE(pool1d, nullptr);
  EXPECT_THAT(FindAttr(*pool1d, "paddings")->ints().values(),
              ElementsAre(0, 1));
  const OpDef* pool3d = FindOp(*imported, "pool3d");
  ASSERT_NE(pool3d, nullptr);
  // scopeflow orders paddings [before, after] per axis.
  EXPECT_THAT(FindAttr(*pool3d, "paddings")->ints().values(),
              ElementsAre(1, 0, 0, 1, 2, 0));
  EXPECT_THAT(FindAttr(*pool3d, "dilations")->ints().values(),
              ElementsAre(1, 2, 2));
  EXPECT_TRUE(FindAttr(*pool3d, "ceil_mode")->b());
  std::vector<float> cube(60);
  for (int i = 0; i < 60; ++i) cube[i] = static_cast<float>(i);
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"line", FloatTensor({1, 1, 5}, {1, 3, 2, 5, 4})},
                         {"cube", FloatTensor({1, 1, 3, 4, 5}, cube)}});
  ASSERT_TRUE(out.ok()) << out.status();
  // Windows [1, 3], [2, 5] and [4, padding].
  EXPECT_THAT(Values((*out)[0]), ElementsAre(3, 5, 4));
  // Depth 3 + 1 padded, windows of 2 cells: 3; height 4 + 1 padded and
  // width 5 + 2 padded, windows of 2 taps 2 apart (3 cells): 3 and 5.
  EXPECT_THAT((*out)[1].dims(), ElementsAre(1, 1, 3, 3, 5));
  EXPECT_THAT((*out)[2].dims(), ElementsAre(1, 1, 1, 1, 1));
  EXPECT_THAT(Values((*out)[2]), ElementsAre(59));
}

TEST(OnnxImporterTest, MaxPoolIndicesHonourStorageOrder) {
  onnx::ModelProto model = Model(12);
  AddInput(model, "x", {1, 1, 3, 3});
  onnx::NodeProto* pool = AddNode(model, "MaxPool", {"x"}, {"y", "i"});
  SetInts(pool, "kernel_shape", {2, 2});
  SetInt(pool, "storage_order", 1);
  AddOutput(model, "y");
  AddOutput(model, "i");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* pool2d = FindOp(*imported, "pool2d");
  ASSERT_NE(pool2d, nullptr);
  EXPECT_EQ(FindAttr(*pool2d, "storage_order")->s(), "column_major");
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported,
             {{"x", FloatTensor({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values((*out)[0]), ElementsAre(4, 5, 7, 8));
  // Cells (1, 1), (1, 2), (2, 1), (2, 2) numbered h + 3 w.
  EXPECT_EQ((*out)[1].dtype(), kInt64);
  EXPECT_THAT(TypedValues<int64_t>((*out)[1]), ElementsAre(4, 7, 5, 8));
}

TEST(OnnxImporterTest, PoolingNeedsOneToThreeSpatialAxes) {
  onnx::ModelProto model = Model(22);
  AddInput(model, "x", {1, 1, 2, 2, 2, 2});
  AddInput(model, "line", {1, 1, 4});
  onnx::NodeProto* deep = AddNode(model, "MaxPool", {"x"}, {"y"}, "deep");
  SetInts(deep, "kernel_shape", {1, 1, 1, 1});
  onnx::NodeProto* wrong = AddNode(model, "AveragePool", {"line"}, {"z"}, "k");
  SetInts(wrong, "kernel_shape", {2, 2});
  AddOutput(model, "y");
  AddOutput(model, "z");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  const std::string message(imported.status().message());
  EXPECT_THAT(message,
              HasSubstr("node 0 \"deep\" (MaxPool, opset 22): MaxPool of an "
                        "input of rank 6: scopeflow pools over 1 to 3 spatial "
                        "axes (input rank 3 to 5)"));
  EXPECT_THAT(message,
              HasSubstr("node 1 \"k\" (AveragePool, opset 22): attribute "
                        "\"kernel_shape\" = [2, 2]: expected one value per "
                        "spatial axis of the input (1)"));
}

TEST(OnnxImporterTest, LayerNormalizationStatistics) {
  onnx::ModelProto model = Model(17);
  AddInput(model, "x", {2, 2});
  AddInitializer(model, FloatProto("scale", {2}, {1, 1}));
  AddNode(model, "LayerNormalization", {"x", "scale"}, {"y", "mean", "inv"});
  AddOutput(model, "y");
  AddOutput(model, "mean");
  AddOutput(model, "inv");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({2, 2}, {1, 3, 2, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values((*out)[1]), ElementsAre(2, 2));
  // Variances 1 and 0, epsilon 1e-5.
  EXPECT_THAT((*out)[2].dims(), ElementsAre(2, 1));
  EXPECT_FLOAT_EQ(Values((*out)[2])[0], 1 / std::sqrt(1 + 1e-5f));
  EXPECT_FLOAT_EQ(Values((*out)[2])[1], 1 / std::sqrt(1e-5f));
}

TEST(OnnxImporterTest, ArgMaxSelectLastIndexAndOrEqualComparisons) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2, 3});
  AddInput(model, "row", {3});
  onnx::NodeProto* argmax = AddNode(model, "ArgMax", {"x"}, {"last"});
  SetInt(argmax, "axis", 1);
  SetInt(argmax, "select_last_index", 1);
  AddNode(model, "LessOrEqual", {"x", "row"}, {"le"});
  AddNode(model, "GreaterOrEqual", {"x", "row"}, {"ge"});
  AddOutput(model, "last");
  AddOutput(model, "le");
  AddOutput(model, "ge");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({2, 3}, {1, 3, 3, 5, 5, 0})},
                         {"row", FloatTensor({3}, {1, 4, 3})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(TypedValues<int64_t>((*out)[0]), ElementsAre(2, 1));
  EXPECT_THAT(TypedValues<bool>((*out)[1]),
              ElementsAre(true, true, true, false, false, true));
  EXPECT_THAT(TypedValues<bool>((*out)[2]),
              ElementsAre(true, false, true, true, true, false));
}

TEST(OnnxImporterTest, PowOfIntegersAndMixedTypes) {
  onnx::ModelProto model = Model(15);
  AddInput(model, "i32", {3}, onnx::TensorProto::INT32);
  AddInput(model, "i64", {3}, onnx::TensorProto::INT64);
  AddInput(model, "f32", {3});
  AddNode(model, "Pow", {"i32", "i32"}, {"same"});
  AddNode(model, "Pow", {"i32", "f32"}, {"int_float"});
  AddNode(model, "Pow", {"i32", "i64"}, {"int32_int64"});
  AddNode(model, "Pow", {"f32", "i64"}, {"float_int"});
  AddOutput(model, "same");
  AddOutput(model, "int_float");
  AddOutput(model, "int32_int64");
  AddOutput(model, "float_int");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"i32", TypedTensor<int32_t>({3}, {2, 3, -2})},
                         {"i64", TypedTensor<int64_t>({3}, {31, 2, 3})},
                         {"f32", FloatTensor({3}, {0.5f, 2.5f, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kInt32);
  EXPECT_THAT(TypedValues<int32_t>((*out)[0]), ElementsAre(4, 27, 0));
  // In float64, truncated back to int32: 1.41, 15.59, 4.
  EXPECT_EQ((*out)[1].dtype(), kInt32);
  EXPECT_THAT(TypedValues<int32_t>((*out)[1]), ElementsAre(1, 15, 4));
  // In int64, wrapped back to int32: 2^31 is the lowest int32.
  EXPECT_THAT(TypedValues<int32_t>((*out)[2]),
              ElementsAre(std::numeric_limits<int32_t>::min(), 9, -8));
  EXPECT_EQ((*out)[3].dtype(), kFloat32);
  EXPECT_THAT(Values((*out)[3]), ElementsAre(std::pow(0.5f, 31), 6.25, 8));
}

TEST(OnnxImporterTest, PadModes) {
  onnx::ModelProto model = Model(19);
  AddInput(model, "x", {3});
  AddInitializer(model, Int64Proto("pads", {2}, {2, 1}));
  onnx::NodeProto* edge = AddNode(model, "Pad", {"x", "pads"}, {"e"});
  SetString(edge, "mode", "edge");
  onnx::NodeProto* reflect = AddNode(model, "Pad", {"x", "pads"}, {"r"});
  SetString(reflect, "mode", "reflect");
  onnx::NodeProto* wrap = AddNode(model, "Pad", {"x", "pads"}, {"w"});
  SetString(wrap, "mode", "wrap");
  AddOutput(model, "e");
  AddOutput(model, "r");
  AddOutput(model, "w");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({3}, {1, 2, 3})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values((*out)[0]), ElementsAre(1, 1, 1, 2, 3, 3));
  EXPECT_THAT(Values((*out)[1]), ElementsAre(3, 2, 1, 2, 3, 2));
  EXPECT_THAT(Values((*out)[2]), ElementsAre(2, 3, 1, 2, 3, 1));

  // wrap came with opset 19.
  onnx::ModelProto old = Model(18);
  AddInput(old, "x", {3});
  AddInitializer(old, Int64Proto("pads", {2}, {2, 1}));
  onnx::NodeProto* early = AddNode(old, "Pad", {"x", "pads"}, {"w"});
  SetString(early, "mode", "wrap");
  AddOutput(old, "w");
  absl::StatusOr<ImportedModel> rejected = ImportOnnx(old);
  EXPECT_EQ(rejected.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rejected.status().message()),
              HasSubstr("attribute \"mode\" is \"wrap\": expected constant, "
                        "reflect or edge (wrap since opset 19)"));
}

TEST(OnnxImporterTest, PadWithFedPadsAndValue) {
  onnx::ModelProto model = Model(19);
  AddInput(model, "x", {2, 2});
  AddInput(model, "pads", {4}, onnx::TensorProto::INT64);
  AddInput(model, "value", {});
  AddNode(model, "Pad", {"x", "pads", "value"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* pad = FindOp(*imported, "pad");
  ASSERT_NE(pad, nullptr);
  EXPECT_EQ(FindAttr(*pad, "paddings"), nullptr);
  // ONNX's [begin_0, begin_1, end_0, end_1] = [1, 0, 0, 2] pads a row
  // above and two columns to the right.
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({2, 2}, {1, 2, 3, 4})},
                         {"pads", Int64Tensor({4}, {1, 0, 0, 2})},
                         {"value", FloatTensor({}, {9})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 4));
  EXPECT_THAT(Values((*out)[0]),
              ElementsAre(9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9));

  // Fed pads for some axes only: the other axes get none.
  onnx::ModelProto partial = Model(19);
  AddInput(partial, "x", {2, 2});
  AddInput(partial, "pads", {2}, onnx::TensorProto::INT64);
  AddInitializer(partial, Int64Proto("axes", {1}, {-1}));
  AddNode(partial, "Pad", {"x", "pads", "", "axes"}, {"y"});
  AddOutput(partial, "y");
  absl::StatusOr<ImportedModel> some_axes = ImportOnnx(partial);
  ASSERT_TRUE(some_axes.ok()) << some_axes.status();
  out = RunNet(*some_axes, {{"x", FloatTensor({2, 2}, {1, 2, 3, 4})},
                            {"pads", Int64Tensor({2}, {2, 1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 5));
  EXPECT_THAT(Values((*out)[0]), ElementsAre(0, 0, 1, 2, 0, 0, 0, 3, 4, 0));

  onnx::ModelProto twice = Model(19);
  AddInput(twice, "x", {2, 2});
  AddInput(twice, "pads", {4}, onnx::TensorProto::INT64);
  AddInitializer(twice, Int64Proto("axes", {2}, {0, -2}));
  AddNode(twice, "Pad", {"x", "pads", "", "axes"}, {"y"});
  AddOutput(twice, "y");
  EXPECT_THAT(std::string(ImportOnnx(twice).status().message()),
              HasSubstr("axes [0, -2]: expected distinct axes of the rank-2 "
                        "input"));
}

TEST(OnnxImporterTest, BatchNormalizationTrainingMode) {
  onnx::ModelProto model = Model(15);
  AddInput(model, "x", {2, 1, 2});
  AddInitializer(model, FloatProto("s", {1}, {2}));
  AddInitializer(model, FloatProto("b", {1}, {1}));
  AddInitializer(model, FloatProto("mean", {1}, {1}));
  AddInitializer(model, FloatProto("var", {1}, {2}));
  onnx::NodeProto* bn =
      AddNode(model, "BatchNormalization", {"x", "s", "b", "mean", "var"},
              {"y", "running_mean", "running_var"});
  SetInt(bn, "training_mode", 1);
  SetFloat(bn, "momentum", 0.25f);
  SetFloat(bn, "epsilon", 0);
  AddOutput(model, "y");
  AddOutput(model, "running_mean");
  AddOutput(model, "running_var");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* batch_norm = FindOp(*imported, "batch_norm");
  ASSERT_NE(batch_norm, nullptr);
  EXPECT_FALSE(FindAttr(*batch_norm, "is_test")->b());
  EXPECT_FLOAT_EQ(FindAttr(*batch_norm, "momentum")->f(), 0.25f);
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({2, 1, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  // Batch mean 2.5, biased variance 1.25.
  const float inv = 1 / std::sqrt(1.25f);
  EXPECT_THAT(Values((*out)[0]),
              ElementsAre(::testing::FloatNear(-1.5f * inv * 2 + 1, 1e-6),
                          ::testing::FloatNear(-0.5f * inv * 2 + 1, 1e-6),
                          ::testing::FloatNear(0.5f * inv * 2 + 1, 1e-6),
                          ::testing::FloatNear(1.5f * inv * 2 + 1, 1e-6)));
  // running * momentum + batch * (1 - momentum).
  EXPECT_THAT(Values((*out)[1]), ElementsAre(0.25f * 1 + 0.75f * 2.5f));
  EXPECT_THAT(Values((*out)[2]), ElementsAre(0.25f * 2 + 0.75f * 1.25f));
}

TEST(OnnxImporterTest, BatchNormalizationStatisticsOutsideTraining) {
  // training_mode 0 with the running statistics asked for: malformed.
  onnx::ModelProto model = Model(15);
  AddInput(model, "x", {2, 1});
  for (const char* name : {"s", "b", "mean", "var"}) {
    AddInitializer(model, FloatProto(name, {1}, {1}));
  }
  AddNode(model, "BatchNormalization", {"x", "s", "b", "mean", "var"},
          {"y", "m"});
  AddOutput(model, "y");
  AddOutput(model, "m");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("output 1 (\"m\"): the running statistics are outputs "
                        "in training mode only, and training_mode is 0"));
  // Before opset 14 the outputs themselves asked for training.
  onnx::ModelProto old = Model(13);
  AddInput(old, "x", {2, 1});
  for (const char* name : {"s", "b", "mean", "var"}) {
    AddInitializer(old, FloatProto(name, {1}, {1}));
  }
  AddNode(old, "BatchNormalization", {"x", "s", "b", "mean", "var"},
          {"y", "m"});
  AddOutput(old, "y");
  AddOutput(old, "m");
  absl::StatusOr<ImportedModel> unsupported = ImportOnnx(old);
  EXPECT_EQ(unsupported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(unsupported.status().message()),
              HasSubstr("before opset 14 the statistics outputs ask for "
                        "training mode"));
}

}  // namespace
}  // namespace scopeflow
