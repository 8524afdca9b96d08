#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Schedule(const std::string& attrs) {
  return "type: \"lr_schedule\" inputs { slot: \"Step\" vars: \"step\" } "
         "outputs { slot: \"LearningRate\" vars: \"lr\" } " +
         attrs;
}

// The learning rate lr_schedule with `attrs` gives at `step`; NaN on error.
float RateAt(const std::string& attrs, int64_t step) {
  auto out = RunOp(Schedule(attrs),
                   {{"step", MakeTensor<int64_t>({1}, {step})}}, {"lr"});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return NAN;
  EXPECT_EQ((*out)[0].dtype(), kFloat32);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1));
  return Values<float>((*out)[0])[0];
}

TEST(LrScheduleTest, Constant) {
  for (int64_t step : {0, 5, 100000}) {
    EXPECT_FLOAT_EQ(RateAt("attrs { name: \"base_lr\" f: 0.1 }", step), 0.1f);
  }
  // The default policy.
  EXPECT_FLOAT_EQ(RateAt("attrs { name: \"base_lr\" f: 0.1 } attrs { name: "
                         "\"policy\" s: \"constant\" }",
                         7),
                  0.1f);
}

TEST(LrScheduleTest, StepHalvesEveryThreeStepsDownToMinLr) {
  const std::string attrs =
      "attrs { name: \"base_lr\" f: 1 } attrs { name: \"policy\" s: \"step\" "
      "} attrs { name: \"step_size\" i64: 3 } attrs { name: \"gamma\" f: 0.5 "
      "}";
  EXPECT_FLOAT_EQ(RateAt(attrs, 0), 1);
  EXPECT_FLOAT_EQ(RateAt(attrs, 2), 1);
  EXPECT_FLOAT_EQ(RateAt(attrs, 3), 0.5f);
  EXPECT_FLOAT_EQ(RateAt(attrs, 5), 0.5f);
  EXPECT_FLOAT_EQ(RateAt(attrs, 6), 0.25f);
  EXPECT_FLOAT_EQ(RateAt(attrs, 9), 0.125f);
  const std::string floored = attrs + " attrs { name: \"min_lr\" f: 0.2 }";
  EXPECT_FLOAT_EQ(RateAt(floored, 6), 0.25f);
  EXPECT_FLOAT_EQ(RateAt(floored, 9), 0.2f);
  EXPECT_FLOAT_EQ(RateAt(floored, 300), 0.2f);
}

TEST(LrScheduleTest, Exponential) {
  const std::string attrs =
      "attrs { name: \"base_lr\" f: 2 } attrs { name: \"policy\" s: "
      "\"exponential\" } attrs { name: \"gamma\" f: 0.9 }";
  EXPECT_FLOAT_EQ(RateAt(attrs, 0), 2);
  EXPECT_FLOAT_EQ(RateAt(attrs, 1), 1.8f);
  EXPECT_FLOAT_EQ(RateAt(attrs, 10), 2 * 0.3486784401f);
  EXPECT_FLOAT_EQ(RateAt(attrs + " attrs { name: \"min_lr\" f: 0.5 }", 100),
                  0.5f);
}

TEST(LrScheduleTest, CosineDecaysToMinLrOverTotalSteps) {
  const std::string attrs =
      "attrs { name: \"base_lr\" f: 1 } attrs { name: \"policy\" s: "
      "\"cosine\" } attrs { name: \"total_steps\" i64: 10 } attrs { name: "
      "\"min_lr\" f: 0.1 }";
  EXPECT_FLOAT_EQ(RateAt(attrs, 0), 1);
  // 0.1 + 0.9 (1 + cos(0.3 pi)) / 2.
  EXPECT_FLOAT_EQ(RateAt(attrs, 3), 0.81450336f);
  EXPECT_FLOAT_EQ(RateAt(attrs, 5), 0.55f);
  EXPECT_FLOAT_EQ(RateAt(attrs, 10), 0.1f);
  EXPECT_FLOAT_EQ(RateAt(attrs, 25), 0.1f);
}

