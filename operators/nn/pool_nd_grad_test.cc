// The gradients of pool1d and pool3d, and of dilated pooling: numeric
// checks, hand-computed values and errors (pool2d's other cases are in
// pool2d_grad_test.cc).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Ints(const std::string& name, const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

std::string Type(const std::string& type) {
  return absl::StrCat("attrs { name: \"pooling_type\" s: \"", type, "\" } ");
}

constexpr char kNotExclusive[] = "attrs { name: \"exclusive\" b: false } ";
constexpr char kCeil[] = "attrs { name: \"ceil_mode\" b: true } ";
constexpr char kGlobal[] = "attrs { name: \"global_pooling\" b: true } ";

std::string Pool(const std::string& type, const std::string& attrs) {
  return absl::StrCat("type: \"", type,
                      "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
                      "\"Out\" vars: \"y\" } ",
                      attrs);
}

std::string PoolGrad(const std::string& type, const std::string& attrs) {
  return absl::StrCat("type: \"", type,
                      "_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { "
                      "slot: \"Out@GRAD\" vars: \"dy\" } outputs { slot: "
                      "\"X@GRAD\" vars: \"dx\" } ",
                      attrs);
}

// Distinct values 0.1 apart in a shuffled order: every window has one
// maximum, far from a tie at the central differences' step.
Tensor Distinct(const Dims& dims, uint32_t seed) {
  std::vector<double> values(NumElements(dims));
  std::iota(values.begin(), values.end(), 0.0);
  std::shuffle(values.begin(), values.end(), std::mt19937(seed));
  for (double& v : values) v = (v - values.size() / 2.0) * 0.1;
  return MakeTensor<double>(dims, values);
}

