// Importing the ops added for the whole ONNX node suite: Size, CastLike,
// the losses, RMSNormalization, Attention, the reductions around
// reduce_sum and the compositions (framework/onnx/convert_composed.cc):
// the ops they map to and what runs, against hand-computed values.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <limits>
#include <string>
#include <vector>

#include "framework/float16.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::FloatProto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::OpTypes;
using onnx_testing::RunNet;
using onnx_testing::SetFloat;
using onnx_testing::SetInt;
using onnx_testing::SetString;
using onnx_testing::Values;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// Imports `model` and runs it with `feeds`; the outputs.
std::vector<Tensor> ImportAndRun(const onnx::ModelProto& model,
                                 std::vector<Feed> feeds) {
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_TRUE(imported.ok()) << imported.status();
  if (!imported.ok()) return {};
  absl::StatusOr<std::vector<Tensor>> out = RunNet(*imported, feeds);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

TEST(SuiteOpsImportTest, SizeFoldsForKnownDimsAndRunsForSymbolicOnes) {
  onnx::ModelProto model = Model(21);
  AddInput(model, "x", {2, 3});
  AddNode(model, "Size", {"x"}, {"n"});
  AddOutput(model, "n");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ::testing::IsEmpty());

  onnx::ModelProto batched = Model(21);
  AddInput(batched, "x", {-1, 3});
  AddNode(batched, "Size", {"x"}, {"n"});
  AddOutput(batched, "n");
  const std::vector<Tensor> out = ImportAndRun(
      batched, {{"x", MakeTensor<float>({4, 3}, std::vector<float>(12, 0))}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Values<int64_t>(out[0]), ElementsAre(12));
}

TEST(SuiteOpsImportTest, CastLikeTakesTheSecondInputsDtype) {
  onnx::ModelProto model = Model(21);
  AddInput(model, "x", {3}, onnx::TensorProto::INT64);
  AddInput(model, "like", {1}, onnx::TensorProto::DOUBLE);
  AddNode(model, "CastLike", {"x", "like"}, {"y"});
  AddOutput(model, "y");
  // Only the dtype of "like" is read: the net does not take it.
  const std::vector<Tensor> out =
      ImportAndRun(model, {{"x", MakeTensor<int64_t>({3}, {-2, 0, 7})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(Values<double>(out[0]), ElementsAre(-2.0, 0.0, 7.0));
}

TEST(SuiteOpsImportTest, SoftmaxCrossEntropyIsLogSoftmaxThenNllLoss) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "scores", {2, 2});
  AddInput(model, "labels", {2}, onnx::TensorProto::INT64);
  onnx::NodeProto* node = AddNode(model, "SoftmaxCrossEntropyLoss",
                                  {"scores", "labels"}, {"loss", "log_prob"});
  SetString(node, "reduction", "sum");
  AddOutput(model, "loss");
  AddOutput(model, "log_prob");
  // Row 0: equal scores, -log(1/2) each; row 1: log(1 + e^-2) for class 0.
  const std::vector<Tensor> out =
      ImportAndRun(model, {{"scores", MakeTensor<float>({2, 2}, {1, 1, 3, 1})},
                           {"labels", MakeTensor<int64_t>({2}, {1, 0})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(Values<float>(out[0]),
              Pointwise(FloatNear(1e-6),
                        std::vector<float>{static_cast<float>(
                            std::log(2.0) + std::log1p(std::exp(-2.0)))}));
  EXPECT_NEAR(Values<float>(out[1])[0], -std::log(2.0), 1e-6);
}

TEST(SuiteOpsImportTest, NllLossRejectsAnUnknownReduction) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2, 2});
  AddInput(model, "labels", {2}, onnx::TensorProto::INT64);
  SetString(AddNode(model, "NegativeLogLikelihoodLoss", {"x", "labels"},
                    {"loss"}, "nll"),
            "reduction", "average");
  AddOutput(model, "loss");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("attribute \"reduction\" = \"average\": expected "
                        "\"none\", \"sum\" or \"mean\""));
}

TEST(SuiteOpsImportTest, RmsNormalizationOverTheTrailingAxes) {
  onnx::ModelProto model = Model(23);
  AddInput(model, "x", {1, 2});
  AddInput(model, "scale", {2});
  SetFloat(AddNode(model, "RMSNormalization", {"x", "scale"}, {"y"}), "epsilon",
           0.0f);
  AddOutput(model, "y");
  // rms([3, 4]) = sqrt(12.5).
  const std::vector<Tensor> out =
      ImportAndRun(model, {{"x", MakeTensor<float>({1, 2}, {3, 4})},
                           {"scale", MakeTensor<float>({2}, {1, 2})}});
  ASSERT_EQ(out.size(), 1u);
  const float rms = std::sqrt(12.5f);
  EXPECT_THAT(Values<float>(out[0]),
              Pointwise(FloatNear(1e-6), std::vector<float>{3 / rms, 8 / rms}));
}

TEST(SuiteOpsImportTest, ReduceSumSquareAndLogSum) {
  onnx::ModelProto model = Model(18);
  AddInput(model, "x", {2, 2});
  SetInt(AddNode(model, "ReduceSumSquare", {"x"}, {"squares"}), "keepdims", 0);
  SetInt(AddNode(model, "ReduceLogSum", {"x"}, {"log_sum"}), "keepdims", 0);
  AddOutput(model, "squares");
  AddOutput(model, "log_sum");
  const std::vector<Tensor> out =
      ImportAndRun(model, {{"x", MakeTensor<float>({2, 2}, {1, 2, 3, 4})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(Values<float>(out[0]), ElementsAre(30.0f));
  EXPECT_THAT(Values<float>(out[1]),
              Pointwise(FloatNear(1e-6), std::vector<float>{std::log(10.0f)}));
}

TEST(SuiteOpsImportTest, CompositionsMatchHandComputedValues) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2, 3});
  AddInput(model, "keep", {2}, onnx::TensorProto::BOOL);
  AddNode(model, "Hardmax", {"x"}, {"hardmax"});
  SetFloat(AddNode(model, "ThresholdedRelu", {"x"}, {"thresholded"}), "alpha",
           2.0f);
  AddNode(model, "IsInf", {"x"}, {"inf"});
  SetInt(AddNode(model, "Compress", {"x", "keep"}, {"kept"}), "axis", 0);
  SetInt(AddNode(model, "EyeLike", {"x"}, {"eye"}), "k", 1);
  for (const char* name : {"hardmax", "thresholded", "inf", "kept", "eye"}) {
    AddOutput(model, name);
  }
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<Tensor> out = ImportAndRun(
      model, {{"x", MakeTensor<float>({2, 3}, {1, 3, 2, 5, 5, -inf})},
              {"keep", MakeTensor<bool>({2}, {false, true})}});
  ASSERT_EQ(out.size(), 5u);
  // Ties go to the first index.
  EXPECT_THAT(Values<float>(out[0]), ElementsAre(0, 1, 0, 1, 0, 0));
  EXPECT_THAT(Values<float>(out[1]), ElementsAre(0, 3, 0, 5, 5, 0));
  EXPECT_THAT(Values<bool>(out[2]),
              ElementsAre(false, false, false, false, false, true));
  EXPECT_THAT(Values<float>(out[3]), ElementsAre(5, 5, -inf));
  EXPECT_THAT(Values<float>(out[4]), ElementsAre(0, 1, 0, 0, 0, 1));
}

// Celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); MVN over the
// default axes [0, 2, 3] normalizes each channel: [1, 3] has mean 2 and
// deviation 1, and a constant channel becomes 0 (divided by 1e-9).
TEST(SuiteOpsImportTest, CeluAndMeanVarianceNormalization) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {1, 2, 2, 1});
  SetFloat(AddNode(model, "Celu", {"x"}, {"celu"}), "alpha", 2.0f);
  AddNode(model, "MeanVarianceNormalization", {"x"}, {"mvn"});
  AddOutput(model, "celu");
  AddOutput(model, "mvn");
  const std::vector<Tensor> out = ImportAndRun(
      model, {{"x", MakeTensor<float>({1, 2, 2, 1}, {1, 3, -1, -1})}});
  ASSERT_EQ(out.size(), 2u);
  const float negative = 2 * (std::exp(-0.5f) - 1);
  EXPECT_THAT(Values<float>(out[0]),
              Pointwise(FloatNear(1e-6),
                        std::vector<float>{1, 3, negative, negative}));
  EXPECT_THAT(Values<float>(out[1]),
              Pointwise(FloatNear(1e-6), std::vector<float>{-1, 1, 0, 0}));
}

