// Folding at import the ops that compute constants: shape arithmetic as
// torch.onnx writes it, weight transposes and casts, and the limit that
// keeps broadcasts computed at run time.

#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using namespace onnx_testing;  // NOLINT: the test models' helpers
using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<ImportedModel> Import(const onnx::ModelProto& model,
                                     bool fold) {
  ImportOptions options;
  options.fold_constants = fold;
  return ImportOnnx(model, options);
}

bool HasParam(const ImportedModel& model, const std::string& name) {
  return absl::c_any_of(model.params, [&](const NamedTensor& param) {
    return param.name == name;
  });
}

// x [batch, 3, 4] reshaped to [-1, x.shape[1]] as torch writes
// x.reshape(-1, x.size(1)): Shape -> Gather -> Unsqueeze -> Concat.
onnx::ModelProto ReshapeBySize() {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {-1, 3, 4});
  AddOutput(model, "y");
  AddNode(model, "Shape", {"x"}, {"dims"});
  AddInitializer(model, Int64Proto("one", {}, {1}));
  AddNode(model, "Gather", {"dims", "one"}, {"size1"});
  AddInitializer(model, Int64Proto("axes", {1}, {0}));
  AddNode(model, "Unsqueeze", {"size1", "axes"}, {"size1_1d"});
  AddInitializer(model, Int64Proto("minus_one", {1}, {-1}));
  SetInt(AddNode(model, "Concat", {"minus_one", "size1_1d"}, {"shape"}),
         "axis", 0);
  AddNode(model, "Reshape", {"x", "shape"}, {"y"});
  return model;
}

TEST(ConstantFoldingTest, FoldsShapeArithmeticWhereTheDimIsKnown) {
  absl::StatusOr<ImportedModel> folded = Import(ReshapeBySize(), true);
  ASSERT_TRUE(folded.ok()) << folded.status();
  // The batch dim is unknown, the gathered one is 3: all but the reshape
  // fold, and the reshape takes its shape as an attribute.
  EXPECT_THAT(OpTypes(*folded), ElementsAre("reshape"));
  EXPECT_FALSE(HasParam(*folded, "shape"));

  std::vector<float> x(2 * 3 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i);
  absl::StatusOr<std::vector<Tensor>> y =
      RunNet(*folded, {{"x", MakeTensor<float>({2, 3, 4}, x)}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT((*y)[0].dims(), ElementsAre(8, 3));
  EXPECT_EQ(Values<float>((*y)[0]), x);

  // Unfolded, the dims are computed at run time, to the same result.
  absl::StatusOr<ImportedModel> unfolded = Import(ReshapeBySize(), false);
  ASSERT_TRUE(unfolded.ok()) << unfolded.status();
  EXPECT_THAT(OpTypes(*unfolded), ::testing::Contains("shape"));
  absl::StatusOr<std::vector<Tensor>> y_unfolded =
      RunNet(*unfolded, {{"x", MakeTensor<float>({2, 3, 4}, x)}});
  ASSERT_TRUE(y_unfolded.ok()) << y_unfolded.status();
  EXPECT_THAT((*y_unfolded)[0].dims(), ElementsAre(8, 3));
}

TEST(ConstantFoldingTest, KeepsShapeOfAnUnknownDim) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {-1, 3});
  AddOutput(model, "batch");
  AddNode(model, "Shape", {"x"}, {"dims"});
  AddInitializer(model, Int64Proto("zero", {1}, {0}));
  AddNode(model, "Gather", {"dims", "zero"}, {"batch"});
  absl::StatusOr<ImportedModel> imported = Import(model, true);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("shape", "gather"));
  absl::StatusOr<std::vector<Tensor>> batch =
      RunNet(*imported, {{"x", MakeTensor<float>({5, 3}, {})}});
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_THAT(Values<int64_t>((*batch)[0]), ElementsAre(5));
}

// y = x @ transpose(cast(w)) with w an int64 initializer [3, 2].
onnx::ModelProto TransposedWeight() {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {1, 2});
  AddOutput(model, "y");
  AddInitializer(model, Int64Proto("w", {3, 2}, {1, 2, 3, 4, 5, 6}));
  SetInt(AddNode(model, "Cast", {"w"}, {"w_float"}), "to",
         onnx::TensorProto::FLOAT);
  SetInts(AddNode(model, "Transpose", {"w_float"}, {"w_t"}), "perm", {1, 0});
  AddNode(model, "MatMul", {"x", "w_t"}, {"y"});
  return model;
}

