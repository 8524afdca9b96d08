#include "framework/onnx/onnx_importer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "framework/executor.h"
#include "framework/onnx/onnx_tensor.h"
#include "framework/param_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pointwise;
using ::testing::SizeIs;

// Builders of hand-made ONNX models.

onnx::ModelProto Model(int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  onnx::OperatorSetIdProto* id = model.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  model.mutable_graph()->set_name("test_graph");
  return model;
}

// A tensor type; a negative dim is symbolic ("batch").
void SetType(onnx::ValueInfoProto* value, int32_t elem_type,
             const std::vector<int64_t>& dims) {
  onnx::TypeProto::Tensor* tensor =
      value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  shape->Clear();
  for (int64_t d : dims) {
    if (d < 0) {
      shape->add_dim()->set_dim_param("batch");
    } else {
      shape->add_dim()->set_dim_value(d);
    }
  }
}

void AddInput(onnx::ModelProto& model, const std::string& name,
              const std::vector<int64_t>& dims,
              int32_t elem_type = onnx::TensorProto::FLOAT) {
  onnx::ValueInfoProto* value = model.mutable_graph()->add_input();
  value->set_name(name);
  SetType(value, elem_type, dims);
}

void AddOutput(onnx::ModelProto& model, const std::string& name) {
  model.mutable_graph()->add_output()->set_name(name);
}

onnx::NodeProto* AddNode(onnx::ModelProto& model, const std::string& op_type,
                         const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs,
                         const std::string& name = "") {
  onnx::NodeProto* node = model.mutable_graph()->add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& in : inputs) node->add_input(in);
  for (const std::string& out : outputs) node->add_output(out);
  return node;
}

void SetInt(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

void SetInts(onnx::NodeProto* node, const std::string& name,
             const std::vector<int64_t>& values) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

void SetFloat(onnx::NodeProto* node, const std::string& name, float value) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(value);
}

// A FLOAT tensor with its elements in float_data (the typed field).
onnx::TensorProto FloatProto(const std::string& name,
                             const std::vector<int64_t>& dims,
                             const std::vector<float>& values) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) proto.add_dims(d);
  for (float v : values) proto.add_float_data(v);
  return proto;
}

// An INT64 tensor with its elements in raw_data.
onnx::TensorProto Int64Proto(const std::string& name,
                             const std::vector<int64_t>& dims,
                             const std::vector<int64_t>& values) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) proto.add_dims(d);
  proto.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()),
                                 values.size() * sizeof(int64_t)));
  return proto;
}

void AddInitializer(onnx::ModelProto& model, onnx::TensorProto tensor) {
  *model.mutable_graph()->add_initializer() = std::move(tensor);
}

