// Importing ONNX If, Loop and Scan: hand-built models whose results are
// worked by hand, subgraphs reading enclosing values and constants, nested
// control flow, shapes inferred through the ops, the errors of malformed
// subgraphs, and a torch.jit.script export against torch's own outputs
// (testdata/control_flow/make_control_flow_models.py).
#include <string>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_tensor.h"
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
using onnx_testing::FloatProto;
using onnx_testing::Int64Proto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::RunNet;
using onnx_testing::SetGraph;
using onnx_testing::SetInt;
using onnx_testing::SetInts;
using onnx_testing::Values;

constexpr int32_t kOnnxBool = onnx::TensorProto::BOOL;
constexpr int32_t kOnnxInt64 = onnx::TensorProto::INT64;

Tensor Bool(bool value) { return MakeTensor<bool>({}, {value}); }

// z = Transpose(If(c, Relu(x), Concat(x, x)) ): the branches make [2, 3]
// and [4, 3], and the Transpose after them needs the rank the two agree on.
onnx::ModelProto IfWithShapesThatDiffer() {
  onnx::ModelProto model = Model(13);
  AddInput(model, "c", {}, kOnnxBool);
  AddInput(model, "x", {2, 3});
  onnx::ModelProto then_branch = Model(13);
  AddNode(then_branch, "Relu", {"x"}, {"relu"});
  AddOutput(then_branch, "relu");
  onnx::ModelProto else_branch = Model(13);
  SetInt(AddNode(else_branch, "Concat", {"x", "x"}, {"twice"}), "axis", 0);
  AddOutput(else_branch, "twice");
  onnx::NodeProto* node = AddNode(model, "If", {"c"}, {"y"}, "choose");
  SetGraph(node, "then_branch", then_branch);
  SetGraph(node, "else_branch", else_branch);
  SetInts(AddNode(model, "Transpose", {"y"}, {"z"}), "perm", {1, 0});
  AddOutput(model, "z");
  return model;
}

TEST(ControlFlowImportTest, IfRunsTheBranchTheConditionSelects) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(IfWithShapesThatDiffer());
  ASSERT_TRUE(imported.ok()) << imported.status();
  const Tensor x = MakeTensor<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  absl::StatusOr<std::vector<Tensor>> yes =
      RunNet(*imported, {{"c", Bool(true)}, {"x", x}});
  ASSERT_TRUE(yes.ok()) << yes.status();
  EXPECT_EQ((*yes)[0].dims(), (Dims{3, 2}));
  EXPECT_THAT(Values<float>((*yes)[0]), ElementsAre(0, 4, 2, 0, 0, 6));
  absl::StatusOr<std::vector<Tensor>> no =
      RunNet(*imported, {{"c", Bool(false)}, {"x", x}});
  ASSERT_TRUE(no.ok()) << no.status();
  EXPECT_EQ((*no)[0].dims(), (Dims{3, 4}));
  EXPECT_THAT(Values<float>((*no)[0]),
              ElementsAre(-1, 4, -1, 4, 2, -5, 2, -5, -3, 6, -3, 6));
}

