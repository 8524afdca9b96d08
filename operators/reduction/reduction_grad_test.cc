// Gradients of the reductions and of softmax_with_cross_entropy: numeric
// checks in float64 over axes, keep_dim and whole reductions, hand-computed
// float32 values of the gradient ops (reduce_max's ties included), and the
// cross-entropy's gradient through a mean-reduced loss.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string OpText(const std::string& type, const std::string& attrs = "") {
  return absl::StrCat("type: \"", type,
                      "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
                      "\"Out\" vars: \"out\" } ",
                      attrs);
}

// `attrs { name: "axes" ints { values: [...] } }`, and keep_dim if asked.
std::string Axes(const std::vector<int>& axes, bool keep_dim = false) {
  return absl::StrCat("attrs { name: \"axes\" ints { values: [",
                      absl::StrJoin(axes, ", "), "] } }",
                      keep_dim ? " attrs { name: \"keep_dim\" b: true }" : "");
}

// A float64 tensor of `dims` holding distinct values at least 0.1 apart in
// shuffled order, so that reduce_max has no ties, and no central difference
// step changes which element is the maximum.
Tensor Distinct(const Dims& dims, uint32_t seed) {
  std::vector<double> values(NumElements(dims));
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.1 * i - 1;
  std::mt19937 rng(seed);
  std::shuffle(values.begin(), values.end(), rng);
  return MakeTensor<double>(dims, values);
}