TEST(SuiteOpsImportTest, CeluOfAlphaZeroIsRejected) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2});
  SetFloat(AddNode(model, "Celu", {"x"}, {"y"}), "alpha", 0.0f);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("alpha = 0: Celu divides by alpha"));
}

// Det, ReverseSequence and TensorScatter each become their own op.
TEST(SuiteOpsImportTest, DetReverseSequenceAndTensorScatter) {
  onnx::ModelProto model = Model(24);
  AddInput(model, "m", {2, 2});
  AddInput(model, "lens", {2}, onnx::TensorProto::INT64);
  AddInput(model, "update", {2, 1});
  AddInput(model, "at", {2}, onnx::TensorProto::INT64);
  AddNode(model, "Det", {"m"}, {"det"});
  onnx::NodeProto* reverse =
      AddNode(model, "ReverseSequence", {"m", "lens"}, {"reversed"});
  SetInt(reverse, "batch_axis", 0);
  SetInt(reverse, "time_axis", 1);
  onnx::NodeProto* scatter =
      AddNode(model, "TensorScatter", {"m", "update", "at"}, {"scattered"});
  SetInt(scatter, "axis", 1);
  SetString(scatter, "mode", "circular");
  for (const char* name : {"det", "reversed", "scattered"}) {
    AddOutput(model, name);
  }
  const std::vector<Tensor> out = ImportAndRun(
      model, {{"m", MakeTensor<float>({2, 2}, {1, 2, 3, 4})},
              {"lens", MakeTensor<int64_t>({2}, {2, 1})},
              {"update", MakeTensor<float>({2, 1}, {7, 8})},
              {"at", MakeTensor<int64_t>({2}, {1, 0})}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(Values<float>(out[0]), ElementsAre(-2.0f));
  EXPECT_THAT(Values<float>(out[1]), ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(Values<float>(out[2]), ElementsAre(1, 7, 8, 4));
}

// A tensor is a present optional, a left-out input an empty one.
TEST(SuiteOpsImportTest, OptionalsOfTensorsAreDecidedAtImport) {
  onnx::ModelProto model = Model(18);
  AddInput(model, "x", {2});
  AddNode(model, "Optional", {"x"}, {"opt"});
  AddNode(model, "OptionalHasElement", {"opt"}, {"has"});
  AddNode(model, "OptionalHasElement", {""}, {"has_none"});
  AddNode(model, "OptionalHasElement", {}, {"has_nothing"});
  AddNode(model, "OptionalGetElement", {"opt"}, {"got"});
  for (const char* name : {"has", "has_none", "has_nothing", "got"}) {
    AddOutput(model, name);
  }
  const std::vector<Tensor> out =
      ImportAndRun(model, {{"x", MakeTensor<float>({2}, {5, 6})}});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(Values<bool>(out[0]), ElementsAre(true));
  EXPECT_THAT(Values<bool>(out[1]), ElementsAre(false));
  EXPECT_THAT(Values<bool>(out[2]), ElementsAre(false));
  EXPECT_THAT(Values<float>(out[3]), ElementsAre(5, 6));
}

// An optional tensor graph input imports as the tensor, a required input:
// every run feeds it, so it has an element.
TEST(SuiteOpsImportTest, OptionalTensorInputImportsAsTheTensor) {
  onnx::ModelProto model = Model(18);
  AddInput(model, "x", {2});
  onnx::TypeProto* type = model.mutable_graph()->mutable_input(0)->mutable_type();
  onnx::TypeProto tensor = *type;
  *type->mutable_optional_type()->mutable_elem_type() = tensor;
  ASSERT_FALSE(type->has_tensor_type());
  AddNode(model, "OptionalHasElement", {"x"}, {"has"});
  AddNode(model, "OptionalGetElement", {"x"}, {"got"});
  AddOutput(model, "has");
  AddOutput(model, "got");
  const std::vector<Tensor> out =
      ImportAndRun(model, {{"x", MakeTensor<float>({2}, {5, 6})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(Values<bool>(out[0]), ElementsAre(true));
  EXPECT_THAT(Values<float>(out[1]), ElementsAre(5, 6));
  // An optional of a sequence is refused.
  *type->mutable_optional_type()->mutable_elem_type()
       ->mutable_sequence_type()->mutable_elem_type() = tensor;
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("an optional of a sequence: scopeflow has no "
                        "sequence, map or sparse graph inputs"));
}

// The test cases' OptionalProto files: empty, holding a tensor, or holding
// another kind of value.
TEST(SuiteOpsImportTest, ReadsOptionalTensorFiles) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/optional.pb";
  auto write = [&](const onnx::OptionalProto& proto) {
    std::ofstream(path, std::ios::binary) << proto.SerializeAsString();
  };
  onnx::OptionalProto proto;
  write(proto);
  absl::StatusOr<std::optional<Tensor>> read = ReadOnnxOptionalTensor(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->has_value());
  proto.set_elem_type(1);
  *proto.mutable_tensor_value() = FloatProto("t", {2}, {3, 4});
  write(proto);
  read = ReadOnnxOptionalTensor(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->has_value());
  EXPECT_THAT(Values<float>(**read), ElementsAre(3, 4));
  proto.clear_tensor_value();
  proto.set_elem_type(3);
  write(proto);
  read = ReadOnnxOptionalTensor(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr("an optional of element kind 3, not a tensor"));
}

TEST(SuiteOpsImportTest, EmptyOptionalsAreRefused) {
  onnx::ModelProto empty = Model(18);
  AddNode(empty, "Optional", {}, {"opt"});
  AddOutput(empty, "opt");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(empty);
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("an empty optional (Optional without an input) has "
                        "no scopeflow equivalent"));
  onnx::ModelProto get = Model(18);
  AddNode(get, "OptionalGetElement", {""}, {"y"});
  AddOutput(get, "y");
  imported = ImportOnnx(get);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("OptionalGetElement of an empty optional"));
}

// Float16 converts through an exact cast to float32.
TEST(SuiteOpsImportTest, IsNaNAndIsInfOfFloat16) {
  onnx::ModelProto model = Model(20);
  AddInput(model, "x", {4}, onnx::TensorProto::FLOAT16);
  AddNode(model, "IsNaN", {"x"}, {"nan"});
  SetInt(AddNode(model, "IsInf", {"x"}, {"inf"}), "detect_negative", 0);
  AddOutput(model, "nan");
  AddOutput(model, "inf");
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<Tensor> out = ImportAndRun(
      model, {{"x", MakeTensor<float16>(
                        {4}, {FloatToHalf(1.0f), FloatToHalf(inf),
                              FloatToHalf(-inf), FloatToHalf(std::nanf(""))})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(Values<bool>(out[0]), ElementsAre(false, false, false, true));
  EXPECT_THAT(Values<bool>(out[1]), ElementsAre(false, true, false, false));
}

TEST(SuiteOpsImportTest, AttentionGroupsHeadsAndSoftcaps) {
  // One query, two keys, two query heads sharing one key/value head; with
  // scale 1 and q . k = [0, 0] and [ln 3, 0] the weights are [1/2, 1/2]
  // and [3/4, 1/4].
  for (const float softcap : {0.0f, 100.0f}) {
    SCOPED_TRACE(softcap);
    onnx::ModelProto model = Model(23);
    AddInput(model, "q", {1, 2, 1, 1});
    AddInput(model, "k", {1, 1, 2, 1});
    AddInput(model, "v", {1, 1, 2, 1});
    onnx::NodeProto* node = AddNode(model, "Attention", {"q", "k", "v"}, {"y"});
    SetFloat(node, "scale", 1.0f);
    if (softcap != 0) SetFloat(node, "softcap", softcap);
    AddOutput(model, "y");
    const float ln3 = std::log(3.0f);
    const std::vector<Tensor> out =
        ImportAndRun(model, {{"q", MakeTensor<float>({1, 2, 1, 1}, {0, 1})},
                             {"k", MakeTensor<float>({1, 1, 2, 1}, {ln3, 0})},
                             {"v", MakeTensor<float>({1, 1, 2, 1}, {4, 8})}});
    ASSERT_EQ(out.size(), 1u);
    // A softcap of 100 changes ln 3 by under 1e-5.
    EXPECT_THAT(Values<float>(out[0]),
                Pointwise(FloatNear(1e-4), std::vector<float>{6.0f, 5.0f}));
  }
}

TEST(SuiteOpsImportTest, AttentionWithKeyLengthsIsUnsupported) {
  onnx::ModelProto model = Model(24);
  AddInput(model, "q", {1, 1, 1, 1});
  AddInput(model, "lengths", {1}, onnx::TensorProto::INT64);
  AddNode(model, "Attention", {"q", "q", "q", "", "", "", "lengths"}, {"y"},
          "attention");
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("nonpad_kv_seqlen"));
}

}  // namespace
}  // namespace scopeflow