Tensor FloatTensor(Dims dims, const std::vector<float>& values) {
  Tensor tensor;
  EXPECT_TRUE(tensor.Allocate(CPUPlace(), kFloat32, dims).ok());
  EXPECT_EQ(tensor.numel(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    tensor.data<float>()[i] = values[i];
  return tensor;
}

Tensor Int64Tensor(Dims dims, const std::vector<int64_t>& values) {
  Tensor tensor;
  EXPECT_TRUE(tensor.Allocate(CPUPlace(), kInt64, dims).ok());
  for (size_t i = 0; i < values.size(); ++i) {
    tensor.data<int64_t>()[i] = values[i];
  }
  return tensor;
}

std::vector<float> Values(const Tensor& tensor) {
  const float* data = tensor.data<float>();
  return std::vector<float>(data, data + tensor.numel());
}

// Prepares the imported net on the CPU, runs it once against a scope
// holding its parameters, and fetches the graph outputs.
absl::StatusOr<std::vector<Tensor>> RunNet(const ImportedModel& model,
                                           std::vector<Feed> feeds) {
  const Executor executor;
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(model.net, 0, CPUPlace());
  if (!prepared.ok()) return prepared.status();
  Scope scope;
  absl::Status added = AddParamsToScope(model, scope);
  if (!added.ok()) return added;
  return executor.Run(*prepared, scope, feeds, model.outputs);
}

const VarDef* FindVar(const ImportedModel& model, const std::string& name) {
  for (const VarDef& var : model.net.blocks(0).vars()) {
    if (var.name() == name) return &var;
  }
  return nullptr;
}

const OpDef* FindOp(const ImportedModel& model, const std::string& type) {
  for (const OpDef& op : model.net.blocks(0).ops()) {
    if (op.type() == type) return &op;
  }
  return nullptr;
}

const AttrDef* FindAttr(const OpDef& op, const std::string& name) {
  for (const AttrDef& attr : op.attrs()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::vector<std::string> OpTypes(const ImportedModel& model) {
  std::vector<std::string> types;
  for (const OpDef& op : model.net.blocks(0).ops()) types.push_back(op.type());
  return types;
}

TEST(OnnxImporterTest, GemmWithInitializersBecomesParametersAndRuns) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "a", {-1, 3});
  // B is [N=2, K=3], used transposed; C is a vector bias.
  AddInitializer(model, FloatProto("b", {2, 3}, {1, 2, 3, 4, 5, 6}));
  AddInitializer(model, FloatProto("c", {2}, {0.5f, -1}));
  onnx::NodeProto* gemm = AddNode(model, "Gemm", {"a", "b", "c"}, {"y"}, "fc");
  SetInt(gemm, "transB", 1);
  AddOutput(model, "y");

  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(imported->inputs, ElementsAre("a"));
  EXPECT_THAT(imported->outputs, ElementsAre("y"));
  const VarDef* a = FindVar(*imported, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(a->persistable());
  EXPECT_EQ(a->dtype(), DATA_TYPE_FLOAT32);
  EXPECT_THAT(a->shape(), ElementsAre(-1, 3));
  const VarDef* b = FindVar(*imported, "b");
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->persistable());
  EXPECT_EQ(b->dtype(), DATA_TYPE_FLOAT32);
  EXPECT_THAT(b->shape(), ElementsAre(2, 3));
  ASSERT_THAT(imported->params, SizeIs(2));
  EXPECT_EQ(imported->params[0].name, "b");
  EXPECT_THAT(Values(imported->params[0].tensor),
              ElementsAre(1, 2, 3, 4, 5, 6));
  // alpha = beta = 1 by default: no scale op.
  EXPECT_THAT(OpTypes(*imported), ElementsAre("matmul", "add"));

  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"a", FloatTensor({1, 3}, {1, 0, -1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  // [1, 0, -1] . [1, 2, 3] + 0.5 = -1.5; . [4, 5, 6] - 1 = -3.
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2));
  EXPECT_THAT(Values((*out)[0]), ElementsAre(-1.5f, -3.0f));
}

TEST(OnnxImporterTest, SavedParametersLoadBack) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2});
  AddInitializer(model, FloatProto("w", {2}, {3, 4}));
  AddNode(model, "Mul", {"x", "w"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();

  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/onnx.params";
  ASSERT_TRUE(SaveImportedParams(*imported, path).ok());
  Scope scope;
  absl::StatusOr<std::vector<std::string>> names =
      LoadParams(path, scope, CPUPlace());
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ElementsAre("w"));
  const Tensor* w = *scope.FindVar("w")->Get<Tensor>();
  EXPECT_THAT(Values(*w), ElementsAre(3, 4));
}

TEST(OnnxImporterTest, OnnxDefaultsAreApplied) {
  onnx::ModelProto model = Model(16);
  AddInput(model, "x", {2, 3});
  // LeakyRelu's ONNX default alpha is 0.01 (scopeflow's own is 0.02).
  AddNode(model, "LeakyRelu", {"x"}, {"leaky"});
  // ArgMax defaults: axis 0, keepdims 1.
  AddNode(model, "ArgMax", {"x"}, {"index"});
  // Softmax at opset 13+ defaults to the last axis.
  AddNode(model, "Softmax", {"x"}, {"probabilities"});
  AddOutput(model, "leaky");
  AddOutput(model, "index");
  AddOutput(model, "probabilities");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* leaky = FindOp(*imported, "leaky_relu");
  ASSERT_NE(leaky, nullptr);
  ASSERT_NE(FindAttr(*leaky, "alpha"), nullptr);
  EXPECT_FLOAT_EQ(FindAttr(*leaky, "alpha")->f(), 0.01f);

  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({2, 3}, {-100, 2, 0, 1, -3, 5})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values((*out)[0]), ElementsAre(-1, 2, 0, 1, -0.03f, 5));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(1, 3));
  const int64_t* index = (*out)[1].data<int64_t>();
  EXPECT_THAT(std::vector<int64_t>(index, index + 3), ElementsAre(1, 0, 1));
  const std::vector<float> p = Values((*out)[2]);
  EXPECT_NEAR(p[0] + p[1] + p[2], 1.0f, 1e-6);
  EXPECT_NEAR(p[3] + p[4] + p[5], 1.0f, 1e-6);
}

