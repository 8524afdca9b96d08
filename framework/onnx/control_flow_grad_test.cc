// Gradients through imported If, Loop and Scan (imported with
// ImportOptions::keep_recurrent_step_scopes, which binds the scopes their
// gradient ops read) against central differences.
#include <cmath>
#include <string>
#include <vector>

#include "framework/grad_check.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;
using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::SetGraph;
using onnx_testing::SetInt;

constexpr int32_t kF64 = onnx::TensorProto::DOUBLE;

ImportOptions Differentiable() {
  ImportOptions options;
  options.keep_recurrent_step_scopes = true;
  return options;
}

Tensor Doubles(Dims dims, double phase) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) {
    values.push_back(0.6 * std::cos(0.9 * static_cast<double>(i) + phase));
  }
  return MakeTensor<double>(std::move(dims), values);
}

// y = c ? x * w : tanh(x) + w. An If becomes two conditional_blocks writing
// its outputs, and AppendGradients differentiates nets that write each
// variable once: it says so.
TEST(ControlFlowGradTest, IfIsNotDifferentiable) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "c", {}, onnx::TensorProto::BOOL);
  AddInput(model, "x", {3}, kF64);
  AddInput(model, "w", {3}, kF64);
  onnx::ModelProto then_branch = Model(13);
  AddNode(then_branch, "Mul", {"x", "w"}, {"xw"});
  AddOutput(then_branch, "xw");
  onnx::ModelProto else_branch = Model(13);
  AddNode(else_branch, "Tanh", {"x"}, {"t"});
  AddNode(else_branch, "Add", {"t", "w"}, {"tw"});
  AddOutput(else_branch, "tw");
  onnx::NodeProto* node = AddNode(model, "If", {"c"}, {"y"});
  SetGraph(node, "then_branch", then_branch);
  SetGraph(node, "else_branch", else_branch);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model, Differentiable());
  ASSERT_TRUE(imported.ok()) << imported.status();
  const absl::Status status = CheckNetGradient(
      imported->net,
      {{"c", MakeTensor<bool>({}, {true})},
       {"x", Doubles({3}, 0.1)},
       {"w", Doubles({3}, 1.2)}},
      {"y"});
  EXPECT_THAT(status.message(),
              HasSubstr("variable \"y\" is written by 2 ops; a net to "
                        "differentiate writes each variable once"));
}

// for i in range(3): y = tanh(y * x).
TEST(ControlFlowGradTest, LoopGradientsMatchNumeric) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2}, kF64);
  AddInput(model, "y0", {2}, kF64);
  AddInput(model, "m", {}, onnx::TensorProto::INT64);
  onnx::ModelProto body = Model(13);
  AddInput(body, "i", {}, onnx::TensorProto::INT64);
  AddInput(body, "go", {}, onnx::TensorProto::BOOL);
  AddInput(body, "y_in", {2}, kF64);
  AddNode(body, "Mul", {"y_in", "x"}, {"yx"});
  AddNode(body, "Tanh", {"yx"}, {"y_out"});
  AddNode(body, "Identity", {"go"}, {"go_on"});
  AddOutput(body, "go_on");
  AddOutput(body, "y_out");
  onnx::NodeProto* node = AddNode(model, "Loop", {"m", "", "y0"}, {"y"});
  SetGraph(node, "body", body);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model, Differentiable());
  ASSERT_TRUE(imported.ok()) << imported.status();
  const absl::Status status = CheckNetGradient(
      imported->net,
      {{"m", MakeTensor<int64_t>({}, {3})},
       {"x", Doubles({2}, 0.3)},
       {"y0", Doubles({2}, 2.0)}},
      {"y"});
  EXPECT_TRUE(status.ok()) << status;
}

// s_t = tanh(s_{t-1} * x_t + w), z_t = s_t + s_t.
TEST(ControlFlowGradTest, ScanGradientsMatchNumeric) {
  onnx::ModelProto model = Model(11);
  AddInput(model, "s0", {2}, kF64);
  AddInput(model, "xs", {3, 2}, kF64);
  AddInput(model, "w", {2}, kF64);
  onnx::ModelProto body = Model(11);
  AddInput(body, "s_in", {2}, kF64);
  AddInput(body, "x_t", {2}, kF64);
  AddNode(body, "Mul", {"s_in", "x_t"}, {"sx"});
  AddNode(body, "Add", {"sx", "w"}, {"pre"});
  AddNode(body, "Tanh", {"pre"}, {"s_out"});
  AddNode(body, "Add", {"s_out", "s_out"}, {"z_t"});
  AddOutput(body, "s_out");
  AddOutput(body, "z_t");
  onnx::NodeProto* node = AddNode(model, "Scan", {"s0", "xs"}, {"s", "z"});
  SetGraph(node, "body", body);
  SetInt(node, "num_scan_inputs", 1);
  AddOutput(model, "s");
  AddOutput(model, "z");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model, Differentiable());
  ASSERT_TRUE(imported.ok()) << imported.status();
  const absl::Status status = CheckNetGradient(
      imported->net,
      {{"s0", Doubles({2}, 0.5)},
       {"xs", Doubles({3, 2}, 1.5)},
       {"w", Doubles({2}, 2.5)}},
      {"s", "z"});
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace scopeflow