// Steps 0..3 rise as (step + 1) / 4; the policy then starts at step 4 as
// at its own step 0.
TEST(LrScheduleTest, LinearWarmupThenThePolicy) {
  const std::string cosine =
      "attrs { name: \"base_lr\" f: 1 } attrs { name: \"policy\" s: "
      "\"cosine\" } attrs { name: \"total_steps\" i64: 10 } attrs { name: "
      "\"min_lr\" f: 0.1 } attrs { name: \"warmup_steps\" i64: 4 }";
  EXPECT_FLOAT_EQ(RateAt(cosine, 0), 0.25f);
  EXPECT_FLOAT_EQ(RateAt(cosine, 1), 0.5f);
  EXPECT_FLOAT_EQ(RateAt(cosine, 3), 1);
  EXPECT_FLOAT_EQ(RateAt(cosine, 4), 1);
  EXPECT_FLOAT_EQ(RateAt(cosine, 9), 0.55f);
  EXPECT_FLOAT_EQ(RateAt(cosine, 14), 0.1f);

  const std::string step =
      "attrs { name: \"base_lr\" f: 1 } attrs { name: \"policy\" s: \"step\" "
      "} attrs { name: \"step_size\" i64: 3 } attrs { name: \"gamma\" f: 0.5 "
      "} attrs { name: \"warmup_steps\" i64: 2 }";
  EXPECT_FLOAT_EQ(RateAt(step, 0), 0.5f);
  EXPECT_FLOAT_EQ(RateAt(step, 2), 1);
  EXPECT_FLOAT_EQ(RateAt(step, 4), 1);
  EXPECT_FLOAT_EQ(RateAt(step, 5), 0.5f);

  const std::string constant =
      "attrs { name: \"base_lr\" f: 0.3 } attrs { name: \"warmup_steps\" i64: "
      "3 }";
  EXPECT_FLOAT_EQ(RateAt(constant, 0), 0.1f);
  EXPECT_FLOAT_EQ(RateAt(constant, 1), 0.2f);
  EXPECT_FLOAT_EQ(RateAt(constant, 2), 0.3f);
  EXPECT_FLOAT_EQ(RateAt(constant, 50), 0.3f);
}

TEST(LrScheduleTest, ErrorsNameTheOpAndTheVariable) {
  const std::string base = "attrs { name: \"base_lr\" f: 0.1 }";
  const Feed step = {"step", MakeTensor<int64_t>({1}, {0})};
  EXPECT_THAT(
      PrepareOp(Schedule(base), {{"step", MakeTensor<int32_t>({1}, {0})}})
          .message(),
      HasSubstr("op 0 (lr_schedule): input \"Step\" (variable \"step\") has "
                "dtype int32: expected int64"));
  EXPECT_THAT(
      PrepareOp(Schedule(base), {{"step", MakeTensor<int64_t>({2}, {0, 1})}})
          .message(),
      HasSubstr("op 0 (lr_schedule): input \"Step\" (variable \"step\", shape "
                "[2]) must hold exactly one element"));
  EXPECT_THAT(PrepareOp(Schedule(base + " attrs { name: \"policy\" s: "
                                        "\"cosine\" }"),
                        {step})
                  .message(),
              HasSubstr("op 0 (lr_schedule): policy \"cosine\" needs "
                        "attribute \"total_steps\" > 0 (the steps to decay "
                        "over) for output \"LearningRate\" (variable \"lr\")"));
  EXPECT_THAT(
      PrepareOp(Schedule(base + " attrs { name: \"min_lr\" f: 0.5 }"), {step})
          .message(),
      HasSubstr("op 0 (lr_schedule): attribute \"min_lr\" (0.5) must not "
                "exceed \"base_lr\" (0.1) for output \"LearningRate\" "
                "(variable \"lr\")"));
  EXPECT_THAT(
      PrepareOp(Schedule(base + " attrs { name: \"policy\" s: \"linear\" }"),
                {step})
          .message(),
      HasSubstr("op 0 (lr_schedule): attribute \"policy\" must be one of "
                "constant, step, exponential, cosine, got \"linear\""));
  EXPECT_THAT(
      PrepareOp(Schedule(base + " attrs { name: \"step_size\" i64: 0 }"),
                {step})
          .message(),
      HasSubstr("op 0 (lr_schedule): attribute \"step_size\" must be "
                "positive"));
  EXPECT_THAT(PrepareOp(Schedule(""), {step}).message(),
              HasSubstr("op 0 (lr_schedule): missing required attribute "
                        "\"base_lr\""));
  EXPECT_THAT(
      RunOp(Schedule(base), {{"step", MakeTensor<int64_t>({1}, {-3})}}, {"lr"})
          .status()
          .message(),
      HasSubstr("op 0 (lr_schedule): input \"Step\" (variable "
                "\"step\") holds -3: expected a step count >= 0"));
}

std::string Increment(const std::string& out, const std::string& attrs = "") {
  return "type: \"increment\" inputs { slot: \"X\" vars: \"x\" } outputs { "
         "slot: \"Out\" vars: \"" +
         out + "\" } " + attrs;
}