TEST(ReductionGradTest, NumericCheckOverAxesAndKeepDim) {
  struct AxesCase {
    Dims dims;
    std::vector<int> axes;
    bool keep_dim;
  };
  const std::vector<AxesCase> cases = {
      {{2, 3, 4}, {}, false},      // every axis, to a scalar
      {{2, 3, 4}, {}, true},       // every axis, to [1, 1, 1]
      {{2, 3, 4}, {0}, false},     // kept innermost run
      {{2, 3, 4}, {1}, true},      // reduced middle, kept inner run
      {{2, 3, 4}, {-1}, false},    // reduced innermost run
      {{2, 3, 4}, {0, 2}, false},  // alternating runs
      {{2, 3, 4}, {2, 0}, true},
      {{2, 1, 3}, {1}, false},  // a reduced axis of size 1
      {{5}, {0}, false},
      {{}, {}, false},  // a scalar
  };
  uint32_t seed = 0;
  for (const char* op : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    for (const AxesCase& c : cases) {
      SCOPED_TRACE(absl::StrCat(op, " of ", DimsToString(c.dims), " over ",
                                Axes(c.axes, c.keep_dim)));
      absl::Status status = CheckGradient(OpText(op, Axes(c.axes, c.keep_dim)),
                                          {{"x", Distinct(c.dims, ++seed)}});
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

TEST(ReductionGradTest, NumericCheckOfMean) {
  for (const Dims& dims : {Dims{2, 3}, Dims{7}, Dims{}}) {
    SCOPED_TRACE(DimsToString(dims));
    absl::Status status =
        CheckGradient(OpText("mean"), {{"x", Distinct(dims, 40)}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

std::string CrossEntropyOp(const std::string& attrs = "") {
  return absl::StrCat(
      "type: \"softmax_with_cross_entropy\" inputs { slot: \"Logits\" vars: "
      "\"logits\" } inputs { slot: \"Label\" vars: \"label\" } outputs { "
      "slot: \"Softmax\" vars: \"softmax\" } outputs { slot: \"Loss\" vars: "
      "\"loss\" } ",
      attrs);
}

TEST(ReductionGradTest, NumericCheckOfSoftmaxWithCrossEntropy) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(-3, 3);
  std::vector<double> logits(4 * 5);
  for (double& v : logits) v = uniform(rng);
  const Tensor x = MakeTensor<double>({4, 5}, logits);
  for (const Tensor& label : {MakeTensor<int64_t>({4}, {0, 4, 2, 2}),
                              MakeTensor<int64_t>({4, 1}, {3, 1, 0, 4})}) {
    for (const std::string& attrs :
         {std::string(), std::string("attrs { name: \"axis\" i: 1 }")}) {
      SCOPED_TRACE(label.DebugString() + " " + attrs);
      GradCheckOptions options;
      options.wrt = {"logits"};
      absl::Status status = CheckGradient(
          CrossEntropyOp(attrs), {{"logits", x}, {"label", label}}, options);
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

// Runs gradient op `type` with X = x (and Out = out, if given) and
// Out@GRAD = g; returns X@GRAD.
absl::StatusOr<Tensor> RunGrad(const std::string& type,
                               const std::string& attrs, const Tensor& x,
                               const Tensor& g, const Tensor* out = nullptr) {
  std::vector<Feed> feeds = {{"x", x}, {"g", g}};
  std::string text =
      absl::StrCat("type: \"", type, "\" inputs { slot: \"X\" vars: \"x\" } ");
  if (out != nullptr) {
    absl::StrAppend(&text, "inputs { slot: \"Out\" vars: \"out\" } ");
    feeds.push_back({"out", *out});
  }
  absl::StrAppend(&text,
                  "inputs { slot: \"Out@GRAD\" vars: \"g\" } outputs { slot: "
                  "\"X@GRAD\" vars: \"dx\" } ",
                  attrs);
  auto result = RunOp(text, feeds, {"dx"});
  if (!result.ok()) return result.status();
  EXPECT_EQ((*result)[0].dims(), x.dims());
  return (*result)[0];
}

TEST(ReductionGradTest, Float32ValuesOfReduceSumAndMean) {
  const Tensor x = MakeTensor<float>({2, 3}, {9, 9, 9, 9, 9, 9});
  auto sum_rows = RunGrad("reduce_sum_grad", Axes({1}), x,
                          MakeTensor<float>({2}, {1.5f, -2}));
  ASSERT_TRUE(sum_rows.ok()) << sum_rows.status();
  EXPECT_THAT(Values<float>(*sum_rows),
              ElementsAre(1.5f, 1.5f, 1.5f, -2, -2, -2));
  auto sum_all = RunGrad("reduce_sum_grad", Axes({}, /*keep_dim=*/true), x,
                         MakeTensor<float>({1, 1}, {4}));
  ASSERT_TRUE(sum_all.ok()) << sum_all.status();
  EXPECT_THAT(Values<float>(*sum_all), ElementsAre(4, 4, 4, 4, 4, 4));
  // Over axis 0: each of the 3 columns averaged 2 elements.
  auto mean_columns = RunGrad("reduce_mean_grad", Axes({0}, true), x,
                              MakeTensor<float>({1, 3}, {1, 2, -3}));
  ASSERT_TRUE(mean_columns.ok()) << mean_columns.status();
  EXPECT_THAT(Values<float>(*mean_columns),
              ElementsAre(0.5f, 1, -1.5f, 0.5f, 1, -1.5f));
  auto mean = RunOp(
      "type: \"mean_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" vars: \"dx\" }",
      {{"x", MakeTensor<float>({4}, {1, 2, 3, 4})},
       {"g", MakeTensor<float>({}, {2})}},
      {"dx"});
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_THAT(Values<float>((*mean)[0]), ElementsAre(0.5f, 0.5f, 0.5f, 0.5f));
}

TEST(ReductionGradTest, ReduceMaxGivesTheGradientToTheFirstMaximum) {
  // Along rows (a reduced innermost run): 3 ties in row 0, 2 in row 1.
  const Tensor rows = MakeTensor<float>({2, 3}, {1, 3, 3, 2, 0, 2});
  const Tensor row_max = MakeTensor<float>({2}, {3, 2});
  auto dx_rows = RunGrad("reduce_max_grad", Axes({1}), rows,
                         MakeTensor<float>({2}, {10, 20}), &row_max);
  ASSERT_TRUE(dx_rows.ok()) << dx_rows.status();
  EXPECT_THAT(Values<float>(*dx_rows), ElementsAre(0, 10, 0, 20, 0, 0));
  // Along columns (kept innermost runs): column 1 ties in rows 0 and 1.
  const Tensor columns = MakeTensor<float>({3, 2}, {1, 5, 4, 5, 4, 2});
  const Tensor column_max = MakeTensor<float>({1, 2}, {4, 5});
  auto dx_columns = RunGrad("reduce_max_grad", Axes({0}, true), columns,
                            MakeTensor<float>({1, 2}, {10, 20}), &column_max);
  ASSERT_TRUE(dx_columns.ok()) << dx_columns.status();
  EXPECT_THAT(Values<float>(*dx_columns), ElementsAre(0, 20, 10, 0, 0, 0));
  // A NaN maximum: the first NaN gets the gradient.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor with_nan = MakeTensor<float>({4}, {1, nan, 7, nan});
  const Tensor nan_max = MakeTensor<float>({}, {nan});
  auto dx_nan = RunGrad("reduce_max_grad", "", with_nan,
                        MakeTensor<float>({}, {3}), &nan_max);
  ASSERT_TRUE(dx_nan.ok()) << dx_nan.status();
  EXPECT_THAT(Values<float>(*dx_nan), ElementsAre(0, 3, 0, 0));
}

TEST(ReductionGradTest, ReduceMaxGradAgreesWithTheForwardOnTies) {
  // The forward's output fed to its gradient: every output's gradient
  // arrives whole, at one element that holds the maximum.
  const Tensor x = MakeTensor<float>({2, 2, 3}, {0, 1, 1, 1, 0, 1,  //
                                                 2, 2, 2, 2, 2, 2});
  auto forward = RunOp(OpText("reduce_max", Axes({0, 2})), {{"x", x}}, {"out"});
  ASSERT_TRUE(forward.ok()) << forward.status();
  const Tensor& out = (*forward)[0];
  ASSERT_THAT(Values<float>(out), ElementsAre(2, 2));
  auto dx = RunGrad("reduce_max_grad", Axes({0, 2}), x,
                    MakeTensor<float>({2}, {5, 7}), &out);
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(Values<float>(*dx),
              ElementsAre(0, 0, 0, 0, 0, 0, 5, 0, 0, 7, 0, 0));
}

TEST(ReductionGradTest, Float32ValuesOfSoftmaxWithCrossEntropyGrad) {
  auto out = RunOp(
      "type: \"softmax_with_cross_entropy_grad\" inputs { slot: \"Label\" "
      "vars: \"label\" } inputs { slot: \"Softmax\" vars: \"softmax\" } "
      "inputs { slot: \"Loss@GRAD\" vars: \"g\" } outputs { slot: "
      "\"Logits@GRAD\" vars: \"dx\" }",
      {{"label", MakeTensor<int64_t>({2, 1}, {2, 0})},
       {"softmax",
        MakeTensor<float>({2, 3}, {0.25f, 0.25f, 0.5f, 0.125f, 0.375f, 0.5f})},
       {"g", MakeTensor<float>({2, 1}, {2, -1})}},
      {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
  // (softmax - onehot(label)) * g, row by row.
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(0.5f, 0.5f, -1, 0.875f, -0.375f, -0.5f));
}

// loss = mean(softmax_with_cross_entropy(logits, label).Loss), with logits a
// parameter: d loss / d logits = (softmax(logits) - onehot(label)) / N.
TEST(ReductionGradTest, CrossEntropyThroughAMeanLoss) {
  NetDef net;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: \"net\" blocks { vars { name: \"logits\" dtype: "
      "DATA_TYPE_FLOAT32 shape: [3, 4] persistable: true } vars { name: "
      "\"label\" dtype: DATA_TYPE_INT64 shape: [3, 1] } ops { " +
          CrossEntropyOp() +
          " } ops { type: \"mean\" inputs { slot: \"X\" vars: \"loss\" } "
          "outputs { slot: \"Out\" vars: \"avg\" } } }",
      &net));
  net.set_format_version(kNetFormatVersion);
  auto grads = AppendBackward(net, "avg");
  ASSERT_TRUE(grads.ok()) << grads.status();
  ASSERT_EQ(grads->size(), 1u);
  EXPECT_EQ((*grads)[0].var, "logits");
  // No gradient flows through the Softmax output, nor to the label.
  for (const OpDef& op : net.blocks(0).ops()) {
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) {
        EXPECT_NE(var, "softmax@GRAD");
        EXPECT_NE(var, "label@GRAD");
      }
    }
  }

  const std::vector<float> logits = {1,  2,    0.5f, -1,  //
                                     0,  0,    0,    0,   //
                                     -2, 3.5f, 1,    0.25f};
  const std::vector<int64_t> labels = {1, 3, 0};
  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  *scope.Var("logits")->GetMutable<Tensor>().value() =
      MakeTensor<float>({3, 4}, logits);
  auto out = executor.Run(*prepared, scope,
                          {{"label", MakeTensor<int64_t>({3, 1}, labels)}},
                          {(*grads)[0].grad});
  ASSERT_TRUE(out.ok()) << out.status();

  std::vector<float> expected(12);
  for (int r = 0; r < 3; ++r) {
    double sum = 0;
    for (int c = 0; c < 4; ++c) sum += std::exp(double{logits[r * 4 + c]});
    for (int c = 0; c < 4; ++c) {
      const double softmax = std::exp(double{logits[r * 4 + c]}) / sum;
      expected[r * 4 + c] =
          static_cast<float>((softmax - (c == labels[r] ? 1 : 0)) / 3);
    }
  }
  EXPECT_THAT(Values<float>((*out)[0]), Pointwise(FloatNear(1e-6), expected));
}

TEST(ReductionGradTest, GradientOpInputsMustAgree) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto shape = RunGrad("reduce_sum_grad", Axes({1}), x,
                       MakeTensor<float>({3}, {1, 2, 3}));
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(),
              HasSubstr("op 0 (reduce_sum_grad): input \"Out@GRAD\" (variable "
                        "\"g\", shape [3]) is float32: expected float32 [2], "
                        "the output of reduce_sum for input \"X\" (variable "
                        "\"x\", shape [2, 3])"));
  const Tensor keep = MakeTensor<float>({2, 1}, {3, 6});
  auto max_out = RunGrad("reduce_max_grad", Axes({1}), x,
                         MakeTensor<float>({2}, {1, 2}), &keep);
  ASSERT_FALSE(max_out.ok());
  EXPECT_THAT(max_out.status().message(),
              HasSubstr("input \"Out\" (variable \"out\", shape [2, 1])"));
  auto dtype =
      RunGrad("reduce_mean_grad", Axes({}), x, MakeTensor<double>({}, {1}));
  ASSERT_FALSE(dtype.ok());
  EXPECT_THAT(dtype.status().message(),
              HasSubstr("is float64: expected float32 []"));
  auto mean = RunOp(
      "type: \"mean_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Out@GRAD\" vars: \"g\" } outputs { slot: \"X@GRAD\" vars: \"dx\" }",
      {{"x", x}, {"g", MakeTensor<float>({2}, {1, 2})}}, {"dx"});
  ASSERT_FALSE(mean.ok());
  EXPECT_THAT(mean.status().message(),
              HasSubstr("input \"Out@GRAD\" (variable \"g\", shape [2]): "
                        "expected one element"));
  auto label = RunOp(
      "type: \"softmax_with_cross_entropy_grad\" inputs { slot: \"Label\" "
      "vars: \"label\" } inputs { slot: \"Softmax\" vars: \"softmax\" } "
      "inputs { slot: \"Loss@GRAD\" vars: \"g\" } outputs { slot: "
      "\"Logits@GRAD\" vars: \"dx\" }",
      {{"label", MakeTensor<int64_t>({2}, {1, 3})},
       {"softmax", x},
       {"g", MakeTensor<float>({2, 1}, {1, 1})}},
      {"dx"});
  ASSERT_FALSE(label.ok());
  EXPECT_THAT(label.status().message(),
              HasSubstr("input \"Label\" holds 3 at row 1 (expected a class "
                        "in [0, 3))"));
}

TEST(ReductionGradTest, ArgmaxAndAccuracyHaveNoGradient) {
  for (const char* type : {"argmax", "accuracy"}) {
    const OpSpec* spec = OpRegistry::Global().Find(type);
    ASSERT_NE(spec, nullptr) << type;
    EXPECT_EQ(spec->grad(), nullptr) << type;
  }
  for (const char* type : {"reduce_sum", "reduce_mean", "reduce_max", "mean",
                           "softmax_with_cross_entropy"}) {
    const OpSpec* spec = OpRegistry::Global().Find(type);
    ASSERT_NE(spec, nullptr) << type;
    EXPECT_NE(spec->grad(), nullptr) << type;
  }
}

// Axes fed as an integer tensor go to the gradient ops too (which would
// disagree reading the attribute), empty ones with noop_with_empty_axes
// included.
TEST(ReductionGradTest, NumericCheckWithAxesInput) {
  struct Case {
    std::string type;
    std::string attrs;
    Tensor axes;
  };
  const std::vector<Case> cases = {
      {"reduce_sum", "", MakeTensor<int64_t>({1}, {1})},
      {"reduce_sum", "attrs { name: \"keep_dim\" b: true }",
       MakeTensor<int32_t>({2}, {-1, 0})},
      {"reduce_sum", "attrs { name: \"noop_with_empty_axes\" b: true }",
       MakeTensor<int64_t>({0}, {})},
      {"reduce_mean", "", MakeTensor<int64_t>({1}, {2})},
      {"reduce_max", "", MakeTensor<int64_t>({2}, {0, 2})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type + " " + c.attrs + " " + c.axes.DebugString());
    const std::string op = absl::StrCat(
        "type: \"", c.type,
        "\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: \"Axes\" vars: "
        "\"a\" } outputs { slot: \"Out\" vars: \"out\" } ",
        c.attrs);
    const absl::Status status =
        CheckGradient(op, {{"x", Distinct({2, 3, 4}, 11)}, {"a", c.axes}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

}  // namespace
}  // namespace scopeflow