// The activations of MobileNetV3-, YOLO- and EfficientNet-style nets.
TEST(OnnxImporterTest, GatedActivationsAndReciprocal) {
  onnx::ModelProto model = Model(18);
  AddInput(model, "x", {4});
  AddNode(model, "Reciprocal", {"x"}, {"reciprocal"});
  AddNode(model, "Softplus", {"x"}, {"softplus"});
  onnx::NodeProto* hard_sigmoid =
      AddNode(model, "HardSigmoid", {"x"}, {"hard_sigmoid"});
  SetFloat(hard_sigmoid, "alpha", 0.25f);
  AddNode(model, "HardSigmoid", {"x"}, {"hard_sigmoid_defaults"});
  AddNode(model, "HardSwish", {"x"}, {"hard_swish"});
  AddNode(model, "Mish", {"x"}, {"mish"});
  for (const char* out : {"reciprocal", "softplus", "hard_sigmoid",
                          "hard_sigmoid_defaults", "hard_swish", "mish"}) {
    AddOutput(model, out);
  }
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported),
              ElementsAre("reciprocal", "softplus", "hard_sigmoid",
                          "hard_sigmoid", "hard_swish", "mish"));
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({4}, {-4, -1, 0.5f, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values((*out)[0]), ElementsAre(-0.25f, -1, 2, 0.5f));
  EXPECT_THAT(Values((*out)[1]),
              Pointwise(FloatNear(1e-6),
                        {0.01814993f, 0.31326169f, 0.97407698f, 2.12692801f}));
  // alpha 0.25 with ONNX's default beta 0.5; then both defaults.
  EXPECT_THAT(Values((*out)[2]),
              Pointwise(FloatNear(1e-7), {0.0f, 0.25f, 0.625f, 1.0f}));
  EXPECT_THAT(Values((*out)[3]),
              Pointwise(FloatNear(1e-7), {0.0f, 0.3f, 0.6f, 0.9f}));
  // x max(0, min(1, x / 6 + 1 / 2)).
  EXPECT_THAT(
      Values((*out)[4]),
      Pointwise(FloatNear(1e-7), {0.0f, -1.0f / 3, 7.0f / 24, 5.0f / 3}));
  EXPECT_THAT(Values((*out)[5]),
              Pointwise(FloatNear(1e-6), {-0.07259174f, -0.30340146f,
                                          0.37524521f, 1.94395896f}));
}

TEST(OnnxImporterTest, SoftmaxBeforeOpset13FlattensAtAxisOne) {
  onnx::ModelProto model = Model(11);
  AddInput(model, "x", {1, 2, 2});
  AddNode(model, "Softmax", {"x"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("flatten", "softmax", "reshape"));
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({1, 2, 2}, {0, 0, 0, 0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  // One softmax over all four elements (not two over pairs).
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 2));
  EXPECT_THAT(Values((*out)[0]), ElementsAre(0.25f, 0.25f, 0.25f, 0.25f));
}

// Found by tools/fuzz/onnx_fuzzer (tools/fuzz/onnx_crashes/): each used to
// abort the process.
TEST(OnnxImporterTest, NodeWithoutOutputIsAnError) {
  onnx::ModelProto model = Model(17);
  AddInput(model, "x", {2});
  AddNode(model, "Relu", {"x"}, {}, "silent");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              HasSubstr("node 0 \"silent\" (Relu, opset 17): the node has no "
                        "output"));
}

TEST(OnnxImporterTest, InitializerShapeBeyondItsDataIsAnError) {
  onnx::ModelProto model = Model(17);
  onnx::TensorProto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(1056947198);
  w->add_dims(3);
  w->add_float_data(1);
  AddInput(model, "x", {3});
  AddNode(model, "Add", {"x", "w"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              HasSubstr("tensor \"w\" of shape [1056947198, 3] needs "
                        "3170841594 elements, but the file holds 1"));
}

TEST(OnnxImporterTest, ListsEveryUnsupportedNodeInOneError) {
  onnx::ModelProto model = Model(19);
  AddInput(model, "x", {1, 1, 4, 4});
  AddInput(model, "training", {}, onnx::TensorProto::BOOL);
  AddNode(model, "Relu", {"x"}, {"r"}, "fine");
  AddNode(model, "StringNormalizer", {"r"}, {"big"}, "normalize");
  AddNode(model, "ImageDecoder", {"r"}, {"deconv"}, "decode");
  // Dropout's training mode fed at run time: scopeflow needs it at import.
  AddNode(model, "Dropout", {"r", "", "training"}, {"flat"}, "drop_it");
  onnx::NodeProto* odd = AddNode(model, "Sigmoid", {"r"}, {"s"}, "odd");
  SetInt(odd, "no_such_attribute", 1);
  // Reads the output of a failed node: not reported again.
  AddNode(model, "Relu", {"big"}, {"after"}, "after_normalize");
  AddOutput(model, "after");
  AddOutput(model, "deconv");
  AddOutput(model, "flat");
  AddOutput(model, "s");

  ImportReport report;
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model, {}, &report);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  const std::string message(imported.status().message());
  EXPECT_THAT(message, HasSubstr("4 of 6 node(s) cannot be converted"));
  EXPECT_THAT(message,
              HasSubstr("node 1 \"normalize\" (StringNormalizer, opset 19): "
                        "no converter for ONNX op StringNormalizer"));
  EXPECT_THAT(message, HasSubstr("node 2 \"decode\" (ImageDecoder, opset 19): "
                                 "no converter for ONNX op ImageDecoder"));
  EXPECT_THAT(message, HasSubstr("node 3 \"drop_it\" (Dropout, opset 19): this "
                                 "input must be constant"));
  EXPECT_THAT(message, HasSubstr("input 2 (\"training\") is a graph input"));
  EXPECT_THAT(message, HasSubstr("node 4 \"odd\" (Sigmoid, opset 19): "
                                 "attribute \"no_such_attribute\" not "
                                 "supported"));
  EXPECT_THAT(message, AllOf(Not(HasSubstr("\"fine\"")),
                             Not(HasSubstr("after_normalize"))));
  ASSERT_THAT(report.problems, SizeIs(4));
  EXPECT_EQ(report.problems[0].node_index, 1);
  EXPECT_EQ(report.problems[0].op_type, "StringNormalizer");
  EXPECT_EQ(report.problems[0].opset, 19);
  EXPECT_THAT(report.inputs_needed_as_constants, ElementsAre("training"));
}

