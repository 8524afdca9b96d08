#include "tools/import_onnx_command.h"

#include <cstdlib>
#include <string>

#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/param_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"
#include "proto/onnx.pb.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

// y = x * w + 1, with w an initializer and 1 a Constant node.
onnx::ModelProto AffineModel() {
  onnx::ModelProto model;
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("affine");
  onnx::ValueInfoProto* x = graph->add_input();
  x->set_name("x");
  onnx::TypeProto::Tensor* type = x->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  type->mutable_shape()->add_dim()->set_dim_param("n");
  onnx::TensorProto* w = graph->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_float_data(3);
  onnx::NodeProto* one = graph->add_node();
  one->set_op_type("Constant");
  one->add_output("one");
  onnx::AttributeProto* value = one->add_attribute();
  value->set_name("value_float");
  value->set_type(onnx::AttributeProto::FLOAT);
  value->set_f(1);
  onnx::NodeProto* mul = graph->add_node();
  mul->set_op_type("Mul");
  mul->add_input("x");
  mul->add_input("w");
  mul->add_output("xw");
  onnx::NodeProto* add = graph->add_node();
  add->set_op_type("Add");
  add->add_input("xw");
  add->add_input("one");
  add->add_output("y");
  graph->add_output()->set_name("y");
  return model;
}

TEST(ImportOnnxCommandTest, WritesANetAndParametersThatRun) {
  const std::string model_path = TempPath("affine.onnx");
  ASSERT_TRUE(
      WriteFileAtomically(model_path, AffineModel().SerializeAsString()).ok());
  const std::string net_path = TempPath("affine.pbtxt");
  const std::string params_path = TempPath("affine.params");
  absl::Status status = ImportOnnxCommand(model_path, net_path, params_path);
  ASSERT_TRUE(status.ok()) << status;

  absl::StatusOr<NetDef> net = LoadNet(net_path);
  ASSERT_TRUE(net.ok()) << net.status();
  Scope scope;
  absl::StatusOr<std::vector<std::string>> params =
      LoadParams(params_path, scope, CPUPlace());
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_THAT(*params, ElementsAre("w", "one"));

  const Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(*net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Tensor x;
  ASSERT_TRUE(x.Allocate(CPUPlace(), kFloat32, {2}).ok());
  x.data<float>()[0] = 1;
  x.data<float>()[1] = -2;
  absl::StatusOr<std::vector<Tensor>> y =
      executor.Run(*prepared, scope, {{"x", x}}, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].data<float>()[0], 4);
  EXPECT_EQ((*y)[0].data<float>()[1], -5);
}

TEST(ImportOnnxCommandTest, RequiresAParameterPathWhenThereAreParameters) {
  const std::string model_path = TempPath("affine2.onnx");
  ASSERT_TRUE(
      WriteFileAtomically(model_path, AffineModel().SerializeAsString()).ok());
  absl::Status status =
      ImportOnnxCommand(model_path, TempPath("affine2.pb"), "");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("2 parameter(s)"));
}

TEST(ImportOnnxCommandTest, UnsupportedModelsNameThePath) {
  onnx::ModelProto model = AffineModel();
  model.mutable_graph()->mutable_node(1)->set_op_type("StringNormalizer");
  const std::string model_path = TempPath("unsupported.onnx");
  ASSERT_TRUE(WriteFileAtomically(model_path, model.SerializeAsString()).ok());
  absl::Status status =
      ImportOnnxCommand(model_path, TempPath("r.pb"), TempPath("r.params"));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(status.message()), HasSubstr(model_path));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("(StringNormalizer, opset 17)"));
}

}  // namespace
}  // namespace scopeflow
