// Importing ONNX Resize, Upsample and ConvTranspose: which scopeflow ops
// and attributes they become, what runs, and what is refused.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/param_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

onnx::ModelProto Model(int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  onnx::OperatorSetIdProto* id = model.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  model.mutable_graph()->set_name("test_graph");
  return model;
}

// A graph input; a negative dim is symbolic.
void AddInput(onnx::ModelProto& model, const std::string& name,
              const std::vector<int64_t>& dims,
              int32_t elem_type = onnx::TensorProto::FLOAT) {
  onnx::ValueInfoProto* value = model.mutable_graph()->add_input();
  value->set_name(name);
  onnx::TypeProto::Tensor* tensor =
      value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  for (int64_t d : dims) {
    if (d < 0) {
      tensor->mutable_shape()->add_dim()->set_dim_param("n");
    } else {
      tensor->mutable_shape()->add_dim()->set_dim_value(d);
    }
  }
}

onnx::NodeProto* AddNode(onnx::ModelProto& model, const std::string& op_type,
                         const std::vector<std::string>& inputs,
                         const std::string& output) {
  onnx::NodeProto* node = model.mutable_graph()->add_node();
  node->set_op_type(op_type);
  for (const std::string& in : inputs) node->add_input(in);
  node->add_output(output);
  model.mutable_graph()->add_output()->set_name(output);
  return node;
}

void SetInts(onnx::NodeProto* node, const std::string& name,
             const std::vector<int64_t>& values) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

void SetString(onnx::NodeProto* node, const std::string& name,
               const std::string& value) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(value);
}

void AddFloats(onnx::ModelProto& model, const std::string& name,
               const std::vector<int64_t>& dims,
               const std::vector<float>& values) {
  onnx::TensorProto* proto = model.mutable_graph()->add_initializer();
  proto->set_name(name);
  proto->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) proto->add_dims(d);
  for (float v : values) proto->add_float_data(v);
}

void AddInt64s(onnx::ModelProto& model, const std::string& name,
               const std::vector<int64_t>& values) {
  onnx::TensorProto* proto = model.mutable_graph()->add_initializer();
  proto->set_name(name);
  proto->set_data_type(onnx::TensorProto::INT64);
  proto->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) proto->add_int64_data(v);
}

template <typename T>
Tensor MakeTensor(Dims dims, const std::vector<T>& values) {
  Tensor tensor;
  EXPECT_TRUE(tensor.Allocate(CPUPlace(), DataTypeOf<T>(), dims).ok());
  for (size_t i = 0; i < values.size(); ++i) tensor.data<T>()[i] = values[i];
  return tensor;
}

std::vector<float> Values(const Tensor& tensor) {
  return std::vector<float>(tensor.data<float>(),
                            tensor.data<float>() + tensor.numel());
}