TEST(OnnxImporterTest, ConstantInputsMakeAFedShapeUsable) {
  onnx::ModelProto model = Model(14);
  AddInput(model, "x", {2, 3});
  AddInput(model, "shape", {1}, onnx::TensorProto::INT64);
  AddNode(model, "Reshape", {"x", "shape"}, {"y"});
  AddOutput(model, "y");
  ImportOptions options;
  options.constant_inputs["shape"] = Int64Tensor({1}, {-1});
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model, options);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(imported->inputs, ElementsAre("x"));
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(6));

  options.constant_inputs["not_an_input"] = Int64Tensor({1}, {1});
  EXPECT_EQ(ImportOnnx(model, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Whether `op` binds input slot `slot`.
bool Reads(const OpDef& op, const std::string& slot) {
  for (const OpSlot& input : op.inputs()) {
    if (input.slot() == slot) return true;
  }
  return false;
}

// Shapes, axes, sizes, bounds and repeats fed at run time bind the
// scopeflow op's input of the same meaning; constants still fold into
// attributes.
TEST(OnnxImporterTest, FedParametersBindTensorInputs) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2, 3});
  for (const char* name : {"shape", "starts", "ends", "axes", "uaxes"}) {
    AddInput(model, name, {-1}, onnx::TensorProto::INT64);
  }
  AddInput(model, "split", {2}, onnx::TensorProto::INT64);
  AddInput(model, "eshape", {3}, onnx::TensorProto::INT64);
  AddInput(model, "reps", {2}, onnx::TensorProto::INT64);
  AddInput(model, "lo", {});
  AddInput(model, "hi", {});
  AddInitializer(model, Int64Proto("slice_axes", {1}, {1}));
  AddNode(model, "Reshape", {"x", "shape"}, {"r"});
  AddNode(model, "Slice", {"x", "starts", "ends", "slice_axes"}, {"s"});
  SetInt(AddNode(model, "ReduceSum", {"x", "axes"}, {"sum"}), "keepdims", 0);
  AddNode(model, "Unsqueeze", {"x", "uaxes"}, {"u"});
  SetInt(AddNode(model, "Split", {"x", "split"}, {"p", "q"}), "axis", 1);
  AddNode(model, "Clip", {"x", "lo", "hi"}, {"c"});
  AddNode(model, "Expand", {"x", "eshape"}, {"e"});
  AddNode(model, "Tile", {"x", "reps"}, {"t"});
  for (const char* name : {"r", "s", "sum", "u", "p", "q", "c", "e", "t"}) {
    AddOutput(model, name);
  }
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const std::vector<std::pair<std::string, std::vector<std::string>>> bound = {
      {"reshape", {"Shape"}},   {"slice", {"Starts", "Ends"}},
      {"reduce_sum", {"Axes"}}, {"unsqueeze", {"Axes"}},
      {"split", {"Sections"}},  {"clip", {"Min", "Max"}},
      {"expand", {"Shape"}},    {"tile", {"RepeatTimes"}}};
  for (const auto& [type, slots] : bound) {
    SCOPED_TRACE(type);
    const OpDef* op = FindOp(*imported, type);
    ASSERT_NE(op, nullptr);
    for (const std::string& slot : slots) EXPECT_TRUE(Reads(*op, slot));
  }
  // The constant axes of the slice folded.
  EXPECT_FALSE(Reads(*FindOp(*imported, "slice"), "Axes"));
  ASSERT_NE(FindAttr(*FindOp(*imported, "slice"), "axes"), nullptr);
  EXPECT_THAT(imported->params, SizeIs(0));

  auto run = [&](std::vector<int64_t> shape, std::vector<int64_t> axes) {
    return RunNet(
        *imported,
        {{"x", FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6})},
         {"shape", Int64Tensor({static_cast<int64_t>(shape.size())}, shape)},
         {"starts", Int64Tensor({1}, {1})},
         {"ends", Int64Tensor({1}, {std::numeric_limits<int64_t>::max()})},
         {"axes", Int64Tensor({static_cast<int64_t>(axes.size())}, axes)},
         {"uaxes", Int64Tensor({1}, {1})},
         {"split", Int64Tensor({2}, {1, 2})},
         {"eshape", Int64Tensor({3}, {2, 1, 1})},
         {"reps", Int64Tensor({2}, {1, 2})},
         {"lo", FloatTensor({}, {2})},
         {"hi", FloatTensor({}, {5})}});
  };
  absl::StatusOr<std::vector<Tensor>> out = run({3, 2}, {0});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values((*out)[1]), ElementsAre(2, 3, 5, 6));
  EXPECT_THAT(Values((*out)[2]), ElementsAre(5, 7, 9));
  EXPECT_THAT((*out)[3].dims(), ElementsAre(2, 1, 3));
  EXPECT_THAT(Values((*out)[4]), ElementsAre(1, 4));
  EXPECT_THAT(Values((*out)[5]), ElementsAre(2, 3, 5, 6));
  EXPECT_THAT(Values((*out)[6]), ElementsAre(2, 2, 3, 4, 5, 5));
  EXPECT_THAT((*out)[7].dims(), ElementsAre(2, 2, 3));
  EXPECT_THAT(Values((*out)[8]),
              ElementsAre(1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6));
  // Other values, other shapes: the same imported net.
  out = run({-1}, {1});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(6));
  EXPECT_THAT(Values((*out)[2]), ElementsAre(6, 15));
}