// If(c) { If(d) { x * w } else { x + k } } else { 7 }: an initializer of the
// model (w), a Constant node of a branch (k), a branch's initializer (7)
// and an If nested in a branch.
TEST(ControlFlowImportTest, NestedIfReadsEnclosingValuesAndConstants) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "c", {}, kOnnxBool);
  AddInput(model, "d", {}, kOnnxBool);
  AddInput(model, "x", {2});
  AddInitializer(model, FloatProto("w", {2}, {10, 100}));
  onnx::ModelProto times = Model(13);
  AddNode(times, "Mul", {"x", "w"}, {"xw"});
  AddOutput(times, "xw");
  onnx::ModelProto plus = Model(13);
  onnx_testing::SetTensor(AddNode(plus, "Constant", {}, {"k"}), "value",
                          FloatProto("", {1}, {0.5}));
  AddNode(plus, "Add", {"x", "k"}, {"xk"});
  AddOutput(plus, "xk");
  onnx::ModelProto outer_then = Model(13);
  onnx::NodeProto* inner = AddNode(outer_then, "If", {"d"}, {"inner"});
  SetGraph(inner, "then_branch", times);
  SetGraph(inner, "else_branch", plus);
  AddOutput(outer_then, "inner");
  onnx::ModelProto outer_else = Model(13);
  AddInitializer(outer_else, FloatProto("seven", {2}, {7, 7}));
  AddOutput(outer_else, "seven");
  onnx::NodeProto* node = AddNode(model, "If", {"c"}, {"y"});
  SetGraph(node, "then_branch", outer_then);
  SetGraph(node, "else_branch", outer_else);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  const Tensor x = MakeTensor<float>({2}, {1, 2});
  const struct {
    bool c, d;
    std::vector<float> want;
  } cases[] = {{true, true, {10, 200}},
               {true, false, {1.5, 2.5}},
               {false, true, {7, 7}},
               {false, false, {7, 7}}};
  for (const auto& one : cases) {
    absl::StatusOr<std::vector<Tensor>> out = RunNet(
        *imported, {{"c", Bool(one.c)}, {"d", Bool(one.d)}, {"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), one.want) << one.c << one.d;
  }
}

TEST(ControlFlowImportTest, IfBranchesMustMakeTheNodesOutputs) {
  onnx::ModelProto model = IfWithShapesThatDiffer();
  onnx::GraphProto* else_branch =
      model.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g();
  else_branch->add_output()->set_name("x");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              HasSubstr("node 0 \"choose\" (If, opset 13): attribute "
                        "\"else_branch\": the subgraph has 2 outputs, but the "
                        "node 1"));
}

TEST(ControlFlowImportTest, ASubgraphReadingAnUnknownNameIsRefused) {
  onnx::ModelProto model = IfWithShapesThatDiffer();
  model.mutable_graph()
      ->mutable_node(0)
      ->mutable_attribute(0)
      ->mutable_g()
      ->mutable_node(0)
      ->set_input(0, "nowhere");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(imported.status().message(),
              HasSubstr("node 0 \"choose\" (If, opset 13): attribute "
                        "\"then_branch\": node 0 (Relu): input 0 "
                        "(\"nowhere\") is no input or initializer of the "
                        "subgraph, nor the output of an earlier node, nor a "
                        "value of an enclosing graph"));
}

TEST(ControlFlowImportTest, ASubgraphOutputNothingMakesIsRefused) {
  onnx::ModelProto model = IfWithShapesThatDiffer();
  model.mutable_graph()
      ->mutable_node(0)
      ->mutable_attribute(0)
      ->mutable_g()
      ->mutable_output(0)
      ->set_name("missing");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              HasSubstr("(If, opset 13): attribute \"then_branch\": output 0 "
                        "(\"missing\") is produced by no node"));
}

// ONNX's expanded AffineGrid guards a Split that only fits 2-D grids with
// an If: a branch's node that cannot convert for the shapes at hand is
// something scopeflow lacks (it converts both branches), not a bad model.
TEST(ControlFlowImportTest, ABranchThatCannotConvertIsUnsupported) {
  onnx::ModelProto model = Model(18);
  AddInput(model, "c", {}, kOnnxBool);
  AddInput(model, "x", {5});
  onnx::ModelProto then_branch = Model(18);
  onnx::NodeProto* split =
      AddNode(then_branch, "Split", {"x"}, {"p0", "p1", "p2", "p3"});
  SetInt(split, "num_outputs", 4);
  AddOutput(then_branch, "p0");
  onnx::ModelProto else_branch = Model(18);
  AddNode(else_branch, "Identity", {"x"}, {"same"});
  AddOutput(else_branch, "same");
  onnx::NodeProto* node = AddNode(model, "If", {"c"}, {"y"}, "guarded");
  SetGraph(node, "then_branch", then_branch);
  SetGraph(node, "else_branch", else_branch);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(imported.status().message(),
              HasSubstr("(If, opset 18): attribute \"then_branch\": node 0 "
                        "(Split): "));
  EXPECT_THAT(imported.status().message(),
              HasSubstr("(scopeflow converts both branches of an If, also "
                        "one that never runs for the model's inputs)"));
}

