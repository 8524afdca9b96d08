// batch_norm in training mode and its gradient: numeric checks in both
// modes, hand-computed float32 outputs, gradients and running statistics
// over two runs of a net, and errors.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

constexpr char kInputs[] =
    "inputs { slot: \"X\" vars: \"x\" } "
    "inputs { slot: \"Scale\" vars: \"scale\" } "
    "inputs { slot: \"Bias\" vars: \"bias\" } "
    "inputs { slot: \"Mean\" vars: \"mean\" } "
    "inputs { slot: \"Variance\" vars: \"var\" } ";

// Training batch_norm with every output bound, the running statistics to
// new variables, and more attributes `attrs`.
std::string Training(const std::string& attrs = "") {
  return absl::StrCat("type: \"batch_norm\" ", kInputs,
                      "outputs { slot: \"Y\" vars: \"y\" } "
                      "outputs { slot: \"MeanOut\" vars: \"mean_out\" } "
                      "outputs { slot: \"VarianceOut\" vars: \"var_out\" } "
                      "outputs { slot: \"SavedMean\" vars: \"saved_mean\" } "
                      "outputs { slot: \"SavedVariance\" vars: \"saved_var\" } "
                      "attrs { name: \"is_test\" b: false } ",
                      attrs);
}

std::string Inference(const std::string& attrs = "") {
  return absl::StrCat("type: \"batch_norm\" ", kInputs,
                      "outputs { slot: \"Y\" vars: \"y\" } ", attrs);
}

Tensor Random(const Dims& dims, double lo, double hi, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(NumElements(dims));
  for (double& v : values) v = dist(engine);
  return MakeTensor<double>(dims, values);
}

std::vector<Feed> RandomFeeds(const Dims& x_dims, uint32_t seed) {
  const int64_t c = x_dims[1];
  return {{"x", Random(x_dims, -2, 2, seed)},
          {"scale", Random({c}, 0.5, 2, seed + 1)},
          {"bias", Random({c}, -1, 1, seed + 2)},
          {"mean", Random({c}, -1, 1, seed + 3)},
          {"var", Random({c}, 0.5, 2, seed + 4)}};
}

TEST(BatchNormGradTest, TrainingMatchesCentralDifferences) {
  GradCheckOptions options;
  // Mean and Variance only feed the running statistics, which carry no
  // gradient.
  options.wrt = {"x", "scale", "bias"};
  uint32_t seed = 1;
  for (const Dims& dims : {Dims{3, 2, 2, 2}, Dims{4, 3}, Dims{2, 3, 5}}) {
    SCOPED_TRACE(DimsToString(dims));
    absl::Status status =
        CheckGradient(Training(), RandomFeeds(dims, seed += 10), options);
    EXPECT_TRUE(status.ok()) << status;
  }
  absl::Status epsilon =
      CheckGradient(Training("attrs { name: \"epsilon\" f: 0.5 }"),
                    RandomFeeds({2, 2, 3}, 100), options);
  EXPECT_TRUE(epsilon.ok()) << epsilon;
}

TEST(BatchNormGradTest, InferenceMatchesCentralDifferences) {
  GradCheckOptions options;
  options.wrt = {"x", "scale", "bias"};
  for (const Dims& dims : {Dims{3, 2, 2, 2}, Dims{4, 3}}) {
    SCOPED_TRACE(DimsToString(dims));
    absl::Status status =
        CheckGradient(Inference(), RandomFeeds(dims, 7), options);
    EXPECT_TRUE(status.ok()) << status;
  }
}

// X [2, 2, 1, 2]: channel 0 holds 1, 1, 3, 3 (mean 2, variance 1),
// channel 1 holds 0, 2, 2, 8 (mean 3, variance 9).
Tensor HandX() {
  return MakeTensor<float>({2, 2, 1, 2}, {1, 1, 0, 2, 3, 3, 2, 8});
}

TEST(BatchNormTrainingTest, HandComputedOutputs) {
  const std::vector<Feed> feeds = {{"x", HandX()},
                                   {"scale", MakeTensor<float>({2}, {2, 3})},
                                   {"bias", MakeTensor<float>({2}, {0.5, -1})},
                                   {"mean", MakeTensor<float>({2}, {0, 1})},
                                   {"var", MakeTensor<float>({2}, {1, 2})}};
  auto out =
      RunOp(Training("attrs { name: \"epsilon\" f: 0 } "
                     "attrs { name: \"momentum\" f: 0.5 }"),
            feeds, {"y", "mean_out", "var_out", "saved_mean", "saved_var"});
  ASSERT_TRUE(out.ok()) << out.status();
  // xhat: channel 0 -1, -1, 1, 1; channel 1 -1, -1/3, -1/3, 5/3; then
  // * scale + bias.
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(FloatEq(), std::vector<float>{-1.5, -1.5, -4, -2, 2.5,
                                                      2.5, -2, 4}));
  // 0.5 * running + 0.5 * batch, the biased batch variance.
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(1, 2));
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(1, 5.5));
  EXPECT_THAT(Values<float>((*out)[3]), ElementsAre(2, 3));
  // The inverse standard deviation.
  EXPECT_THAT(Values<float>((*out)[4]),
              Pointwise(FloatEq(), std::vector<float>{1, 1.0f / 3}));
}

