// recurrent: forward values against hand-computed ones, reverse, step
// scopes kept only when training, concurrent runs, and the errors.
#include <string>
#include <thread>
#include <vector>

#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/op_test_util.h"
#include "framework/step_scopes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/control/recurrent/rnn_test_net.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::vector<Feed> RnnFeeds(const std::vector<double>& x) {
  return {
      {"x", MakeTensor<double>({static_cast<int64_t>(x.size()), 1, 1}, x)},
      {"h0", MakeTensor<double>({1, 2}, {0, 0})},
      {"W", MakeTensor<double>({1, 2}, {0.5, -0.3})},
      {"U", MakeTensor<double>({2, 2}, {0.2, 0.1, -0.4, 0.3})},
      {"b", MakeTensor<double>({2}, {0.1, -0.2})},
  };
}

absl::StatusOr<std::vector<Tensor>> RunNet(
    const NetDef& net, const std::vector<Feed>& feeds,
    const std::vector<std::string>& out) {
  Executor executor;
  SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                      executor.Prepare(net, 0, CPUPlace()));
  Scope scope;
  return executor.Run(prepared, scope, feeds, out);
}

// h_t = tanh(x_t W + h_{t-1} U + b) with x = (1, -0.5, 2), worked by hand:
// h_0 = tanh(0.6, -0.5); h_1 = tanh(-0.25 + h_0 U + b, ...); ...
constexpr double kForward[3][2] = {{0.537049566998, -0.462117157260},
                                   {0.141304864753, -0.134117256746},
                                   {0.828052260708, -0.678378862116}};
// The same steps from t = 2 down to 0, h_{t+1} feeding step t.
constexpr double kReverse[3][2] = {{0.617412744055, -0.480301673418},
                                   {0.268934144237, -0.167565843640},
                                   {0.800499021761, -0.664036770268}};

std::vector<double> Flat(const double (&rows)[3][2]) {
  return {rows[0][0], rows[0][1], rows[1][0],
          rows[1][1], rows[2][0], rows[2][1]};
}

TEST(RecurrentTest, StacksTheStatesOfATanhRnn) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(RnnNet(), RnnFeeds({1, -0.5, 2}), {"hs", "h_last"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), Dims({3, 1, 2}));
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(1e-11), Flat(kForward)));
  EXPECT_THAT(Values<double>((*out)[1]),
              ElementsAre(DoubleNear(kForward[2][0], 1e-11),
                          DoubleNear(kForward[2][1], 1e-11)));
}

TEST(RecurrentTest, ReverseRunsFromTheLastStepAndKeepsTimeOrder) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(RnnNet("3, 1, 1", "", R"pb(attrs { name: "reverse" b: true })pb"),
             RnnFeeds({1, -0.5, 2}), {"hs", "h_last"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(1e-11), Flat(kReverse)));
  // The last step run is t = 0.
  EXPECT_THAT(Values<double>((*out)[1]),
              ElementsAre(DoubleNear(kReverse[0][0], 1e-11),
                          DoubleNear(kReverse[0][1], 1e-11)));
}

TEST(RecurrentTest, PrepareInfersOutFromTheStateWhenTIsKnownOrNot) {
  for (const char* shape : {"3, 1, 1", "-1, 1, 1"}) {
    absl::StatusOr<PreparedNet> prepared =
        Executor().Prepare(RnnNet(shape), 0, CPUPlace());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    const VarInfo& hs = prepared->var_infos()[prepared->VarIndex("hs")];
    EXPECT_EQ(hs.dtype, kFloat64);
    EXPECT_EQ(hs.dims, Dims({shape[0] == '3' ? 3 : -1, 1, 2}));
    const VarInfo& last = prepared->var_infos()[prepared->VarIndex("h_last")];
    EXPECT_EQ(last.dims, Dims({1, 2}));
  }
  // With T unknown at Prepare, a run of any length works.
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(RnnNet("-1, 1, 1"), RnnFeeds({1, -0.5}), {"hs"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), Dims({2, 1, 2}));
  EXPECT_NEAR(Values<double>((*out)[0])[3], kForward[1][1], 1e-11);
}