TEST(OnnxImporterTest, ReshapeAllowZero) {
  for (const bool fed : {false, true}) {
    SCOPED_TRACE(fed ? "fed" : "constant");
    onnx::ModelProto model = Model(14);
    AddInput(model, "x", {0, 3});
    if (fed) {
      AddInput(model, "shape", {2}, onnx::TensorProto::INT64);
    } else {
      AddInitializer(model, Int64Proto("shape", {2}, {3, 0}));
    }
    SetInt(AddNode(model, "Reshape", {"x", "shape"}, {"y"}), "allowzero", 1);
    AddOutput(model, "y");
    absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
    ASSERT_TRUE(imported.ok()) << imported.status();
    const OpDef* reshape = FindOp(*imported, "reshape");
    ASSERT_NE(reshape, nullptr);
    EXPECT_EQ(Reads(*reshape, "Shape"), fed);
    const AttrDef* allow_zero = FindAttr(*reshape, "allowzero");
    ASSERT_NE(allow_zero, nullptr);
    EXPECT_TRUE(allow_zero->b());
    std::vector<Feed> feeds = {{"x", FloatTensor({0, 3}, {})}};
    if (fed) feeds.push_back({"shape", Int64Tensor({2}, {3, 0})});
    absl::StatusOr<std::vector<Tensor>> out = RunNet(*imported, feeds);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 0));
  }
}

// Fed axes may turn out empty only at run time: noop_with_empty_axes goes
// along to the op.
TEST(OnnxImporterTest, ReduceWithFedAxes) {
  onnx::ModelProto model = Model(18);
  AddInput(model, "x", {2, 2});
  AddInput(model, "axes", {-1}, onnx::TensorProto::INT64);
  onnx::NodeProto* mean = AddNode(model, "ReduceMean", {"x", "axes"}, {"m"});
  SetInt(mean, "noop_with_empty_axes", 1);
  SetInt(mean, "keepdims", 0);
  AddNode(model, "ReduceMax", {"x", "axes"}, {"top"});
  AddOutput(model, "m");
  AddOutput(model, "top");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const Tensor x = FloatTensor({2, 2}, {1, 2, 3, 8});
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", x}, {"axes", Int64Tensor({0}, {})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values((*out)[0]), ElementsAre(1, 2, 3, 8));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(1, 1));
  EXPECT_THAT(Values((*out)[1]), ElementsAre(8));
  out = RunNet(*imported, {{"x", x}, {"axes", Int64Tensor({1}, {0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values((*out)[0]), ElementsAre(2, 5));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(1, 2));
  EXPECT_THAT(Values((*out)[1]), ElementsAre(3, 8));
}

// A constant Clip bound float32 cannot hold exactly binds the op's input
// (as a parameter) rather than rounding into the float attribute.
TEST(OnnxImporterTest, ClipBoundBeyondFloat32IsAnInput) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2}, onnx::TensorProto::INT64);
  const int64_t big = (int64_t{1} << 60) + 1;
  AddInitializer(model, Int64Proto("hi", {}, {big}));
  AddNode(model, "Clip", {"x", "", "hi"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const OpDef* clip = FindOp(*imported, "clip");
  ASSERT_NE(clip, nullptr);
  EXPECT_TRUE(Reads(*clip, "Max"));
  EXPECT_EQ(FindAttr(*clip, "max"), nullptr);
  ASSERT_THAT(imported->params, SizeIs(1));
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", Int64Tensor({2}, {big + 3, -4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<int64_t>()[0], big);
  EXPECT_EQ((*out)[0].data<int64_t>()[1], -4);
}

TEST(OnnxImporterTest, ConstantNodesFoldIntoAttributesOrBecomeParameters) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2, 2});
  // Folded: Unsqueeze's axes (an input since opset 13).
  onnx::NodeProto* axes = AddNode(model, "Constant", {}, {"axes"});
  onnx::AttributeProto* value = axes->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = Int64Proto("", {1}, {0});
  AddNode(model, "Unsqueeze", {"x", "axes"}, {"u"});
  // Read at run time: a parameter.
  onnx::NodeProto* two = AddNode(model, "Constant", {}, {"two"});
  SetFloat(two, "value_float", 2.0f);
  AddNode(model, "Mul", {"u", "two"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("unsqueeze", "mul"));
  ASSERT_THAT(imported->params, SizeIs(1));
  EXPECT_EQ(imported->params[0].name, "two");
  EXPECT_EQ(FindVar(*imported, "axes"), nullptr);
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({2, 2}, {1, 2, 3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 2));
  EXPECT_THAT(Values((*out)[0]), ElementsAre(2, 4, 6, 8));
}