std::string GradOp(bool is_test) {
  return absl::StrCat(
      "type: \"batch_norm_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Scale\" vars: \"scale\" } ",
      is_test ? "inputs { slot: \"Mean\" vars: \"mean\" } "
                "inputs { slot: \"Variance\" vars: \"var\" } "
              : "inputs { slot: \"SavedMean\" vars: \"mean\" } "
                "inputs { slot: \"SavedVariance\" vars: \"var\" } ",
      "inputs { slot: \"Y@GRAD\" vars: \"dy\" } "
      "outputs { slot: \"X@GRAD\" vars: \"dx\" } "
      "outputs { slot: \"Scale@GRAD\" vars: \"dscale\" } "
      "outputs { slot: \"Bias@GRAD\" vars: \"dbias\" } "
      "attrs { name: \"epsilon\" f: 0 } attrs { name: \"is_test\" b: ",
      is_test ? "true" : "false", " }");
}

TEST(BatchNormTrainingTest, HandComputedGradients) {
  // Out@GRAD 1 on the first value of channel 0 and 3 on the second of
  // channel 1 (xhat -1 and -1/3).
  const Tensor dy = MakeTensor<float>({2, 2, 1, 2}, {1, 0, 0, 3, 0, 0, 0, 0});
  const Tensor scale = MakeTensor<float>({2}, {2, 3});
  auto training = RunOp(GradOp(false),
                        {{"x", HandX()},
                         {"scale", scale},
                         {"mean", MakeTensor<float>({2}, {2, 3})},
                         {"var", MakeTensor<float>({2}, {1, 1.0f / 3})},
                         {"dy", dy}},
                        {"dx", "dscale", "dbias"});
  ASSERT_TRUE(training.ok()) << training.status();
  // scale * inv_std / 4 * (4 dy - sum(dy) - xhat * sum(dy xhat)):
  // channel 0 0.5 * (4 dy - 1 + xhat), channel 1 0.25 * (4 dy - 3 + xhat).
  EXPECT_THAT(
      Values<float>((*training)[0]),
      Pointwise(FloatEq(), std::vector<float>{1, -1, -1, 13.0f / 6, 0, 0,
                                              -5.0f / 6, -1.0f / 3}));
  EXPECT_THAT(Values<float>((*training)[1]),
              Pointwise(FloatEq(), std::vector<float>{-1, -1}));
  EXPECT_THAT(Values<float>((*training)[2]), ElementsAre(1, 3));

  // Inference with the same statistics as running ones: they are constants,
  // so X@GRAD is dy * scale * inv_std.
  auto inference = RunOp(GradOp(true),
                         {{"x", HandX()},
                          {"scale", scale},
                          {"mean", MakeTensor<float>({2}, {2, 3})},
                          {"var", MakeTensor<float>({2}, {1, 9})},
                          {"dy", dy}},
                         {"dx", "dscale", "dbias"});
  ASSERT_TRUE(inference.ok()) << inference.status();
  EXPECT_THAT(Values<float>((*inference)[0]),
              Pointwise(FloatEq(), std::vector<float>{2, 0, 0, 3, 0, 0, 0, 0}));
  EXPECT_THAT(Values<float>((*inference)[1]),
              Pointwise(FloatEq(), std::vector<float>{-1, -1}));
  EXPECT_THAT(Values<float>((*inference)[2]), ElementsAre(1, 3));
}

// A training net whose running statistics are persistable and updated in
// place (MeanOut is Mean, VarianceOut is Variance), with `x_shape` and
// `mean_shape` the declared shapes of X and of the running statistics.
NetDef TrainingNet(const std::string& x_shape, const std::string& mean_shape) {
  const std::string text = absl::StrCat(
      "name: \"bn\" blocks { "
      "vars { name: \"x\" dtype: DATA_TYPE_FLOAT32 shape: ",
      x_shape,
      " } "
      "vars { name: \"scale\" dtype: DATA_TYPE_FLOAT32 shape: 2 "
      "persistable: true } "
      "vars { name: \"bias\" dtype: DATA_TYPE_FLOAT32 shape: 2 "
      "persistable: true } "
      "vars { name: \"mean\" dtype: DATA_TYPE_FLOAT32 shape: ",
      mean_shape,
      " persistable: true } "
      "vars { name: \"var\" dtype: DATA_TYPE_FLOAT32 shape: ",
      mean_shape,
      " persistable: true } "
      "ops { type: \"batch_norm\" ",
      kInputs,
      "outputs { slot: \"Y\" vars: \"y\" } "
      "outputs { slot: \"MeanOut\" vars: \"mean\" } "
      "outputs { slot: \"VarianceOut\" vars: \"var\" } "
      "outputs { slot: \"SavedMean\" vars: \"saved_mean\" } "
      "outputs { slot: \"SavedVariance\" vars: \"saved_var\" } "
      "attrs { name: \"is_test\" b: false } "
      "attrs { name: \"epsilon\" f: 0 } } }");
  NetDef net;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  net.set_format_version(kNetFormatVersion);
  return net;
}