TEST(ConstantFoldingTest, FoldsWeightCastAndTranspose) {
  absl::StatusOr<ImportedModel> folded = Import(TransposedWeight(), true);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_THAT(OpTypes(*folded), ElementsAre("matmul"));
  // The matmul reads the folded weight; the int64 one is no parameter.
  EXPECT_TRUE(HasParam(*folded, "w_t"));
  EXPECT_FALSE(HasParam(*folded, "w"));
  EXPECT_FALSE(HasParam(*folded, "w_float"));
  absl::StatusOr<std::vector<Tensor>> y =
      RunNet(*folded, {{"x", MakeTensor<float>({1, 2}, {10, 1})}});
  ASSERT_TRUE(y.ok()) << y.status();
  // [10, 1] @ [[1, 3, 5], [2, 4, 6]].
  EXPECT_THAT(Values<float>((*y)[0]), ElementsAre(12, 34, 56));

  absl::StatusOr<ImportedModel> unfolded = Import(TransposedWeight(), false);
  ASSERT_TRUE(unfolded.ok()) << unfolded.status();
  EXPECT_THAT(OpTypes(*unfolded), ElementsAre("cast", "transpose", "matmul"));
}

// y = x + expand(one, [rows, 1024]).
onnx::ModelProto ExpandedOnes(int64_t rows) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {rows, 1024});
  AddOutput(model, "y");
  AddInitializer(model, FloatProto("one", {1}, {1.0f}));
  AddInitializer(model, Int64Proto("shape", {2}, {rows, 1024}));
  AddNode(model, "Expand", {"one", "shape"}, {"ones"});
  AddNode(model, "Add", {"x", "ones"}, {"y"});
  return model;
}

TEST(ConstantFoldingTest, KeepsBroadcastsBeyondTheLimitAtRunTime) {
  // 4 x 1024 float32 is 16 KiB: folded.
  absl::StatusOr<ImportedModel> small = Import(ExpandedOnes(4), true);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_THAT(OpTypes(*small), ElementsAre("add"));
  // 64 x 1024 float32 is 256 KiB from 4 bytes: computed at run time.
  absl::StatusOr<ImportedModel> large = Import(ExpandedOnes(64), true);
  ASSERT_TRUE(large.ok()) << large.status();
  EXPECT_THAT(OpTypes(*large), ElementsAre("expand", "add"));
  std::vector<float> x(64 * 1024, 2.0f);
  absl::StatusOr<std::vector<Tensor>> y =
      RunNet(*large, {{"x", MakeTensor<float>({64, 1024}, x)}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values<float>((*y)[0]), std::vector<float>(64 * 1024, 3.0f));
}

TEST(ConstantFoldingTest, AConstantGraphOutputIsAParameter) {
  onnx::ModelProto model = Model(13);
  AddOutput(model, "y");
  AddInitializer(model, FloatProto("a", {2}, {1.5f, -2.0f}));
  AddNode(model, "Neg", {"a"}, {"y"});
  absl::StatusOr<ImportedModel> imported = Import(model, true);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_TRUE(OpTypes(*imported).empty());
  ASSERT_TRUE(HasParam(*imported, "y"));
  absl::StatusOr<std::vector<Tensor>> y = RunNet(*imported, {});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(Values<float>((*y)[0]), ElementsAre(-1.5f, 2.0f));
}

TEST(ConstantFoldingTest, AKernelErrorWhileFoldingNamesTheOp) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2});
  AddOutput(model, "y");
  AddInitializer(model, FloatProto("a", {2}, {1.0f, 2.0f}));
  AddInitializer(model, Int64Proto("index", {1}, {7}));
  AddNode(model, "Gather", {"a", "index"}, {"picked"}, "picking");
  AddNode(model, "Add", {"x", "picked"}, {"y"});
  absl::StatusOr<ImportedModel> imported = Import(model, true);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("\"picking\""));
  EXPECT_THAT(imported.status().message(), HasSubstr("folding the constant"));
}

}  // namespace
}  // namespace scopeflow