TEST(PoolNdGradTest, MatchesCentralDifferences) {
  struct Case {
    std::string type, attrs;
    Dims x;
  };
  const std::vector<Case> cases = {
      {"pool1d",
       Type("max") + Ints("ksize", {3}) + Ints("paddings", {1}),
       {2, 2, 7}},
      {"pool1d",
       Type("avg") + Ints("ksize", {3}) + Ints("strides", {2}) +
           Ints("dilations", {2}) + Ints("paddings", {2, 1}) + kNotExclusive +
           kCeil,
       {1, 2, 8}},
      {"pool1d",
       Type("max") + Ints("ksize", {2}) + Ints("dilations", {3}) +
           Ints("strides", {2}) + kCeil,
       {1, 1, 9}},
      {"pool2d",
       Type("max") + Ints("ksize", {2, 3}) + Ints("dilations", {2, 2}) +
           Ints("paddings", {1, 2}),
       {1, 2, 5, 6}},
      {"pool2d",
       Type("avg") + Ints("ksize", {2, 2}) + Ints("dilations", {3, 1}) +
           Ints("strides", {1, 2}),
       {2, 1, 6, 5}},
      {"pool3d",
       Type("max") + Ints("ksize", {2, 2, 2}) + Ints("strides", {2, 1, 2}) +
           Ints("paddings", {1, 0, 0, 1, 1, 1}) + kCeil,
       {1, 2, 4, 3, 5}},
      {"pool3d",
       Type("avg") + Ints("ksize", {2, 3, 2}) + Ints("paddings", {1, 1, 1}),
       {2, 1, 3, 4, 3}},
      {"pool3d",
       Type("avg") + Ints("ksize", {2, 2, 2}) + Ints("dilations", {2, 1, 2}) +
           Ints("paddings", {1, 1, 0}) + kNotExclusive,
       {1, 2, 4, 3, 4}},
      {"pool3d",
       Type("max") + Ints("ksize", {1, 1, 1}) + kGlobal,
       {2, 2, 2, 3, 2}},
      {"pool3d",
       Type("avg") + Ints("ksize", {1, 1, 1}) + kGlobal,
       {1, 3, 2, 2, 3}},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.type, " ", c.attrs));
    const absl::Status status =
        CheckGradient(Pool(c.type, c.attrs), {{"x", Distinct(c.x, ++seed)}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(PoolNdGradTest, IndicesTakeNoGradient) {
  // The op with Indices bound differentiates as without.
  const std::string op = absl::StrCat(
      "type: \"pool2d\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"y\" } outputs { slot: \"Indices\" vars: \"i\" } ",
      Type("max"), Ints("ksize", {2, 2}), Ints("dilations", {1, 2}));
  const absl::Status status =
      CheckGradient(op, {{"x", Distinct({1, 2, 3, 4}, 7)}});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(PoolNdGradTest, DilatedAverageSpreadsOverItsTaps) {
  // [1, 2, 3, 4, 5] padded by 2, 3 taps 2 apart moving by 2: windows
  // {-2, 0, 2}, {0, 2, 4}, {2, 4, 6}, taking 2, 3 and 2 input cells.
  const Tensor x = MakeTensor<float>({1, 1, 5}, {1, 2, 3, 4, 5});
  const Tensor dy = MakeTensor<float>({1, 1, 3}, {6, 3, 12});
  const std::string window = Type("avg") + Ints("ksize", {3}) +
                             Ints("dilations", {2}) + Ints("strides", {2}) +
                             Ints("paddings", {2});
  auto exclusive =
      RunOp(PoolGrad("pool1d", window), {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(exclusive.ok()) << exclusive.status();
  // Shares 3, 1 and 6; cells 1 and 3 lie between the taps.
  EXPECT_THAT(Values<float>((*exclusive)[0]),
              ElementsAre(3 + 1, 0, 3 + 1 + 6, 0, 1 + 6));
  auto inclusive = RunOp(PoolGrad("pool1d", window + kNotExclusive),
                         {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(inclusive.ok()) << inclusive.status();
  // Every window counts 3 taps: shares 2, 1 and 4.
  EXPECT_THAT(Values<float>((*inclusive)[0]),
              ElementsAre(2 + 1, 0, 2 + 1 + 4, 0, 1 + 4));
}

TEST(PoolNdGradTest, MaxSendsEachWindowsGradientToItsMaximum) {
  // 1..8 as 2x2x2 with the 8 moved to the front: windows 1x2x2 over each
  // depth slice peak at offsets 0 and 7.
  const Tensor x = MakeTensor<float>({1, 1, 2, 2, 2}, {8, 2, 3, 4, 5, 6, 1, 7});
  const Tensor dy = MakeTensor<float>({1, 1, 2, 1, 1}, {10, 20});
  auto out = RunOp(PoolGrad("pool3d", Type("max") + Ints("ksize", {1, 2, 2})),
                   {{"x", x}, {"dy", dy}}, {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(10, 0, 0, 0, 0, 0, 0, 20));
}

TEST(PoolNdGradErrorTest, OutGradShapeNamesVariable) {
  absl::Status status =
      PrepareOp(PoolGrad("pool3d", Type("avg") + Ints("ksize", {2, 2, 2})),
                {{"x", MakeTensor<float>({1, 1, 2, 2, 2}, {})},
                 {"dy", MakeTensor<float>({1, 1, 2, 2, 2}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pool3d_grad): input \"Out@GRAD\" (variable "
                        "\"dy\") is float32 [1, 1, 2, 2, 2]: expected float32 "
                        "[1, 1, 1, 1, 1], as the forward op's output \"Out\""));
  absl::Status rank =
      PrepareOp(PoolGrad("pool1d", Type("max") + Ints("ksize", {2})),
                {{"x", MakeTensor<float>({1, 4}, {})},
                 {"dy", MakeTensor<float>({1, 3}, {})}});
  EXPECT_THAT(rank.message(),
              HasSubstr("op 0 (pool1d_grad): input \"X\" (variable \"x\") has "
                        "shape [1, 4]: expected rank 3"));
}

}  // namespace
}  // namespace scopeflow