Tensor* ScopeTensor(Scope& scope, const std::string& name) {
  return scope.Var(name)->GetMutable<Tensor>().value();
}

// running = momentum * running + (1 - momentum) * batch, as the kernel
// computes it: in double from the float32 values, rounded to float32.
std::vector<float> Updated(const std::vector<float>& running,
                           const std::vector<double>& batch) {
  const double momentum = 0.9f;
  std::vector<float> out(running.size());
  for (size_t c = 0; c < running.size(); ++c) {
    out[c] =
        static_cast<float>(momentum * running[c] + (1 - momentum) * batch[c]);
  }
  return out;
}

TEST(BatchNormTrainingTest, RunningStatisticsUpdateInPlaceOverTwoRuns) {
  Executor executor;
  auto prepared =
      executor.Prepare(TrainingNet("[-1, 2, 1, 2]", "2"), 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  *ScopeTensor(scope, "scale") = MakeTensor<float>({2}, {2, 3});
  *ScopeTensor(scope, "bias") = MakeTensor<float>({2}, {0.5, -1});
  *ScopeTensor(scope, "mean") = MakeTensor<float>({2}, {0, 1});
  *ScopeTensor(scope, "var") = MakeTensor<float>({2}, {1, 2});
  const void* mean_buffer = ScopeTensor(scope, "mean")->raw_data();
  const void* var_buffer = ScopeTensor(scope, "var")->raw_data();

  // Run 1: batch mean [2, 3], biased variance [1, 9].
  auto first = executor.Run(*prepared, scope, {{"x", HandX()}}, {"y"});
  ASSERT_TRUE(first.ok()) << first.status();
  const std::vector<float> mean1 = Updated({0, 1}, {2, 3});
  const std::vector<float> var1 = Updated({1, 2}, {1, 9});
  EXPECT_THAT(Values<float>(*ScopeTensor(scope, "mean")),
              Pointwise(FloatEq(), mean1));
  EXPECT_THAT(Values<float>(*ScopeTensor(scope, "var")),
              Pointwise(FloatEq(), var1));
  // Updated in the buffers they had.
  EXPECT_EQ(ScopeTensor(scope, "mean")->raw_data(), mean_buffer);
  EXPECT_EQ(ScopeTensor(scope, "var")->raw_data(), var_buffer);

  // Run 2, X doubled: batch mean [4, 6], variance [4, 36]. The batch
  // statistics normalize, so Y is the same as in run 1.
  std::vector<float> doubled = Values<float>(HandX());
  for (float& v : doubled) v *= 2;
  auto second =
      executor.Run(*prepared, scope,
                   {{"x", MakeTensor<float>({2, 2, 1, 2}, doubled)}}, {"y"});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(Values<float>((*second)[0]),
              Pointwise(FloatEq(), Values<float>((*first)[0])));
  EXPECT_THAT(Values<float>(*ScopeTensor(scope, "mean")),
              Pointwise(FloatEq(), Updated(mean1, {4, 6})));
  EXPECT_THAT(Values<float>(*ScopeTensor(scope, "var")),
              Pointwise(FloatEq(), Updated(var1, {4, 36})));
  EXPECT_EQ(ScopeTensor(scope, "mean")->raw_data(), mean_buffer);
}

// The running statistics are written by the net, so they are no
// parameters: AppendBackward differentiates Scale and Bias only, and the
// backward net runs with the in-place update.
TEST(BatchNormTrainingTest, AppendBackwardDifferentiatesScaleAndBias) {
  NetDef net = TrainingNet("[-1, 2, 1, 2]", "2");
  auto grads = AppendBackward(net, "y");
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_EQ(grads->size(), 2u);
  EXPECT_EQ((*grads)[0].var, "scale");
  EXPECT_EQ((*grads)[1].var, "bias");
  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  *ScopeTensor(scope, "scale") = MakeTensor<float>({2}, {2, 3});
  *ScopeTensor(scope, "bias") = MakeTensor<float>({2}, {0.5, -1});
  *ScopeTensor(scope, "mean") = MakeTensor<float>({2}, {0, 1});
  *ScopeTensor(scope, "var") = MakeTensor<float>({2}, {1, 2});
  auto out = executor.Run(*prepared, scope, {{"x", HandX()}},
                          {(*grads)[0].grad, (*grads)[1].grad});
  ASSERT_TRUE(out.ok()) << out.status();
  // d sum(y) / d scale = sum(xhat) = 0; d / d bias = 4 values per channel.
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(FloatNear(1e-6), std::vector<float>{0, 0}));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(4, 4));
  EXPECT_THAT(Values<float>(*ScopeTensor(scope, "mean")),
              Pointwise(FloatEq(), Updated({0, 1}, {2, 3})));
}

