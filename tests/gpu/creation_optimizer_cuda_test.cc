// CUDA kernels of the creation ops, the initializers, sum and the
// optimizer ops against their CPU kernels.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/cuda_test_util.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/place.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

// Past 65535 blocks of 256 threads: the grid-stride loops wrap.
constexpr int64_t kLarge = 70000 * 256 + 3;

std::string ShapeAttr(const Dims& dims) {
  return absl::StrCat("attrs { name: \"shape\" i64s { values: [",
                      absl::StrJoin(dims, ", "), "] } } ");
}

std::string IntAttr(const std::string& name, int64_t v) {
  return absl::StrCat("attrs { name: \"", name, "\" i: ", v, " } ");
}

std::string Int64Attr(const std::string& name, int64_t v) {
  return absl::StrCat("attrs { name: \"", name, "\" i64: ", v, " } ");
}

std::string FloatAttr(const std::string& name, float v) {
  return absl::StrCat("attrs { name: \"", name, "\" f: ", v, " } ");
}

std::string StringAttr(const std::string& name, const std::string& v) {
  return absl::StrCat("attrs { name: \"", name, "\" s: \"", v, "\" } ");
}

std::string BoolAttr(const std::string& name, bool v) {
  return absl::StrCat("attrs { name: \"", name, "\" b: ", v ? "true" : "false",
                      " } ");
}

// `inputs` and `outputs` as "Slot=var" pairs (one variable each).
std::string Op(const std::string& type, const std::vector<std::string>& ins,
               const std::vector<std::string>& outs,
               const std::string& attrs = "") {
  std::string text = absl::StrCat("type: \"", type, "\" ");
  for (const std::string& slot : ins) {
    const size_t eq = slot.find('=');
    absl::StrAppend(&text, "inputs { slot: \"", slot.substr(0, eq),
                    "\" vars: \"", slot.substr(eq + 1), "\" } ");
  }
  for (const std::string& slot : outs) {
    const size_t eq = slot.find('=');
    absl::StrAppend(&text, "outputs { slot: \"", slot.substr(0, eq),
                    "\" vars: \"", slot.substr(eq + 1), "\" } ");
  }
  return text + attrs;
}

const std::vector<Dims> kShapes = {{}, {0}, {1}, {255}, {257, 3}, {kLarge}};

TEST(CreationCudaTest, FillConstantMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64, kBool}) {
    for (const Dims& dims : kShapes) {
      for (float value : {0.0f, -2.75f, 3.5f}) {
        EXPECT_TRUE(
            MatchesOnCuda(Op("fill_constant", {}, {"Out=y"},
                             ShapeAttr(dims) + FloatAttr("value", value) +
                                 IntAttr("dtype", static_cast<int>(dtype))),
                          {}, {"y"}))
            << DataTypeName(dtype) << " " << DimsToString(dims);
      }
    }
  }
}

TEST(CreationCudaTest, FillAnyLikeMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64, kBool}) {
    for (const Dims& dims : kShapes) {
      EXPECT_TRUE(MatchesOnCuda(
          Op("fill_any_like", {"X=x"}, {"Out=y"}, FloatAttr("value", 1.5f)),
          {{"x", RandomTensor(dtype, dims, 1)}}, {"y"}));
    }
  }
}

TEST(CreationCudaTest, AssignMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64, kBool}) {
    for (const Dims& dims : kShapes) {
      EXPECT_TRUE(MatchesOnCuda(Op("assign", {"X=x"}, {"Out=y"}),
                                {{"x", RandomTensor(dtype, dims, 2)}}, {"y"}));
    }
  }
}

// Seeded draws equal the CPU's exactly.
TEST(CreationCudaTest, RandomOpsEqualCpu) {
  SF_REQUIRE_CUDA();
  for (const Dims& dims : {Dims{0}, Dims{1}, Dims{1000, 3}, Dims{kLarge}}) {
    for (int seed : {0, 7}) {
      const std::string common = ShapeAttr(dims) + IntAttr("seed", seed) +
                                 IntAttr("dtype", static_cast<int>(kFloat32));
      EXPECT_TRUE(
          MatchesOnCuda(Op("gaussian_random", {}, {"Out=y"},
                           common + FloatAttr("mean", 1) + FloatAttr("std", 2)),
                        {}, {"y"}, 0, 0));
      EXPECT_TRUE(
          MatchesOnCuda(Op("uniform_random", {}, {"Out=y"},
                           common + FloatAttr("min", -3) + FloatAttr("max", 5)),
                        {}, {"y"}, 0, 0));
    }
  }
}