// for i in range(M): y = y + i; scan out y * 2. With cond absent. Or,
// `stop_at_limit`: with M absent, until not all(y < limit).
onnx::ModelProto ForLoop(bool stop_at_limit = false) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "m", {}, kOnnxInt64);
  AddInput(model, "y0", {2});
  AddInitializer(model, FloatProto("limit", {2}, {5, 5}));
  onnx::ModelProto body = Model(13);
  AddInput(body, "i", {}, kOnnxInt64);
  AddInput(body, "go", {}, kOnnxBool);
  AddInput(body, "y_in", {2});
  SetInt(AddNode(body, "Cast", {"i"}, {"i_float"}), "to",
         onnx::TensorProto::FLOAT);
  AddNode(body, "Add", {"y_in", "i_float"}, {"y_out"});
  AddNode(body, "Add", {"y_out", "y_out"}, {"doubled"});
  if (stop_at_limit) {
    // Stops once y reaches the limit (an enclosing value).
    AddNode(body, "Less", {"y_out", "limit"}, {"below"});
    SetInt(AddNode(body, "Cast", {"below"}, {"below_float"}), "to",
           onnx::TensorProto::FLOAT);
    SetInt(AddNode(body, "ReduceMin", {"below_float"}, {"least"}), "keepdims",
           0);
    SetInt(AddNode(body, "Cast", {"least"}, {"go_on"}), "to",
           onnx::TensorProto::BOOL);
  } else {
    AddNode(body, "Identity", {"go"}, {"go_on"});
  }
  AddOutput(body, "go_on");
  AddOutput(body, "y_out");
  AddOutput(body, "doubled");
  onnx::NodeProto* node = AddNode(
      model, "Loop", {stop_at_limit ? "" : "m", "", "y0"}, {"y", "scan"},
      "loop");
  SetGraph(node, "body", body);
  AddOutput(model, "y");
  AddOutput(model, "scan");
  return model;
}

TEST(ControlFlowImportTest, LoopCarriesValuesAndStacksScanOutputs) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(ForLoop());
  ASSERT_TRUE(imported.ok()) << imported.status();
  const Tensor y0 = MakeTensor<float>({2}, {1, -1});
  absl::StatusOr<std::vector<Tensor>> out = RunNet(
      *imported, {{"m", MakeTensor<int64_t>({}, {3})}, {"y0", y0}});
  ASSERT_TRUE(out.ok()) << out.status();
  // y: 1 -> 1 -> 2 -> 4 (+0, +1, +2).
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(4, 2));
  EXPECT_EQ((*out)[1].dims(), (Dims{3, 2}));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(2, -2, 4, 0, 8, 4));
  absl::StatusOr<std::vector<Tensor>> none = RunNet(
      *imported, {{"m", MakeTensor<int64_t>({}, {0})}, {"y0", y0}});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(Values<float>((*none)[0]), ElementsAre(1, -1));
  EXPECT_EQ((*none)[1].dims(), (Dims{0, 2}));
}

TEST(ControlFlowImportTest, LoopRunsUntilTheBodysConditionFails) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(ForLoop(true));
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"y0", MakeTensor<float>({2}, {1, -1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  // y: (1, -1) -> (1, -1) -> (2, 0) -> (4, 2) -> (7, 5): 7 is not below 5.
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(7, 5));
  EXPECT_EQ((*out)[1].dims(), (Dims{4, 2}));
}

TEST(ControlFlowImportTest, LoopBodyInputsMustMatchTheCarriedValues) {
  onnx::ModelProto model = ForLoop();
  model.mutable_graph()->mutable_node(0)->add_input("y0");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(imported.status().message(),
              HasSubstr("node 0 \"loop\" (Loop, opset 13): attribute \"body\": "
                        "the subgraph has 3 inputs, expected 4 (the iteration "
                        "number, the condition and 2 loop-carried values)"));
}

TEST(ControlFlowImportTest, LoopScanOutputsFeedLaterNodes) {
  onnx::ModelProto model = ForLoop();
  SetInts(AddNode(model, "Transpose", {"scan"}, {"scan_t"}), "perm", {1, 0});
  AddOutput(model, "scan_t");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"m", MakeTensor<int64_t>({}, {2})},
                         {"y0", MakeTensor<float>({2}, {1, -1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[2].dims(), (Dims{2, 2}));
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(2, 4, -2, 0));
}