// The scope's running mean has 3 values, X 2 channels.
absl::Status RunWithWrongShapedMean(const std::string& x_shape) {
  Executor executor;
  SF_ASSIGN_OR_RETURN(
      PreparedNet prepared,
      executor.Prepare(TrainingNet(x_shape, "-1"), 0, CPUPlace()));
  Scope scope;
  *ScopeTensor(scope, "scale") = MakeTensor<float>({2}, {1, 1});
  *ScopeTensor(scope, "bias") = MakeTensor<float>({2}, {0, 0});
  *ScopeTensor(scope, "mean") = MakeTensor<float>({3}, {0, 0, 0});
  *ScopeTensor(scope, "var") = MakeTensor<float>({2}, {1, 1});
  return executor.Run(prepared, scope, {{"x", HandX()}}, {"y"}).status();
}

TEST(BatchNormTrainingErrorTest, WrongShapedMeanNamesOpAndVariable) {
  // X's channels unknown until the run: the op finds the mismatch.
  absl::Status status = RunWithWrongShapedMean("[-1, -1, 1, 2]");
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (batch_norm): input \"Mean\" (variable \"mean\") "
                        "has shape [3]: expected [2], one value per channel "
                        "of \"X\" (variable \"x\", shape [2, 2, 1, 2])"));
  // Known at Prepare: MeanOut, the same variable, must be [2], and the
  // executor checks the scope's tensor against that before any op runs.
  absl::Status known = RunWithWrongShapedMean("[-1, 2, 1, 2]");
  EXPECT_THAT(known.message(),
              HasSubstr("persistable variable \"mean\": the net declares "
                        "float32 [2], the scope holds"));
}

TEST(BatchNormTrainingErrorTest, EmptyBatch) {
  std::vector<Feed> feeds = RandomFeeds({1, 2}, 1);
  feeds[0] = {"x", MakeTensor<double>({0, 2}, {})};
  auto out = RunOp(Training(), feeds, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (batch_norm): training needs at least one value "
                        "per channel of input \"X\" (variable \"x\", shape "
                        "[0, 2])"));
}

TEST(BatchNormTrainingErrorTest, GradientNeedsTheSavedStatistics) {
  const std::string no_saved =
      absl::StrCat("type: \"batch_norm\" ", kInputs,
                   "outputs { slot: \"Y\" vars: \"y\" } "
                   "outputs { slot: \"MeanOut\" vars: \"mean_out\" } "
                   "outputs { slot: \"VarianceOut\" vars: \"var_out\" } "
                   "attrs { name: \"is_test\" b: false }");
  GradCheckOptions options;
  options.wrt = {"x"};
  absl::Status status =
      CheckGradient(no_saved, RandomFeeds({2, 2}, 1), options);
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (batch_norm): making its gradient: output "
                        "\"SavedMean\" is not bound: the gradient of training "
                        "batch_norm reads the batch statistics"));
  // The gradient op alone, without them.
  absl::Status grad_op = PrepareOp(
      "type: \"batch_norm_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Scale\" vars: \"scale\" } "
      "inputs { slot: \"Y@GRAD\" vars: \"x\" } "
      "outputs { slot: \"X@GRAD\" vars: \"dx\" } "
      "attrs { name: \"is_test\" b: false }",
      {{"x", MakeTensor<float>({2, 2}, {})},
       {"scale", MakeTensor<float>({2}, {})}});
  EXPECT_THAT(grad_op.message(),
              HasSubstr("op 0 (batch_norm_grad): input \"SavedMean\" is not "
                        "bound: the gradient in training mode reads the batch "
                        "statistics the forward saved"));
}

TEST(BatchNormTrainingErrorTest, MomentumOutOfRange) {
  absl::Status status = PrepareOp(Training("attrs { name: \"momentum\" f: 2 }"),
                                  RandomFeeds({2, 2}, 1));
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (batch_norm): attribute \"momentum\" must be in "
                        "[0, 1]"));
}

}  // namespace
}  // namespace scopeflow
