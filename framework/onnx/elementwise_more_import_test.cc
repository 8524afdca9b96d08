// Importing Sign, Floor, Ceil, Round, Not, And, Or, Xor, Mod, Mean, PRelu,
// Selu and ArgMin: the ops and attributes they map to, and what runs.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::RunNet;
using onnx_testing::SetFloat;
using onnx_testing::SetInt;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::Pointwise;

template <typename T>
std::vector<T> ValuesOf(const Tensor& tensor) {
  const T* data = tensor.data<T>();
  return std::vector<T>(data, data + tensor.numel());
}

TEST(ElementwiseMoreImportTest, RoundingOps) {
  onnx::ModelProto model = Model(22);
  AddInput(model, "x", {4});
  AddNode(model, "Sign", {"x"}, {"sign"});
  AddNode(model, "Floor", {"x"}, {"floor"});
  AddNode(model, "Ceil", {"x"}, {"ceil"});
  AddNode(model, "Round", {"x"}, {"round"});
  for (const char* out : {"sign", "floor", "ceil", "round"}) {
    AddOutput(model, out);
  }
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out = RunNet(*imported,
                    {{"x", MakeTensor<float>({4}, {-1.5f, 0.5f, 2.5f, 0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ValuesOf<float>((*out)[0]), ElementsAre(-1, 1, 1, 0));
  EXPECT_THAT(ValuesOf<float>((*out)[1]), ElementsAre(-2, 0, 2, 0));
  EXPECT_THAT(ValuesOf<float>((*out)[2]), ElementsAre(-1, 1, 3, 0));
  EXPECT_THAT(ValuesOf<float>((*out)[3]), ElementsAre(-2, 0, 2, 0));
}

TEST(ElementwiseMoreImportTest, LogicalOpsBroadcast) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "a", {2, 1}, onnx::TensorProto::BOOL);
  AddInput(model, "b", {2}, onnx::TensorProto::BOOL);
  AddNode(model, "And", {"a", "b"}, {"and"});
  AddNode(model, "Or", {"a", "b"}, {"or"});
  AddNode(model, "Xor", {"a", "b"}, {"xor"});
  AddNode(model, "Not", {"b"}, {"not"});
  for (const char* out : {"and", "or", "xor", "not"}) AddOutput(model, out);
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out = RunNet(*imported, {{"a", MakeTensor<bool>({2, 1}, {true, false})},
                                {"b", MakeTensor<bool>({2}, {true, false})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ValuesOf<bool>((*out)[0]),
              ElementsAre(true, false, false, false));
  EXPECT_THAT(ValuesOf<bool>((*out)[1]), ElementsAre(true, true, true, false));
  EXPECT_THAT(ValuesOf<bool>((*out)[2]), ElementsAre(false, true, true, false));
  EXPECT_THAT(ValuesOf<bool>((*out)[3]), ElementsAre(false, true));
}

TEST(ElementwiseMoreImportTest, ModBothConventions) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {3}, onnx::TensorProto::INT32);
  AddInput(model, "y", {3}, onnx::TensorProto::INT32);
  AddNode(model, "Mod", {"x", "y"}, {"floored"});
  SetInt(AddNode(model, "Mod", {"x", "y"}, {"truncated"}), "fmod", 1);
  AddOutput(model, "floored");
  AddOutput(model, "truncated");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out = RunNet(*imported, {{"x", MakeTensor<int32_t>({3}, {-4, 7, 5})},
                                {"y", MakeTensor<int32_t>({3}, {3, -3, 5})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ValuesOf<int32_t>((*out)[0]), ElementsAre(2, -2, 0));
  EXPECT_THAT(ValuesOf<int32_t>((*out)[1]), ElementsAre(-1, 1, 0));
}

TEST(ElementwiseMoreImportTest, MeanPReluSeluArgMin) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "a", {2});
  AddInput(model, "b", {2});
  AddInput(model, "c", {1});
  AddNode(model, "Mean", {"a", "b", "c"}, {"mean"});
  AddNode(model, "PRelu", {"a", "c"}, {"prelu"});
  onnx::NodeProto* selu = AddNode(model, "Selu", {"a"}, {"selu"});
  SetFloat(selu, "alpha", 2);
  SetFloat(selu, "gamma", 3);
  SetInt(AddNode(model, "ArgMin", {"a"}, {"argmin"}), "keepdims", 0);
  for (const char* out : {"mean", "prelu", "selu", "argmin"}) {
    AddOutput(model, out);
  }
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto out = RunNet(*imported, {{"a", MakeTensor<float>({2}, {-2, 4})},
                                {"b", MakeTensor<float>({2}, {5, 1})},
                                {"c", MakeTensor<float>({1}, {0.5f})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      ValuesOf<float>((*out)[0]),
      Pointwise(FloatNear(1e-6f), std::vector<float>{3.5f / 3, 5.5f / 3}));
  EXPECT_THAT(ValuesOf<float>((*out)[1]), ElementsAre(-1, 4));
  EXPECT_THAT(ValuesOf<float>((*out)[2]),
              Pointwise(FloatNear(1e-5f),
                        std::vector<float>{6 * (0.13533528f - 1), 12}));
  EXPECT_THAT(ValuesOf<int64_t>((*out)[3]), ElementsAre(0));
}

}  // namespace
}  // namespace scopeflow