absl::StatusOr<Tensor> RunNet(const ImportedModel& model,
                              std::vector<Feed> feeds) {
  const Executor executor;
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(model.net, 0, CPUPlace());
  if (!prepared.ok()) return prepared.status();
  Scope scope;
  absl::Status added = AddParamsToScope(model, scope);
  if (!added.ok()) return added;
  absl::StatusOr<std::vector<Tensor>> out =
      executor.Run(*prepared, scope, feeds, model.outputs);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

std::vector<std::string> OpTypes(const ImportedModel& model) {
  std::vector<std::string> types;
  for (const OpDef& op : model.net.blocks(0).ops()) types.push_back(op.type());
  return types;
}

const AttrDef* FindAttr(const OpDef& op, const std::string& name) {
  for (const AttrDef& attr : op.attrs()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::vector<std::string> InputSlots(const OpDef& op) {
  std::vector<std::string> slots;
  for (const OpSlot& slot : op.inputs()) slots.push_back(slot.slot());
  return slots;
}

const Tensor kTwoByTwo = MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});

TEST(ImportResizeTest, ConstantScalesBecomeAnAttribute) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {1, 1, 2, 2});
  AddFloats(model, "scales", {4}, {1, 1, 2, 2});
  AddNode(model, "Resize", {"x", "", "scales"}, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_THAT(OpTypes(*imported), ElementsAre("resize"));
  const OpDef& op = imported->net.blocks(0).ops(0);
  EXPECT_THAT(FindAttr(op, "scales")->floats().values(),
              ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(InputSlots(op), ElementsAre("X"));
  EXPECT_THAT(imported->params, IsEmpty());
  absl::StatusOr<Tensor> y = RunNet(*imported, {{"x", kTwoByTwo}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values(*y),
              ElementsAre(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4));
}

// Sizes fed at run time bind the op's Sizes input: the output size follows
// the values of each run.
TEST(ImportResizeTest, SizesFedAtRunTimeBindAnInput) {
  onnx::ModelProto model = Model(19);
  AddInput(model, "x", {1, 1, 2, 2});
  AddInput(model, "sizes", {2}, onnx::TensorProto::INT64);
  onnx::NodeProto* node = AddNode(model, "Resize", {"x", "", "", "sizes"}, "y");
  SetString(node, "mode", "linear");
  SetInts(node, "axes", {3, 2});
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(imported->inputs, ElementsAre("x", "sizes"));
  const OpDef& op = imported->net.blocks(0).ops(0);
  EXPECT_THAT(InputSlots(op), ElementsAre("X", "Sizes"));
  EXPECT_THAT(FindAttr(op, "axes")->ints().values(), ElementsAre(3, 2));
  absl::StatusOr<Tensor> y =
      RunNet(*imported,
             {{"x", kTwoByTwo}, {"sizes", MakeTensor<int64_t>({2}, {4, 1})}});
  ASSERT_TRUE(y.ok()) << y.status();
  // Height 1 samples between the rows ([2, 3]), width 4 spreads that.
  EXPECT_THAT(y->dims(), ElementsAre(1, 1, 1, 4));
  EXPECT_THAT(Values(*y), ElementsAre(2, 2.25, 2.75, 3));
}

// Opset 11 passes an empty scales next to sizes; roi only matters for
// tf_crop_and_resize.
TEST(ImportResizeTest, EmptyScalesAndUnusedRoiAreDropped) {
  onnx::ModelProto model = Model(11);
  AddInput(model, "x", {1, 1, 2, 2});
  AddFloats(model, "roi", {0}, {});
  AddFloats(model, "scales", {0}, {});
  AddInt64s(model, "sizes", {1, 1, 3, 3});
  AddNode(model, "Resize", {"x", "roi", "scales", "sizes"}, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef& op = imported->net.blocks(0).ops(0);
  EXPECT_THAT(InputSlots(op), ElementsAre("X"));
  EXPECT_THAT(FindAttr(op, "sizes")->i64s().values(), ElementsAre(1, 1, 3, 3));
  EXPECT_EQ(FindAttr(op, "scales"), nullptr);
  EXPECT_EQ(FindAttr(op, "roi"), nullptr);
  EXPECT_THAT(imported->params, IsEmpty());
}

TEST(ImportResizeTest, CropAndResizeTakesTheRoi) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {1, 4});
  AddFloats(model, "roi", {4}, {0, 0.4f, 1, 1.2f});
  AddInt64s(model, "sizes", {1, 3});
  onnx::NodeProto* node =
      AddNode(model, "Resize", {"x", "roi", "", "sizes"}, "y");
  SetString(node, "mode", "linear");
  SetString(node, "coordinate_transformation_mode", "tf_crop_and_resize");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<Tensor> y =
      RunNet(*imported, {{"x", MakeTensor<float>({1, 4}, {0, 10, 20, 30})}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values(*y), ElementsAre(testing::FloatNear(12, 1e-4),
                                      testing::FloatNear(24, 1e-4), 0));
}

// Opset 11's tf_half_pixel_for_nn: samples at (x + 0.5) / scale.
TEST(ImportResizeTest, Opset11HalfPixelForNearestNeighbours) {
  onnx::ModelProto model = Model(11);
  AddInput(model, "x", {1, 3});
  AddFloats(model, "roi", {0}, {});
  AddFloats(model, "scales", {2}, {1, 0.5});
  onnx::NodeProto* node = AddNode(model, "Resize", {"x", "roi", "scales"}, "y");
  SetString(node, "coordinate_transformation_mode", "tf_half_pixel_for_nn");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<Tensor> y =
      RunNet(*imported, {{"x", MakeTensor<float>({1, 3}, {1, 2, 3})}});
  ASSERT_TRUE(y.ok()) << y.status();
  // One sample, at 1.
  EXPECT_THAT(Values(*y), ElementsAre(2));
}

TEST(ImportResizeTest, NeedsScalesOrSizes) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {1, 2});
  AddNode(model, "Resize", {"x"}, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("neither scales (input 2) nor sizes (input 3) is "
                        "given"));
}

TEST(ImportConvTransposeTest, PadsAndStrides) {
  onnx::ModelProto model = Model(22);
  AddInput(model, "x", {1, 1, 2, 2});
  AddFloats(model, "w", {1, 1, 2, 2}, {1, 1, 1, 1});
  onnx::NodeProto* node = AddNode(model, "ConvTranspose", {"x", "w"}, "y");
  SetInts(node, "strides", {2, 2});
  SetInts(node, "pads", {1, 0, 0, 1});
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_THAT(OpTypes(*imported), ElementsAre("conv2d_transpose"));
  // ONNX [h_begin, w_begin, h_end, w_end] -> [top, bottom, left, right].
  EXPECT_THAT(
      FindAttr(imported->net.blocks(0).ops(0), "paddings")->ints().values(),
      ElementsAre(1, 0, 0, 1));
  absl::StatusOr<Tensor> y = RunNet(*imported, {{"x", kTwoByTwo}});
  ASSERT_TRUE(y.ok()) << y.status();
  // Each cell fills a 2x2 block of the 4x4 output; the first row and the
  // last column are cropped.
  EXPECT_THAT(y->dims(), ElementsAre(1, 1, 3, 3));
  EXPECT_THAT(Values(*y), ElementsAre(1, 1, 2, 3, 3, 4, 3, 3, 4));
}

