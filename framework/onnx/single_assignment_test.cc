// Models whose value names are written twice do not import: the ONNX
// checker rejects them, and keeping either writer would be a guess.
#include "framework/onnx/single_assignment.h"

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;
using namespace onnx_testing;  // NOLINT: the builders read better bare.

onnx::ModelProto ReluModel() {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2});
  AddNode(model, "Relu", {"x"}, {"y"}, "first");
  AddOutput(model, "y");
  return model;
}

TEST(SingleAssignmentTest, AValidModelImports) {
  EXPECT_TRUE(ImportOnnx(ReluModel()).ok());
}

TEST(SingleAssignmentTest, TwoNodesWritingOneNameAreAnError) {
  onnx::ModelProto model = ReluModel();
  AddNode(model, "Neg", {"x"}, {"y"});
  const absl::Status status = ImportOnnx(model).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("not in single static assignment form: \"y\" is "
                        "written by node 0 (Relu \"first\") and by node 1 "
                        "(Neg)"));
}

TEST(SingleAssignmentTest, ANodeOverwritingAnInputOrInitializerIsAnError) {
  onnx::ModelProto over_input = ReluModel();
  AddNode(over_input, "Neg", {"y"}, {"x"});
  EXPECT_THAT(ImportOnnx(over_input).status().message(),
              HasSubstr("\"x\" is written by a graph input and by node 1"));

  onnx::ModelProto over_initializer = ReluModel();
  AddInitializer(over_initializer, FloatProto("w", {2}, {1, 2}));
  AddNode(over_initializer, "Neg", {"x"}, {"w"});
  EXPECT_THAT(ImportOnnx(over_initializer).status().message(),
              HasSubstr("\"w\" is written by initializer 0 and by node 1"));
}

TEST(SingleAssignmentTest, RepeatedInputsOrInitializersAreErrors) {
  onnx::ModelProto inputs = ReluModel();
  AddInput(inputs, "x", {3});
  EXPECT_THAT(ImportOnnx(inputs).status().message(),
              HasSubstr("\"x\" is written by a graph input and by a graph "
                        "input"));
  onnx::ModelProto initializers = ReluModel();
  AddInitializer(initializers, FloatProto("w", {1}, {1}));
  AddInitializer(initializers, FloatProto("w", {1}, {2}));
  EXPECT_THAT(ImportOnnx(initializers).status().message(),
              HasSubstr("\"w\" is written by initializer 0 and by "
                        "initializer 1"));
  // IR version < 4 lists each initializer among the inputs too: allowed.
  onnx::ModelProto listed = ReluModel();
  AddInput(listed, "w", {1});
  AddInitializer(listed, FloatProto("w", {1}, {1}));
  EXPECT_TRUE(onnx_import::CheckSingleAssignment(listed.graph()).ok());
}

TEST(SingleAssignmentTest, ASubgraphMayNotRedefineAnEnclosingName) {
  onnx::ModelProto body = Model(13);
  AddNode(body, "Neg", {"x"}, {"y"}, "inner");
  AddOutput(body, "y");
  onnx::ModelProto model = ReluModel();
  AddInput(model, "cond", {}, onnx::TensorProto::BOOL);
  onnx::NodeProto* branch = AddNode(model, "If", {"cond"}, {"z"});
  SetGraph(branch, "then_branch", body);
  SetGraph(branch, "else_branch", body);
  const absl::Status status = onnx_import::CheckSingleAssignment(model.graph());
  EXPECT_THAT(status.message(),
              HasSubstr("\"y\" is written by node 0 (Relu \"first\") and by "
                        "node 0 (Neg \"inner\")"));
  // Omitted optional outputs ("") are not names.
  onnx::ModelProto optional = ReluModel();
  AddNode(optional, "Dropout", {"x"}, {"d", ""});
  AddNode(optional, "Dropout", {"x"}, {"e", ""});
  EXPECT_TRUE(onnx_import::CheckSingleAssignment(optional.graph()).ok());
}

}  // namespace
}  // namespace scopeflow