// Running sums of x along axis 1, in reverse, stacked along axis 1 of the
// output: z[b][t] = x[b][t] + ... + x[b][T-1] + s0[b] (prepended, so in
// x's order), y = the last sum.
onnx::ModelProto ReverseRunningSum(int64_t opset) {
  onnx::ModelProto model = Model(opset);
  AddInput(model, "s0", {2});
  AddInput(model, "x", {2, 3});
  onnx::ModelProto body = Model(opset);
  AddInput(body, "s_in", {2});
  AddInput(body, "x_t", {2});
  AddNode(body, "Add", {"s_in", "x_t"}, {"s_out"});
  AddNode(body, "Identity", {"s_out"}, {"z_t"});
  AddOutput(body, "s_out");
  AddOutput(body, "z_t");
  onnx::NodeProto* node = AddNode(model, "Scan", {"s0", "x"}, {"y", "z"});
  SetGraph(node, "body", body);
  SetInt(node, "num_scan_inputs", 1);
  SetInts(node, "scan_input_axes", {1});
  SetInts(node, "scan_input_directions", {1});
  SetInts(node, "scan_output_axes", {-1});
  SetInts(node, "scan_output_directions", {1});
  AddOutput(model, "y");
  AddOutput(model, "z");
  return model;
}

TEST(ControlFlowImportTest, ScanRunsAlongAnyAxisInEitherDirection) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(ReverseRunningSum(11));
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out = RunNet(
      *imported, {{"s0", MakeTensor<float>({2}, {100, 200})},
                  {"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(106, 215));
  EXPECT_EQ((*out)[1].dims(), (Dims{2, 3}));
  EXPECT_THAT(Values<float>((*out)[1]),
              ElementsAre(106, 105, 103, 215, 211, 206));
}

TEST(ControlFlowImportTest, ScanDirectionsThatDifferAreRefused) {
  onnx::ModelProto model = ReverseRunningSum(11);
  model.mutable_graph()->mutable_node(0)->mutable_attribute(5)->set_ints(0, 0);
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(imported.status().message(),
              HasSubstr("(Scan, opset 11): a scan output's direction (0) "
                        "differs from the scan inputs' (1)"));
}

// Opset 8: a batch axis first, sequence_lens as input 0 (absent here).
TEST(ControlFlowImportTest, Opset8ScanWithABatchOfOne) {
  onnx::ModelProto model = Model(8);
  AddInput(model, "s0", {1, 2});
  AddInput(model, "x", {1, 3, 2});
  onnx::ModelProto body = Model(8);
  AddInput(body, "s_in", {2});
  AddInput(body, "x_t", {2});
  AddNode(body, "Mul", {"s_in", "x_t"}, {"s_out"});
  AddNode(body, "Neg", {"s_out"}, {"z_t"});
  AddOutput(body, "s_out");
  AddOutput(body, "z_t");
  onnx::NodeProto* node =
      AddNode(model, "Scan", {"", "s0", "x"}, {"y", "z"}, "scan");
  SetGraph(node, "body", body);
  SetInt(node, "num_scan_inputs", 1);
  AddOutput(model, "y");
  AddOutput(model, "z");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out = RunNet(
      *imported, {{"s0", MakeTensor<float>({1, 2}, {1, 2})},
                  {"x", MakeTensor<float>({1, 3, 2}, {2, 3, 4, 5, 6, 7})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (Dims{1, 2}));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(48, 210));
  EXPECT_EQ((*out)[1].dims(), (Dims{1, 3, 2}));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(-2, -6, -8, -30, -48, -210));

  onnx::ModelProto batched = model;
  batched.mutable_graph()->mutable_input(0)->mutable_type()
      ->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_dim_value(2);
  imported = ImportOnnx(batched);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(),
              HasSubstr("node 0 \"scan\" (Scan, opset 8): \"s0\" has batch "
                        "axis [2, 2]: opset 8's Scan is supported for a batch "
                        "of one"));
}

// torch.jit.script: an if on a tensor's value whose branches differ in
// shape, then a for loop over the result's rows (If, then Loop reading the
// If's output from its body) appending to a list that is stacked after it
// (SequenceEmpty, SequenceInsert, ConcatFromSequence), against torch's
// outputs for inputs taking each branch.
TEST(ControlFlowImportTest, TorchScriptedIfAndForLoopMatchTorch) {
  const std::string dir = "framework/onnx/testdata/control_flow/";
  absl::StatusOr<onnx::ModelProto> model = ReadOnnxModel(dir + "scripted.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<ImportedModel> imported = ImportOnnx(*model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  for (const std::string case_name : {"positive", "negative"}) {
    SCOPED_TRACE(case_name);
    const std::string prefix = dir + case_name + "_";
    absl::StatusOr<Tensor> x = ReadOnnxTensor(prefix + "x.pb");
    ASSERT_TRUE(x.ok()) << x.status();
    absl::StatusOr<std::vector<Tensor>> out = RunNet(*imported, {{"x", *x}});
    ASSERT_TRUE(out.ok()) << out.status();
    const char* names[] = {"h", "acc", "weighted", "rows"};
    for (int i = 0; i < 4; ++i) {
      absl::StatusOr<Tensor> want = ReadOnnxTensor(prefix + names[i] + ".pb");
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_EQ((*out)[i].dims(), want->dims()) << names[i];
      const std::vector<float> got = Values<float>((*out)[i]);
      const std::vector<float> expected = Values<float>(*want);
      for (size_t k = 0; k < got.size(); ++k) {
        EXPECT_NEAR(got[k], expected[k], 1e-5) << names[i] << "[" << k << "]";
      }
    }
  }
}

// A list appended to in a loop, concatenated (not stacked) after it: y
// holds the appended [2] tensors one after the other.
onnx::ModelProto AppendingLoop(const std::string& extra_use = "") {
  onnx::ModelProto model = Model(13);
  AddInput(model, "m", {}, kOnnxInt64);
  AddInput(model, "x", {2});
  SetInt(AddNode(model, "SequenceEmpty", {}, {"empty"}), "dtype",
         onnx::TensorProto::FLOAT);
  onnx::ModelProto body = Model(13);
  AddInput(body, "i", {}, kOnnxInt64);
  AddInput(body, "go", {}, kOnnxBool);
  AddInput(body, "seq_in", {2});
  SetInt(AddNode(body, "Cast", {"i"}, {"i_float"}), "to",
         onnx::TensorProto::FLOAT);
  AddNode(body, "Mul", {"x", "i_float"}, {"xi"});
  AddNode(body, "SequenceInsert", {"seq_in", "xi"}, {"seq_out"});
  if (!extra_use.empty()) {
    AddNode(body, extra_use, {"seq_in"}, {"other"});
  }
  AddNode(body, "Identity", {"go"}, {"go_on"});
  AddOutput(body, "go_on");
  AddOutput(body, "seq_out");
  onnx::NodeProto* node =
      AddNode(model, "Loop", {"m", "", "empty"}, {"seq"}, "loop");
  SetGraph(node, "body", body);
  onnx::NodeProto* concat = AddNode(model, "ConcatFromSequence", {"seq"}, {"y"});
  SetInt(concat, "axis", 0);
  AddOutput(model, "y");
  return model;
}

TEST(ControlFlowImportTest, ALoopAppendingToASequenceBecomesAScanOutput) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(AppendingLoop());
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"m", MakeTensor<int64_t>({}, {3})},
                         {"x", MakeTensor<float>({2}, {1, -2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (Dims{6}));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 0, 1, -2, 2, -4));
}

TEST(ControlFlowImportTest, OtherUsesOfSequencesAreUnsupported) {
  absl::StatusOr<ImportedModel> imported =
      ImportOnnx(AppendingLoop("SequenceLength"));
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(imported.status().message(),
              HasSubstr("node 1 \"loop\" (Loop, opset 13): loop-carried value "
                        "0 (\"empty\") is a sequence: scopeflow converts only "
                        "one that starts empty and that the body appends one "
                        "tensor to"));
}

}  // namespace
}  // namespace scopeflow