TEST(ImportConvTransposeTest, OneDimensionalRunsAsTwoDimensional) {
  onnx::ModelProto model = Model(22);
  AddInput(model, "x", {1, 1, 3});
  AddFloats(model, "w", {1, 1, 2}, {1, 1});
  AddFloats(model, "b", {1}, {0.5});
  AddNode(model, "ConvTranspose", {"x", "w", "b"}, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  // The filter's unsqueeze is folded at import (ImportOptions::
  // fold_constants); the input's runs.
  EXPECT_THAT(OpTypes(*imported),
              ElementsAre("unsqueeze", "conv2d_transpose", "squeeze"));
  absl::StatusOr<Tensor> y =
      RunNet(*imported, {{"x", MakeTensor<float>({1, 1, 3}, {1, 2, 3})}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 1, 4));
  EXPECT_THAT(Values(*y), ElementsAre(1.5, 3.5, 5.5, 3.5));
}

TEST(ImportConvTransposeTest, ThreeDimensional) {
  onnx::ModelProto model = Model(22);
  AddInput(model, "x", {1, 1, 2, 2, 2});
  AddFloats(model, "w", {1, 2, 1, 1, 1}, {1, -1});
  AddNode(model, "ConvTranspose", {"x", "w"}, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("conv3d_transpose"));
  absl::StatusOr<Tensor> y = RunNet(
      *imported,
      {{"x", MakeTensor<float>({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims(), ElementsAre(1, 2, 2, 2, 2));
  EXPECT_THAT(Values(*y), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4,
                                      -5, -6, -7, -8));
}

// output_shape and SAME_* set the paddings as ONNX derives them; an output
// beyond the unpadded one grows at the end (output_padding).
TEST(ImportConvTransposeTest, OutputShapeAndAutoPad) {
  struct Case {
    std::string auto_pad;
    std::vector<int64_t> output_shape;
    std::vector<int32_t> paddings;
    std::vector<int32_t> output_padding;
  };
  // Input 3x3, kernel 3, stride 2: 7x7 unpadded.
  const std::vector<Case> cases = {
      {"SAME_UPPER", {}, {0, 1, 0, 1}, {0, 0}},
      {"SAME_LOWER", {}, {1, 0, 1, 0}, {0, 0}},
      {"NOTSET", {6, 7}, {1, 0, 0, 0}, {0, 0}},
      {"NOTSET", {1, 1, 8, 5}, {0, 0, 1, 1}, {1, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.auto_pad);
    onnx::ModelProto model = Model(22);
    AddInput(model, "x", {1, 1, 3, 3});
    AddFloats(model, "w", {1, 1, 3, 3}, std::vector<float>(9, 1));
    onnx::NodeProto* node = AddNode(model, "ConvTranspose", {"x", "w"}, "y");
    SetInts(node, "strides", {2, 2});
    SetString(node, "auto_pad", c.auto_pad);
    if (!c.output_shape.empty()) SetInts(node, "output_shape", c.output_shape);
    absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
    ASSERT_TRUE(imported.ok()) << imported.status();
    const OpDef& op = imported->net.blocks(0).ops(0);
    EXPECT_THAT(FindAttr(op, "paddings")->ints().values(),
                testing::ElementsAreArray(c.paddings));
    EXPECT_THAT(FindAttr(op, "output_padding")->ints().values(),
                testing::ElementsAreArray(c.output_padding));
  }
}

TEST(ImportConvTransposeTest, Refusals) {
  onnx::ModelProto model = Model(22);
  AddInput(model, "x", {1, 1, -1, 3});
  AddFloats(model, "w", {1, 1, 3, 3}, std::vector<float>(9, 1));
  onnx::NodeProto* node = AddNode(model, "ConvTranspose", {"x", "w"}, "y");
  SetString(node, "auto_pad", "SAME_UPPER");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("auto_pad = SAME_UPPER needs the input's spatial size "
                        "and the kernel's to derive the paddings"));

  model = Model(22);
  AddInput(model, "x", {1, 1, 3, 3});
  AddFloats(model, "w", {1, 1, 3, 3}, std::vector<float>(9, 1));
  node = AddNode(model, "ConvTranspose", {"x", "w"}, "y");
  SetInts(node, "strides", {2, 2});
  SetString(node, "auto_pad", "SAME_UPPER");
  SetInts(node, "output_shape", {6, 9});
  imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("an output of 9 cells along spatial axis 1 needs 1 "
                        "cells of padding before the input"));
}

}  // namespace
}  // namespace scopeflow