TEST(IncrementTest, AddsStepToEachDtype) {
  auto i64 =
      RunOp(Increment("x"), {{"x", MakeTensor<int64_t>({1}, {41})}}, {"x"});
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_THAT(Values<int64_t>((*i64)[0]), ElementsAre(42));

  auto i32 = RunOp(Increment("y", "attrs { name: \"step\" f: -3 }"),
                   {{"x", MakeTensor<int32_t>({1}, {1})}}, {"x", "y"});
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(Values<int32_t>((*i32)[0]), ElementsAre(1));
  EXPECT_THAT(Values<int32_t>((*i32)[1]), ElementsAre(-2));

  auto f32 = RunOp(Increment("x", "attrs { name: \"step\" f: 0.25 }"),
                   {{"x", MakeTensor<float>({}, {1.5f})}}, {"x"});
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_THAT((*f32)[0].dims(), ElementsAre());
  EXPECT_THAT(Values<float>((*f32)[0]), ElementsAre(1.75f));

  auto f64 = RunOp(Increment("x", "attrs { name: \"step\" f: 0.5 }"),
                   {{"x", MakeTensor<double>({1, 1}, {2})}}, {"x"});
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_THAT(Values<double>((*f64)[0]), ElementsAre(2.5));
}

TEST(IncrementTest, ErrorsNameTheOpAndTheVariable) {
  EXPECT_THAT(
      PrepareOp(Increment("x"), {{"x", MakeTensor<int64_t>({2}, {0, 0})}})
          .message(),
      HasSubstr("op 0 (increment): input \"X\" (variable \"x\", shape [2]) "
                "must hold exactly one element"));
  EXPECT_THAT(
      PrepareOp(Increment("x"), {{"x", MakeTensor<bool>({1}, {true})}})
          .message(),
      HasSubstr("op 0 (increment): input \"X\" (variable \"x\") has dtype "
                "bool: expected int64, int32, float32 or float64"));
  EXPECT_THAT(
      PrepareOp(Increment("x", "attrs { name: \"step\" f: 0.5 }"),
                {{"x", MakeTensor<int64_t>({1}, {0})}})
          .message(),
      HasSubstr("op 0 (increment): attribute \"step\" = 0.5 is not a whole "
                "number, but input \"X\" (variable \"x\") is int64"));
}

// A training net's bookkeeping: the rate for the current step, then the
// counter advances; both persist in the scope from one run to the next.
TEST(LrScheduleTest, TrainingNetKeepsItsStepCounterInTheScope) {
  absl::StatusOr<NetDef> net = ParseNetText(
      "format_version: 1 name: \"train\" blocks { "
      "vars { name: \"step\" dtype: DATA_TYPE_INT64 persistable: true } "
      "vars { name: \"lr\" dtype: DATA_TYPE_FLOAT32 persistable: true } "
      "ops { type: \"lr_schedule\" inputs { slot: \"Step\" vars: \"step\" } "
      "outputs { slot: \"LearningRate\" vars: \"lr\" } "
      "attrs { name: \"base_lr\" f: 1 } "
      "attrs { name: \"policy\" s: \"exponential\" } "
      "attrs { name: \"gamma\" f: 0.5 } "
      "attrs { name: \"warmup_steps\" i64: 2 } } "
      "ops { type: \"increment\" inputs { slot: \"X\" vars: \"step\" } "
      "outputs { slot: \"Out\" vars: \"step\" } } }");
  ASSERT_TRUE(net.ok()) << net.status();
  Executor executor;
  auto prepared = executor.Prepare(*net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  *scope.Var("step")->GetMutable<Tensor>().value() =
      MakeTensor<int64_t>({1}, {0});
  const std::vector<float> expected = {0.5f, 1, 1, 0.5f, 0.25f};
  for (size_t run = 0; run < expected.size(); ++run) {
    auto out = executor.Run(*prepared, scope, {}, {"lr", "step"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(expected[run]))
        << "run " << run;
    EXPECT_THAT(Values<int64_t>((*out)[1]),
                ElementsAre(static_cast<int64_t>(run + 1)));
  }
  EXPECT_THAT(Values<int64_t>(**scope.FindVar("step")->Get<Tensor>()),
              ElementsAre(5));
  EXPECT_THAT(Values<float>(**scope.FindVar("lr")->Get<Tensor>()),
              ElementsAre(0.25f));
}

}  // namespace
}  // namespace scopeflow