TEST(CreationCudaTest, InitializersEqualCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const Dims& dims : {Dims{0, 4}, Dims{30, 20}, Dims{16, 8, 3, 3}}) {
      const std::string common = ShapeAttr(dims) + IntAttr("seed", 3) +
                                 IntAttr("dtype", static_cast<int>(dtype));
      EXPECT_TRUE(MatchesOnCuda(
          Op("truncated_gaussian_random", {}, {"Out=y"},
             common + FloatAttr("mean", 0.5f) + FloatAttr("std", 0.1f)),
          {}, {"y"}, 0, 0));
      EXPECT_TRUE(MatchesOnCuda(Op("xavier_uniform", {}, {"Out=y"}, common), {},
                                {"y"}, 0, 0));
      EXPECT_TRUE(MatchesOnCuda(Op("xavier_normal", {}, {"Out=y"}, common), {},
                                {"y"}, 0, 0));
      EXPECT_TRUE(MatchesOnCuda(Op("kaiming_uniform", {}, {"Out=y"},
                                   common + StringAttr("mode", "fan_out")),
                                {}, {"y"}, 0, 0));
      EXPECT_TRUE(MatchesOnCuda(Op("kaiming_normal", {}, {"Out=y"},
                                   common + FloatAttr("negative_slope", 0.2f)),
                                {}, {"y"}, 0, 0));
    }
  }
}

TEST(AccumulateCudaTest, SumMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64}) {
    // One launch adds up to 8 inputs: 9 and 17 take more.
    for (int count : {1, 2, 3, 9, 17}) {
      for (const Dims& dims : {Dims{}, Dims{0}, Dims{255}, Dims{3, 7, 5}}) {
        std::vector<Feed> feeds;
        std::vector<std::string> names;
        for (int i = 0; i < count; ++i) {
          names.push_back(absl::StrCat("x", i));
          feeds.push_back(
              {names.back(), RandomTensor(dtype, dims, i, -50, 50)});
        }
        EXPECT_TRUE(MatchesOnCuda(
            absl::StrCat("type: \"sum\" inputs { slot: \"X\" vars: [\"",
                         absl::StrJoin(names, "\", \""),
                         "\"] } outputs { slot: \"Out\" vars: \"y\" }"),
            feeds, {"y"}))
            << DataTypeName(dtype) << " " << count;
      }
    }
  }
  EXPECT_TRUE(MatchesOnCuda(
      "type: \"sum\" inputs { slot: \"X\" vars: [\"a\", \"b\"] } outputs { "
      "slot: \"Out\" vars: \"y\" }",
      {{"a", RandomTensor(kFloat32, {kLarge}, 1)},
       {"b", RandomTensor(kFloat32, {kLarge}, 2)}},
      {"y"}));
}

// The parameter (and state) updated in place, as training nets do, and
// written to new variables.
struct Update {
  std::string param_out, velocity_out, m1_out, m2_out, b1_out, b2_out;
};
const Update kInPlace = {"p", "v", "m1", "m2", "b1", "b2"};
const Update kApart = {"p2", "v2", "m1b", "m2b", "b1b", "b2b"};

TEST(OptimizerCudaTest, SgdMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (DataType lr_dtype : {kFloat32, kFloat64}) {
      for (const Update& u : {kInPlace, kApart}) {
        for (const Dims& dims : {Dims{0}, Dims{257, 3}, Dims{kLarge}}) {
          EXPECT_TRUE(
              MatchesOnCuda(Op("sgd", {"Param=p", "Grad=g", "LearningRate=lr"},
                               {"ParamOut=" + u.param_out}),
                            {{"p", RandomTensor(dtype, dims, 1)},
                             {"g", RandomTensor(dtype, dims, 2)},
                             {"lr", RandomTensor(lr_dtype, {1}, 3, 0.01, 0.5)}},
                            {u.param_out}));
        }
      }
    }
  }
}