// Runs block 0 with its temporaries in `scope`, so that what the recurrent
// op leaves in it (its run scope) can be looked at afterwards.
absl::Status RunInScope(const NetDef& net, Scope& scope) {
  Executor executor;
  SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                      executor.Prepare(net, 0, CPUPlace()));
  return executor
      .RunInScope(prepared, scope, RnnFeeds({1, -0.5, 2, 0.3, -1}), {"hs"})
      .status();
}

TEST(RecurrentTest, InferenceKeepsNoStepScopes) {
  // Without StepScopes, each step runs in a pooled child scope: one, reused,
  // however many steps there are.
  Scope scope;
  ASSERT_TRUE(RunInScope(RnnNet("-1, 1, 1"), scope).ok());
  EXPECT_LE(scope.num_kids(), 1);
  for (const std::string& name : scope.LocalVarNames()) {
    EXPECT_FALSE(scope.FindLocalVar(name)->IsType<StepScopes>()) << name;
  }
}

TEST(RecurrentTest, TrainingKeepsOneScopeAStepWithItsValues) {
  Scope scope;
  ASSERT_TRUE(RunInScope(RnnNet("-1, 1, 1", R"pb(outputs {
                                                   slot: "StepScopes"
                                                   vars: "steps"
                                                 })pb"),
                         scope)
                  .ok());
  Variable* var = scope.FindLocalVar("steps");
  ASSERT_NE(var, nullptr);
  const StepScopes& steps = **var->Get<StepScopes>();
  ASSERT_EQ(steps.size(), 5);
  EXPECT_EQ(scope.num_kids(), 5);
  // Step 1 holds its own x_t (-0.5) and the h_prev step 0 computed.
  const Tensor& x_t = **steps.at(1).FindLocalVar("x_t")->Get<Tensor>();
  EXPECT_THAT(Values<double>(x_t), ElementsAre(-0.5));
  const Tensor& h_prev = **steps.at(1).FindLocalVar("h_prev")->Get<Tensor>();
  EXPECT_THAT(Values<double>(h_prev),
              ElementsAre(DoubleNear(kForward[0][0], 1e-11),
                          DoubleNear(kForward[0][1], 1e-11)));
}