TEST(OnnxImporterTest, AxesMoveFromAttributeToInputWithTheOpset) {
  // ReduceMean: axes attribute at opset 13, an input at opset 18.
  onnx::ModelProto old_model = Model(13);
  AddInput(old_model, "x", {2, 3});
  onnx::NodeProto* mean = AddNode(old_model, "ReduceMean", {"x"}, {"y"});
  SetInts(mean, "axes", {1});
  SetInt(mean, "keepdims", 0);
  AddOutput(old_model, "y");

  onnx::ModelProto new_model = Model(18);
  AddInput(new_model, "x", {2, 3});
  AddInitializer(new_model, Int64Proto("axes", {1}, {-1}));
  onnx::NodeProto* mean18 =
      AddNode(new_model, "ReduceMean", {"x", "axes"}, {"y"});
  SetInt(mean18, "keepdims", 0);
  AddOutput(new_model, "y");

  for (const onnx::ModelProto* model : {&old_model, &new_model}) {
    absl::StatusOr<ImportedModel> imported = ImportOnnx(*model);
    ASSERT_TRUE(imported.ok()) << imported.status();
    // The axes were folded: no parameter.
    EXPECT_THAT(imported->params, SizeIs(0));
    absl::StatusOr<std::vector<Tensor>> out =
        RunNet(*imported, {{"x", FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6})}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT((*out)[0].dims(), ElementsAre(2));
    EXPECT_THAT(Values((*out)[0]), ElementsAre(2, 5));
  }

  // At opset 13 an axes attribute on ReduceSum is gone: axes is an input.
  onnx::ModelProto stale = Model(13);
  AddInput(stale, "x", {2, 3});
  SetInts(AddNode(stale, "ReduceSum", {"x"}, {"y"}), "axes", {1});
  AddOutput(stale, "y");
  absl::StatusOr<ImportedModel> rejected = ImportOnnx(stale);
  EXPECT_THAT(std::string(rejected.status().message()),
              HasSubstr("attribute \"axes\" not supported"));
}

TEST(OnnxImporterTest, ReduceWithEmptyAxesIsANoopWhenAsked) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2});
  AddInitializer(model, Int64Proto("axes", {0}, {}));
  onnx::NodeProto* sum = AddNode(model, "ReduceSum", {"x", "axes"}, {"same"});
  SetInt(sum, "noop_with_empty_axes", 1);
  AddNode(model, "ReduceSum", {"x", "axes"}, {"total"});
  AddOutput(model, "same");
  AddOutput(model, "total");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({2}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values((*out)[0]), ElementsAre(1, 2));
  // keepdims = 1 by default.
  EXPECT_THAT((*out)[1].dims(), ElementsAre(1));
  EXPECT_THAT(Values((*out)[1]), ElementsAre(3));
}

TEST(OnnxImporterTest, SplitNumOutputsMakesTheLastPartSmaller) {
  onnx::ModelProto model = Model(18);
  AddInput(model, "x", {7});
  onnx::NodeProto* split = AddNode(model, "Split", {"x"}, {"a", "b", "c"});
  SetInt(split, "num_outputs", 3);
  AddOutput(model, "a");
  AddOutput(model, "b");
  AddOutput(model, "c");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", FloatTensor({7}, {0, 1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values((*out)[0]), ElementsAre(0, 1, 2));
  EXPECT_THAT(Values((*out)[1]), ElementsAre(3, 4, 5));
  EXPECT_THAT(Values((*out)[2]), ElementsAre(6));
}