TEST(OptimizerCudaTest, MomentumMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (bool nesterov : {false, true}) {
      for (const Update& u : {kInPlace, kApart}) {
        for (const Dims& dims : {Dims{1}, Dims{257, 3}, Dims{kLarge}}) {
          EXPECT_TRUE(MatchesOnCuda(
              Op("momentum",
                 {"Param=p", "Grad=g", "Velocity=v", "LearningRate=lr"},
                 {"ParamOut=" + u.param_out, "VelocityOut=" + u.velocity_out},
                 FloatAttr("mu", 0.8f) + BoolAttr("use_nesterov", nesterov)),
              {{"p", RandomTensor(dtype, dims, 1)},
               {"g", RandomTensor(dtype, dims, 2)},
               {"v", RandomTensor(dtype, dims, 3)},
               {"lr", RandomTensor(kFloat32, {1}, 4, 0.01, 0.5)}},
              {u.param_out, u.velocity_out}));
        }
      }
    }
  }
}

TEST(OptimizerCudaTest, AdamMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (float weight_decay : {0.0f, 0.01f}) {
      for (const Update& u : {kInPlace, kApart}) {
        for (const Dims& dims : {Dims{0}, Dims{257, 3}, Dims{kLarge}}) {
          EXPECT_TRUE(MatchesOnCuda(
              Op("adam",
                 {"Param=p", "Grad=g", "LearningRate=lr", "Moment1=m1",
                  "Moment2=m2", "Beta1Pow=b1", "Beta2Pow=b2"},
                 {"ParamOut=" + u.param_out, "Moment1Out=" + u.m1_out,
                  "Moment2Out=" + u.m2_out, "Beta1PowOut=" + u.b1_out,
                  "Beta2PowOut=" + u.b2_out},
                 FloatAttr("beta1", 0.85f) + FloatAttr("beta2", 0.99f) +
                     FloatAttr("weight_decay", weight_decay)),
              {{"p", RandomTensor(dtype, dims, 1)},
               {"g", RandomTensor(dtype, dims, 2)},
               {"lr", RandomTensor(kFloat32, {1}, 3, 0.001, 0.01)},
               {"m1", RandomTensor(dtype, dims, 4)},
               {"m2", RandomTensor(dtype, dims, 5, 0, 1)},
               // A float64 power with a float32 one.
               {"b1", RandomTensor(kFloat64, {1}, 6, 0.1, 0.9)},
               {"b2", RandomTensor(kFloat32, {1}, 7, 0.1, 0.9)}},
              {u.param_out, u.m1_out, u.m2_out, u.b1_out, u.b2_out}));
        }
      }
    }
  }
}

TEST(OptimizerCudaTest, IncrementMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64}) {
    for (const char* out : {"x", "y"}) {
      EXPECT_TRUE(MatchesOnCuda(
          Op("increment", {"X=x"}, {absl::StrCat("Out=", out)},
             FloatAttr("step", 2)),
          {{"x", RandomTensor(dtype, {1}, 1, -100, 100)}}, {out}));
    }
  }
}

TEST(OptimizerCudaTest, LrScheduleMatchesCpu) {
  SF_REQUIRE_CUDA();
  const std::vector<std::string> schedules = {
      StringAttr("policy", "constant"),
      StringAttr("policy", "step") + Int64Attr("step_size", 30) +
          FloatAttr("gamma", 0.5f) + FloatAttr("min_lr", 0.001f),
      StringAttr("policy", "exponential") + FloatAttr("gamma", 0.97f),
      StringAttr("policy", "cosine") + Int64Attr("total_steps", 100) +
          FloatAttr("min_lr", 0.01f),
  };
  for (const std::string& schedule : schedules) {
    for (int64_t warmup : {0, 10}) {
      for (int64_t step : {0, 5, 9, 10, 77, 150}) {
        EXPECT_TRUE(
            MatchesOnCuda(Op("lr_schedule", {"Step=s"}, {"LearningRate=lr"},
                             schedule + FloatAttr("base_lr", 0.1f) +
                                 Int64Attr("warmup_steps", warmup)),
                          {{"s", MakeTensor<int64_t>({1}, {step})}}, {"lr"}))
            << schedule << " step " << step;
      }
    }
  }
}

