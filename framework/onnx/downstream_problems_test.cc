// One unconvertible node gives one error: the nodes downstream of it that
// fail for want of what its outputs would tell (their rank, say) are
// counted, not listed; a downstream node that is malformed in itself, or
// that nothing converts, is still listed.
#include <string>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using namespace onnx_testing;  // NOLINT: the model builders.

TEST(DownstreamProblemsTest, OneUnconvertibleNodeGivesOneError) {
  onnx::ModelProto model = Model(11);
  AddInput(model, "x", {-1, 3, 8, 8});
  AddInitializer(model, FloatProto("w", {4, 3, 3, 3}, std::vector<float>(108)));
  AddInitializer(model, FloatProto("m", {8, 2}, std::vector<float>(16)));
  AddNode(model, "NoSuchOp", {"x"}, {"a"}, "unknown");
  AddNode(model, "Conv", {"a", "w"}, {"b"}, "conv");
  SetInts(AddNode(model, "MaxPool", {"b"}, {"c"}, "pool"), "kernel_shape",
          {2, 2});
  AddNode(model, "Transpose", {"c"}, {"d"}, "reverse");
  AddNode(model, "Softmax", {"d"}, {"e"}, "softmax");
  AddNode(model, "MatMul", {"e", "m"}, {"f"}, "matmul");
  AddNode(model, "Relu", {"f"}, {"g"}, "relu");
  // Malformed whatever its input: no axis.
  AddNode(model, "Concat", {"g", "g"}, {"h"}, "concat");
  // Unconvertible whatever its input.
  AddNode(model, "NoSuchOp", {"h"}, {"i"}, "unknown_too");
  AddOutput(model, "i");

  ImportReport report;
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model, {}, &report);
  ASSERT_FALSE(imported.ok());
  const std::string message(imported.status().message());
  EXPECT_THAT(message, HasSubstr("3 of 9 node(s) cannot be converted (and 5 "
                                 "node(s) downstream that read values these "
                                 "leave unknown, not listed)"));
  EXPECT_THAT(message, HasSubstr("node 0 \"unknown\" (NoSuchOp, opset 11): "
                                 "no converter for ONNX op NoSuchOp"));
  EXPECT_THAT(message, HasSubstr("node 7 \"concat\" (Concat, opset 11): "
                                 "missing required attribute \"axis\""));
  EXPECT_THAT(message, HasSubstr("node 8 \"unknown_too\" (NoSuchOp, opset "
                                 "11): no converter for ONNX op NoSuchOp"));
  EXPECT_THAT(message, AllOf(Not(HasSubstr("rank")), Not(HasSubstr("\"conv\"")),
                             Not(HasSubstr("\"matmul\""))));
  ASSERT_THAT(report.problems, SizeIs(3));
  ASSERT_THAT(report.downstream, SizeIs(5));
  EXPECT_EQ(report.downstream[0].node_name, "conv");
  EXPECT_THAT(report.downstream[0].reason, HasSubstr("rank is unknown"));
  EXPECT_EQ(report.downstream[4].node_name, "matmul");
}

// A node failing on its own, not downstream of another, is listed.
TEST(DownstreamProblemsTest, IndependentFailuresAreEachListed) {
  onnx::ModelProto model = Model(11);
  AddInput(model, "x", {2, 3});
  AddNode(model, "NoSuchOp", {"x"}, {"a"}, "first");
  AddNode(model, "NoSuchOp", {"x"}, {"b"}, "second");
  AddOutput(model, "a");
  AddOutput(model, "b");
  ImportReport report;
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model, {}, &report);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              AllOf(HasSubstr("2 of 2 node(s) cannot be converted:"),
                    Not(HasSubstr("downstream"))));
  EXPECT_THAT(report.problems, SizeIs(2));
  EXPECT_THAT(report.downstream, SizeIs(0));
}

}  // namespace
}  // namespace scopeflow