TEST(OnnxImporterTest, MatMulOfVectorsFollowsNumpy) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "a", {3});
  AddInput(model, "b", {3});
  AddNode(model, "MatMul", {"a", "b"}, {"dot"});
  AddOutput(model, "dot");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out = RunNet(
      *imported,
      {{"a", FloatTensor({3}, {1, 2, 3})}, {"b", FloatTensor({3}, {4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].rank(), 0);
  EXPECT_THAT(Values((*out)[0]), ElementsAre(32));
}

// A vector against a batch of matrices, either side: numpy drops the
// vector's dimension, and the batch broadcasts.
TEST(OnnxImporterTest, MatMulOfAVectorAndABatchFollowsNumpy) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "v", {3});
  AddInput(model, "m", {2, 3, 3});
  AddNode(model, "MatMul", {"v", "m"}, {"row"});
  AddNode(model, "MatMul", {"m", "v"}, {"column"});
  AddOutput(model, "row");
  AddOutput(model, "column");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  // m[0] = [[1 2 3] [4 5 6] [7 8 9]], m[1] its negative.
  std::vector<float> m = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (int i = 0; i < 9; ++i) m.push_back(-m[i]);
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"v", FloatTensor({3}, {1, 0, -1})},
                         {"m", FloatTensor({2, 3, 3}, m)}});
  ASSERT_TRUE(out.ok()) << out.status();
  // v m[b]: row 0 minus row 2; m[b] v: column 0 minus column 2.
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values((*out)[0]), ElementsAre(-6, -6, -6, 6, 6, 6));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values((*out)[1]), ElementsAre(-2, -2, -2, 2, 2, 2));
}

TEST(OnnxImporterTest, MissingKernelDtypeIsUnsupported) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2}, onnx::TensorProto::INT64);
  AddNode(model, "Exp", {"x"}, {"y"}, "int_exp");
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("no CPU kernel for int64"));
}

TEST(OnnxImporterTest, OpsetOutsideTheRangeIsUnsupported) {
  onnx::ModelProto model = Model(28);
  AddInput(model, "x", {2});
  AddNode(model, "Relu", {"x"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("opset 28 is outside the supported range 1 to 27"));
}

TEST(OnnxImporterTest, OtherDomainsOnlyAreUnsupported) {
  onnx::ModelProto model;
  onnx::OperatorSetIdProto* id = model.add_opset_import();
  id->set_domain("ai.onnx.ml");
  id->set_version(3);
  AddInput(model, "x", {2});
  AddNode(model, "Binarizer", {"x"}, {"y"})->set_domain("ai.onnx.ml");
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("imports only the domain(s) ai.onnx.ml 3 and no "
                        "version of the default ONNX domain"));
  model.clear_opset_import();
  imported = ImportOnnx(model);
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OnnxImporterTest, MalformedGraphsAreInvalid) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2});
  AddNode(model, "Add", {"x", "nowhere"}, {"y"}, "bad_add");
  AddNode(model, "Concat", {"x", "x"}, {"z"}, "no_axis");
  AddOutput(model, "y");
  AddOutput(model, "z");
  AddOutput(model, "never_made");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(imported.status().message());
  EXPECT_THAT(message, HasSubstr("node 0 \"bad_add\" (Add, opset 13): input 1 "
                                 "(\"nowhere\") is no graph input"));
  EXPECT_THAT(message, HasSubstr("missing required attribute \"axis\""));
  EXPECT_THAT(message, HasSubstr("graph output \"never_made\""));
}

TEST(OnnxImporterTest, OutputsMustAgreeWithTheirDeclaredTypes) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2, 3});
  AddNode(model, "Relu", {"x"}, {"y"});
  onnx::ValueInfoProto* y = model.mutable_graph()->add_output();
  y->set_name("y");
  SetType(y, onnx::TensorProto::FLOAT, {2, 3});
  ASSERT_TRUE(ImportOnnx(model).ok());
  SetType(y, onnx::TensorProto::INT64, {2, 3});
  absl::StatusOr<ImportedModel> wrong_type = ImportOnnx(model);
  EXPECT_EQ(wrong_type.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(wrong_type.status().message()),
              HasSubstr("graph output \"y\": the conversion makes it float32 "
                        "[2, 3], but the model declares int64 [2, 3]"));
  SetType(y, onnx::TensorProto::FLOAT, {3, 2});
  EXPECT_EQ(ImportOnnx(model).status().code(), absl::StatusCode::kInternal);
}

