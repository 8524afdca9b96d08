// RunOptions::check_numerics: the run stops at the first op writing a NaN
// or an infinity and says where; off, the run goes through.
#include "framework/check_numerics.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "framework/cuda_test_util.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

// r = relu(x); l = log(r); e = exp(l): log(0) of a non-positive x is -inf.
constexpr char kNet[] = R"pb(
  format_version: 1
  name: "numerics"
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 2, 3 ]
    }
    vars {
      name: "r"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 2, 3 ]
    }
    vars {
      name: "l"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 2, 3 ]
    }
    vars {
      name: "e"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 2, 3 ]
    }
    ops {
      type: "relu"
      inputs { slot: "X" vars: "x" }
      outputs { slot: "Out" vars: "r" }
    }
    ops {
      type: "log"
      inputs { slot: "X" vars: "r" }
      outputs { slot: "Out" vars: "l" }
    }
    ops {
      type: "exp"
      inputs { slot: "X" vars: "l" }
      outputs { slot: "Out" vars: "e" }
    }
  })pb";

absl::StatusOr<std::vector<Tensor>> RunNet(const Place& place, bool check,
                                           const std::vector<float>& x) {
  SF_ASSIGN_OR_RETURN(NetDef net, ParseNetText(kNet));
  ExecutorOptions options = ExecutorOptions::AsWritten();
  options.run.check_numerics = check;
  const Executor executor(options);
  SF_ASSIGN_OR_RETURN(PreparedNet prepared, executor.Prepare(net, 0, place));
  Scope scope;
  return executor.Run(prepared, scope, {{"x", MakeTensor<float>({2, 3}, x)}},
                      {"e"}, nullptr);
}

TEST(CheckNumericsTest, FiniteRunPasses) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(CPUPlace(), true, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ(Values<float>((*out)[0])[5], 6);
}

TEST(CheckNumericsTest, StopsAtTheFirstOpWritingAnInfinity) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(CPUPlace(), true, {1, 2, 3, 4, -5, 6});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 1 (log) wrote -inf to output \"l\" (slot Out, "
                        "float32 [2, 3]) at element 4"));
}

TEST(CheckNumericsTest, OffByDefaultTheRunGoesThrough) {
  EXPECT_FALSE(RunOptions().check_numerics);
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(CPUPlace(), false, {1, 2, 3, 4, -5, 6});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0])[4], 0);  // exp(-inf)
}

TEST(CheckNumericsTest, FindsNaNAndInfinityInEachFloatType) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  absl::StatusOr<std::optional<NonFinite>> found =
      FindNonFinite(MakeTensor<float>({3}, {0, nan, 1}));
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->index, 1);
  EXPECT_TRUE(std::isnan((*found)->value));
  found = FindNonFinite(
      MakeTensor<double>({2}, {1, -std::numeric_limits<double>::infinity()}));
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->index, 1);
  EXPECT_EQ((*found)->value, -std::numeric_limits<double>::infinity());
  found = FindNonFinite(MakeTensor<float16>(
      {2}, {FloatToHalf(70000.0f), FloatToHalf(1.0f)}));  // overflows
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->index, 0);
  found = FindNonFinite(MakeTensor<float>({2}, {1, 2}));
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
  found = FindNonFinite(MakeTensor<int32_t>({2}, {1, 2}));
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

TEST(CheckNumericsTest, ChecksDeviceTensorsOnTheGpu) {
  SF_REQUIRE_CUDA();
  const Place gpu = CUDAPlace(0);
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(gpu, true, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(out.ok()) << out.status();
  out = RunNet(gpu, true, {1, -2, 3, 4, 5, 6});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 1 (log) wrote -inf to output \"l\""));
  EXPECT_THAT(out.status().message(), HasSubstr("at element 1"));
  // A device tensor holding a NaN, found through the copy to the host.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  absl::StatusOr<Tensor> on_gpu =
      MakeTensor<float>({4}, {1, 2, 3, nan}).CopyTo(gpu);
  ASSERT_TRUE(on_gpu.ok()) << on_gpu.status();
  absl::StatusOr<std::optional<NonFinite>> found = FindNonFinite(*on_gpu);
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  EXPECT_EQ((*found)->index, 3);
}

}  // namespace
}  // namespace scopeflow
