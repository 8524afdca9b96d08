// recurrent_grad: back-propagation through time against central
// differences, and against a gradient worked by hand.
#include <cmath>
#include <string>
#include <vector>

#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "framework/step_scopes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/control/recurrent/rnn_test_net.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

constexpr char kStepScopes[] =
    R"pb(outputs { slot: "StepScopes" vars: "steps" })pb";

std::vector<Feed> Feeds() {
  return {
      {"x", MakeTensor<double>({3, 1, 1}, {1, -0.5, 2})},
      {"h0", MakeTensor<double>({1, 2}, {0.3, -0.6})},
      {"W", MakeTensor<double>({1, 2}, {0.5, -0.3})},
      {"U", MakeTensor<double>({2, 2}, {0.7, 0.1, -0.4, 0.9})},
      {"b", MakeTensor<double>({2}, {0.1, -0.2})},
  };
}

TEST(RecurrentGradTest, GradientsOfSequenceStatesAndParamsMatchNumeric) {
  // Both the stacked states and the final state carry gradients: the
  // gradient of h at the last step is the sum of the two.
  const absl::Status status = CheckNetGradient(RnnNet("3, 1, 1", kStepScopes),
                                               Feeds(), {"hs", "h_last"});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(RecurrentGradTest, GradientsThroughTheFinalStateAloneMatchNumeric) {
  const absl::Status status =
      CheckNetGradient(RnnNet("3, 1, 1", kStepScopes), Feeds(), {"h_last"});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(RecurrentGradTest, ReverseGradientsMatchNumeric) {
  const absl::Status status =
      CheckNetGradient(RnnNet("3, 1, 1", kStepScopes,
                              R"pb(attrs { name: "reverse" b: true })pb"),
                       Feeds(), {"hs", "h_last"});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(RecurrentGradTest, UnknownLengthAtPrepareMatchesNumeric) {
  const absl::Status status =
      CheckNetGradient(RnnNet("-1, 1, 1", kStepScopes), Feeds(), {"hs"});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(RecurrentGradTest, OneStepGradientWorkedByHand) {
  // T = 1, h0 = 0: h = tanh(x W + b); d sum(h) / dW = x (1 - h^2),
  // d / db = 1 - h^2, d / dh0 = U (1 - h^2).
  NetDef net = RnnNet("1, 1, 1", kStepScopes);
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendGradients(net, {"hs"}, {}, {"W", "b", "h0", "x"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  std::vector<Feed> feeds = Feeds();
  feeds[0].tensor = MakeTensor<double>({1, 1, 1}, {2});
  feeds[1].tensor = MakeTensor<double>({1, 2}, {0, 0});
  Scope scope;
  absl::StatusOr<std::vector<Tensor>> out = executor.Run(
      *prepared, scope, feeds,
      {(*grads)[0].grad, (*grads)[1].grad, (*grads)[2].grad, (*grads)[3].grad});
  ASSERT_TRUE(out.ok()) << out.status();
  const double d0 = 1 - std::pow(std::tanh(2 * 0.5 + 0.1), 2);
  const double d1 = 1 - std::pow(std::tanh(2 * -0.3 - 0.2), 2);
  EXPECT_THAT(Values<double>((*out)[0]),
              ElementsAre(testing::DoubleNear(2 * d0, 1e-12),
                          testing::DoubleNear(2 * d1, 1e-12)));
  EXPECT_THAT(Values<double>((*out)[1]),
              ElementsAre(testing::DoubleNear(d0, 1e-12),
                          testing::DoubleNear(d1, 1e-12)));
  // h0 [1, 2]: row i of U dotted with (d0, d1).
  EXPECT_THAT(Values<double>((*out)[2]),
              ElementsAre(testing::DoubleNear(0.7 * d0 + 0.1 * d1, 1e-12),
                          testing::DoubleNear(-0.4 * d0 + 0.9 * d1, 1e-12)));
  EXPECT_THAT(Values<double>((*out)[3]),
              ElementsAre(testing::DoubleNear(0.5 * d0 - 0.3 * d1, 1e-12)));
}

TEST(RecurrentGradTest, TheGradientDropsTheStepScopes) {
  NetDef net = RnnNet("3, 1, 1", kStepScopes);
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendGradients(net, {"hs"}, {}, {"W"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  ASSERT_TRUE(
      executor.RunInScope(*prepared, scope, Feeds(), {(*grads)[0].grad}).ok());
  Variable* steps = scope.FindLocalVar("steps");
  ASSERT_NE(steps, nullptr);
  EXPECT_EQ((*steps->Get<StepScopes>())->size(), 0);
  EXPECT_EQ(scope.num_kids(), 0);
}

}  // namespace
}  // namespace scopeflow