TEST(RecurrentTest, ConcurrentRunsOfOnePreparedNetAgree) {
  // Forward and backward, the step scopes of each run in its own run scope.
  NetDef net =
      RnnNet("-1, 1, 1", R"pb(outputs { slot: "StepScopes" vars: "steps" })pb");
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendGradients(net, {"hs", "h_last"}, {}, {"x", "h0", "W", "U", "b"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  std::vector<std::string> fetches = {"hs", "h_last"};
  for (const VarGrad& grad : *grads) fetches.push_back(grad.grad);
  Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  const std::vector<std::vector<double>> inputs = {
      {1, -0.5, 2}, {0.3, 0.7}, {-1, 0.2, 0.4, 1.5}, {2}};
  std::vector<std::vector<std::vector<double>>> alone(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::StatusOr<std::vector<Tensor>> out =
        executor.Run(*prepared, scope, RnnFeeds(inputs[i]), fetches);
    ASSERT_TRUE(out.ok()) << out.status();
    for (const Tensor& t : *out) alone[i].push_back(Values<double>(t));
  }
  std::vector<std::vector<std::vector<double>>> together(inputs.size());
  std::vector<absl::Status> statuses(inputs.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int repeat = 0; repeat < 20; ++repeat) {
        absl::StatusOr<std::vector<Tensor>> out =
            executor.Run(*prepared, scope, RnnFeeds(inputs[i]), fetches);
        if (!out.ok()) {
          statuses[i] = out.status();
          return;
        }
        together[i].clear();
        for (const Tensor& t : *out) together[i].push_back(Values<double>(t));
        if (together[i] != alone[i]) return;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_TRUE(statuses[i].ok()) << statuses[i];
    EXPECT_EQ(together[i], alone[i]) << "input " << i;
  }
}

absl::Status PrepareStatus(const NetDef& net) {
  return Executor().Prepare(net, 0, CPUPlace()).status();
}

TEST(RecurrentTest, AttributeListsMustMatchTheSlots) {
  NetDef net = RnnNet();
  OpDef& op = *net.mutable_blocks(0)->mutable_ops(0);
  op.mutable_attrs(1)->mutable_strings()->add_values("y_t");
  EXPECT_THAT(PrepareStatus(net).message(),
              HasSubstr("op 0 (recurrent): attribute \"step_inputs\" names 2 "
                        "variables for 1 inputs \"X\""));
  net = RnnNet();
  net.mutable_blocks(0)
      ->mutable_ops(0)
      ->mutable_attrs(3)
      ->mutable_strings()
      ->add_values("c");
  EXPECT_THAT(PrepareStatus(net).message(),
              HasSubstr("attribute \"ex_states\" names 1 variables but "
                        "\"states\" 2"));
  net = RnnNet();
  net.mutable_blocks(0)
      ->mutable_ops(0)
      ->mutable_attrs(4)
      ->mutable_strings()
      ->add_values("h");
  EXPECT_THAT(PrepareStatus(net).message(),
              HasSubstr("attribute \"step_outputs\" names 2 variables for 1 "
                        "outputs \"Out\""));
}

TEST(RecurrentTest, AStepInputMustBeDeclaredInTheStepBlock) {
  NetDef net = RnnNet();
  net.mutable_blocks(1)->mutable_vars()->DeleteSubrange(0, 1);
  EXPECT_THAT(PrepareStatus(net).message(),
              HasSubstr("op 0 (recurrent): block 1: step_inputs \"x_t\" is "
                        "not declared in the step block's vars"));
}

TEST(RecurrentTest, AStateMustBeAVariableOfTheStepBlock) {
  NetDef net = RnnNet();
  net.mutable_blocks(0)
      ->mutable_ops(0)
      ->mutable_attrs(3)
      ->mutable_strings()
      ->set_values(0, "nowhere");
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(net, RnnFeeds({1, -0.5, 2}), {"hs"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (recurrent): attribute \"states\": \"nowhere\" "
                        "is not a variable of the step block"));
}

// x and a second sequence z, read by the step as z_t.
NetDef TwoSequences(const std::string& x_shape,
                    const std::vector<int64_t>& z_shape) {
  NetDef net = RnnNet(x_shape);
  BlockDef& top = *net.mutable_blocks(0);
  VarDef& z = *top.add_vars();
  z.set_name("z");
  z.set_dtype(DATA_TYPE_FLOAT64);
  for (int64_t d : z_shape) z.add_shape(d);
  OpDef& op = *top.mutable_ops(0);
  op.mutable_inputs(0)->add_vars("z");
  op.mutable_attrs(1)->mutable_strings()->add_values("z_t");
  VarDef& z_t = *net.mutable_blocks(1)->add_vars();
  z_t.set_name("z_t");
  z_t.set_dtype(DATA_TYPE_FLOAT64);
  z_t.add_shape(1);
  z_t.add_shape(1);
  return net;
}

TEST(RecurrentTest, SequenceInputsMustHaveOneLength) {
  EXPECT_THAT(PrepareStatus(TwoSequences("3, 1, 1", {2, 1, 1})).message(),
              HasSubstr("op 0 (recurrent): sequence inputs differ in length: "
                        "\"x\" has 3 steps, \"z\" has 2"));
  // Known only when it runs.
  std::vector<Feed> feeds = RnnFeeds({1, -0.5, 2});
  feeds.push_back({"z", MakeTensor<double>({2, 1, 1}, {4, 5})});
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(TwoSequences("-1, 1, 1", {-1, 1, 1}), feeds, {"hs"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (recurrent): sequence inputs differ in length: "
                        "\"x\" has 3 steps, \"z\" has 2"));
}

TEST(RecurrentTest, AnEmptySequenceIsAnError) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(RnnNet("-1, 1, 1"), RnnFeeds({}), {"hs"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"X\" (variable \"x\") holds no step"));
}

TEST(RecurrentTest, DifferentiatingWithoutStepScopesIsAnError) {
  NetDef net = RnnNet();
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendGradients(net, {"hs"}, {}, {"W"});
  EXPECT_THAT(grads.status().message(),
              HasSubstr("recurrent: differentiating it needs its output "
                        "\"StepScopes\" bound"));
}

}  // namespace
}  // namespace scopeflow