TEST(OnnxTensorTest, ReadsTypedFieldsAndRawData) {
  absl::StatusOr<Tensor> floats =
      onnx_import::TensorFromOnnx(FloatProto("f", {2}, {1.5f, -2}));
  ASSERT_TRUE(floats.ok()) << floats.status();
  EXPECT_THAT(Values(*floats), ElementsAre(1.5f, -2));

  absl::StatusOr<Tensor> ints =
      onnx_import::TensorFromOnnx(Int64Proto("i", {2, 1}, {7, -8}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(ints->dims(), ElementsAre(2, 1));
  EXPECT_EQ(ints->data<int64_t>()[1], -8);

  onnx::TensorProto bools;
  bools.set_data_type(onnx::TensorProto::BOOL);
  bools.add_dims(3);
  bools.add_int32_data(1);
  bools.add_int32_data(0);
  bools.add_int32_data(1);
  absl::StatusOr<Tensor> b = onnx_import::TensorFromOnnx(bools);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->dtype(), kBool);
  EXPECT_TRUE(b->data<bool>()[2]);
  EXPECT_FALSE(b->data<bool>()[1]);

  onnx::TensorProto short_raw = Int64Proto("short", {3}, {1, 2});
  EXPECT_THAT(
      std::string(onnx_import::TensorFromOnnx(short_raw).status().message()),
      HasSubstr("raw_data holds 16 bytes"));
  onnx::TensorProto text;
  text.set_name("q");
  text.set_data_type(onnx::TensorProto::STRING);
  EXPECT_EQ(onnx_import::TensorFromOnnx(text).status().code(),
            absl::StatusCode::kUnimplemented);

  // INT8 as raw bytes (two's complement) and in int32_data, one per entry.
  onnx::TensorProto int8_raw;
  int8_raw.set_name("q8");
  int8_raw.set_data_type(onnx::TensorProto::INT8);
  int8_raw.add_dims(3);
  int8_raw.set_raw_data(std::string("\x80\xff\x7f", 3));
  absl::StatusOr<Tensor> q8 = onnx_import::TensorFromOnnx(int8_raw);
  ASSERT_TRUE(q8.ok()) << q8.status();
  EXPECT_EQ(q8->dtype(), kInt8);
  EXPECT_EQ(q8->data<int8_t>()[0], -128);
  EXPECT_EQ(q8->data<int8_t>()[1], -1);
  EXPECT_EQ(q8->data<int8_t>()[2], 127);
  onnx::TensorProto int8_typed;
  int8_typed.set_name("q8t");
  int8_typed.set_data_type(onnx::TensorProto::INT8);
  int8_typed.add_dims(2);
  int8_typed.add_int32_data(-5);
  int8_typed.add_int32_data(100);
  absl::StatusOr<Tensor> q8t = onnx_import::TensorFromOnnx(int8_typed);
  ASSERT_TRUE(q8t.ok()) << q8t.status();
  EXPECT_EQ(q8t->data<int8_t>()[0], -5);
  EXPECT_EQ(q8t->data<int8_t>()[1], 100);
  EXPECT_EQ(onnx_import::OnnxTypeFromDataType(kInt8), onnx::TensorProto::INT8);
}

TEST(OnnxTensorTest, ReadsTheWiderIntegersAndBFloat16) {
  // INT16 and UINT16 in int32_data, UINT32 and UINT64 in uint64_data.
  onnx::TensorProto int16;
  int16.set_data_type(onnx::TensorProto::INT16);
  int16.add_dims(2);
  int16.add_int32_data(-32768);
  int16.add_int32_data(32767);
  absl::StatusOr<Tensor> i16 = onnx_import::TensorFromOnnx(int16);
  ASSERT_TRUE(i16.ok()) << i16.status();
  EXPECT_EQ(i16->dtype(), kInt16);
  EXPECT_EQ(i16->data<int16_t>()[0], -32768);
  EXPECT_EQ(i16->data<int16_t>()[1], 32767);

  onnx::TensorProto uint64;
  uint64.set_data_type(onnx::TensorProto::UINT64);
  uint64.add_dims(1);
  uint64.add_uint64_data(18446744073709551615u);
  absl::StatusOr<Tensor> u64 = onnx_import::TensorFromOnnx(uint64);
  ASSERT_TRUE(u64.ok()) << u64.status();
  EXPECT_EQ(u64->dtype(), kUInt64);
  EXPECT_EQ(u64->data<uint64_t>()[0], 18446744073709551615u);

  onnx::TensorProto uint32;
  uint32.set_data_type(onnx::TensorProto::UINT32);
  uint32.add_dims(1);
  uint32.add_uint64_data(4294967295u);
  absl::StatusOr<Tensor> u32 = onnx_import::TensorFromOnnx(uint32);
  ASSERT_TRUE(u32.ok()) << u32.status();
  EXPECT_EQ(u32->data<uint32_t>()[0], 4294967295u);

  // Raw little-endian bytes: 0x8001 is 32769 as uint16.
  onnx::TensorProto uint16;
  uint16.set_data_type(onnx::TensorProto::UINT16);
  uint16.add_dims(1);
  uint16.set_raw_data(std::string("\x01\x80", 2));
  absl::StatusOr<Tensor> u16 = onnx_import::TensorFromOnnx(uint16);
  ASSERT_TRUE(u16.ok()) << u16.status();
  EXPECT_EQ(u16->data<uint16_t>()[0], 32769);

  // BFLOAT16 entries of int32_data are bit patterns: 0x3fc0 is 1.5.
  onnx::TensorProto bf16;
  bf16.set_data_type(onnx::TensorProto::BFLOAT16);
  bf16.add_dims(1);
  bf16.add_int32_data(0x3fc0);
  absl::StatusOr<Tensor> b = onnx_import::TensorFromOnnx(bf16);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->dtype(), kBFloat16);
  EXPECT_EQ(BFloat16ToFloat(b->data<bfloat16>()[0]), 1.5f);
  EXPECT_EQ(onnx_import::OnnxTypeFromDataType(kUInt32),
            onnx::TensorProto::UINT32);
  EXPECT_EQ(onnx_import::OnnxTypeFromDataType(kBFloat16),
            onnx::TensorProto::BFLOAT16);
}

}  // namespace
}  // namespace scopeflow