TEST(OptimizerCudaTest, ClipByGlobalNormMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    // Clipped (norm far above 1), and not (norm below 1e9).
    for (float max_norm : {1.0f, 1e9f}) {
      for (bool in_place : {true, false}) {
        const std::string outs =
            in_place ? "\"a\", \"b\", \"c\"" : "\"a2\", \"b2\", \"c2\"";
        std::vector<std::string> fetches =
            in_place ? std::vector<std::string>{"a", "b", "c"}
                     : std::vector<std::string>{"a2", "b2", "c2"};
        fetches.push_back("n");
        EXPECT_TRUE(MatchesOnCuda(
            absl::StrCat(
                "type: \"clip_by_global_norm\" inputs { slot: \"X\" vars: "
                "[\"a\", \"b\", \"c\"] } outputs { slot: \"Out\" vars: [",
                outs, "] } outputs { slot: \"GlobalNorm\" vars: \"n\" } ",
                FloatAttr("max_norm", max_norm)),
            {{"a", RandomTensor(dtype, {kLarge}, 1)},
             {"b", RandomTensor(dtype, {0}, 2)},
             {"c", RandomTensor(dtype, {3, 5}, 3)}},
            fetches))
            << max_norm;
      }
    }
  }
}

// Values the CPU kernels reject fail the run on the device too, naming the
// op, the variable and the value (as optimizers_test and lr_schedule_test
// do on the CPU); the next run on the thread reports nothing stale.
TEST(OptimizerCudaTest, AdamPowerOutOfRangeFailsTheRun) {
  SF_REQUIRE_CUDA();
  const std::string op =
      Op("adam",
         {"Param=p", "Grad=g", "LearningRate=lr", "Moment1=m1", "Moment2=m2",
          "Beta1Pow=b1", "Beta2Pow=b2"},
         {"ParamOut=p", "Moment1Out=m1", "Moment2Out=m2", "Beta1PowOut=b1",
          "Beta2PowOut=b2"});
  auto feeds = [](const Tensor& b1, const Tensor& b2) {
    return std::vector<Feed>{{"p", RandomTensor(kFloat32, {257, 3}, 1)},
                             {"g", RandomTensor(kFloat32, {257, 3}, 2)},
                             {"lr", MakeTensor<float>({1}, {0.01f})},
                             {"m1", RandomTensor(kFloat32, {257, 3}, 3)},
                             {"m2", RandomTensor(kFloat32, {257, 3}, 4, 0, 1)},
                             {"b1", b1},
                             {"b2", b2}};
  };
  const std::vector<std::string> fetches = {"p", "m1", "m2", "b1", "b2"};
  absl::StatusOr<std::vector<Tensor>> out = RunOpOnPlace(
      CUDAPlace(0), op,
      feeds(MakeTensor<double>({1}, {1.0}), MakeTensor<float>({1}, {0.5f})),
      fetches);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (adam): input \"Beta1Pow\" (variable \"b1\") "
                        "holds a value out of range (expected beta^t in [0, "
                        "1)); the value rounded down to an int64 (NaN as its "
                        "maximum): 1"));
  out = RunOpOnPlace(
      CUDAPlace(0), op,
      feeds(MakeTensor<double>({1}, {0.5}), MakeTensor<float>({1}, {-0.25f})),
      fetches);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"Beta2Pow\" (variable \"b2\") holds a value "
                        "out of range (expected beta^t in [0, 1)); the value "
                        "rounded down to an int64 (NaN as its maximum): -1"));
  EXPECT_TRUE(MatchesOnCuda(
      op,
      feeds(MakeTensor<double>({1}, {0.5}), MakeTensor<float>({1}, {0.25f})),
      fetches));
}

TEST(OptimizerCudaTest, LrScheduleNegativeStepFailsTheRun) {
  SF_REQUIRE_CUDA();
  const std::string op = Op("lr_schedule", {"Step=s"}, {"LearningRate=lr"},
                            FloatAttr("base_lr", 0.1f));
  absl::StatusOr<std::vector<Tensor>> out = RunOpOnPlace(
      CUDAPlace(0), op, {{"s", MakeTensor<int64_t>({1}, {-3})}}, {"lr"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (lr_schedule): input \"Step\" (variable "
                        "\"s\") holds a negative step (expected a step count "
                        ">= 0): -3"));
  EXPECT_TRUE(
      MatchesOnCuda(op, {{"s", MakeTensor<int64_t>({1}, {4})}}, {"lr"}));
}

}  // namespace
}  // namespace scopeflow
