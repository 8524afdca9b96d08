// resize's gradient: numeric checks for every mode (each a fixed linear
// map of X), hand-computed values, and resize_grad's errors.
#include <cstdint>
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

std::string Str(const std::string& name, const std::string& value) {
  return absl::StrCat("attrs { name: \"", name, "\" s: \"", value, "\" } ");
}

std::string Floats(const std::string& name, const std::vector<float>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" floats { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

std::string Int64s(const std::string& name,
                   const std::vector<int64_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" i64s { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

std::string Resize(const std::string& attrs, const std::string& inputs = "") {
  return absl::StrCat("type: \"resize\" inputs { slot: \"X\" vars: \"x\" } ",
                      inputs, "outputs { slot: \"Out\" vars: \"y\" } ", attrs);
}

std::string ResizeGrad(const std::string& attrs) {
  return absl::StrCat(
      "type: \"resize_grad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Out@GRAD\" vars: \"dy\" } "
      "outputs { slot: \"X@GRAD\" vars: \"dx\" } ",
      attrs);
}

Tensor Random(const Dims& dims, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> values(NumElements(dims));
  for (double& v : values) v = dist(engine);
  return MakeTensor<double>(dims, values);
}

struct GradCase {
  std::string name;
  std::string attrs;
  Dims x;
};

TEST(ResizeGradTest, MatchesCentralDifferences) {
  const std::string linear = Str("mode", "linear");
  const std::string cubic = Str("mode", "cubic");
  const std::vector<GradCase> cases = {
      {"nearest up", Floats("scales", {1, 1, 2, 1.5}), {1, 2, 3, 4}},
      {"nearest down ceil",
       Str("nearest_mode", "ceil") + Floats("scales", {1, 1, 0.5, 0.7f}),
       {2, 1, 4, 5}},
      {"linear up", linear + Floats("scales", {1, 1, 2, 3}), {1, 2, 3, 3}},
      {"linear down align_corners",
       linear + Str("coordinate_transformation_mode", "align_corners") +
           Int64s("sizes", {1, 2, 2, 3}),
       {1, 2, 5, 4}},
      {"linear antialias",
       linear + "attrs { name: \"antialias\" b: true } " +
           Floats("scales", {1, 1, 0.4f, 0.6f}),
       {1, 1, 7, 6}},
      {"cubic up", cubic + Floats("scales", {1, 1, 2, 2}), {1, 1, 4, 3}},
      {"cubic exclude_outside asymmetric",
       cubic + "attrs { name: \"exclude_outside\" b: true } " +
           Str("coordinate_transformation_mode", "asymmetric") +
           Floats("scales", {1, 1, 1.5, 2.5}),
       {1, 2, 3, 3}},
      {"cubic antialias",
       cubic + "attrs { name: \"antialias\" b: true } " +
           Int64s("sizes", {1, 1, 3, 2}),
       {1, 1, 6, 5}},
      // Cells beyond the input take the extrapolation value: no gradient.
      {"crop",
       linear + Str("coordinate_transformation_mode", "tf_crop_and_resize") +
           Floats("roi", {0, 0.1f, -0.2f, 1, 0.7f, 1.3f}) +
           "attrs { name: \"extrapolation_value\" f: 3 } " +
           Int64s("sizes", {2, 4, 5}),
       {2, 3, 4}},
      {"rank 3, one axis",
       cubic + "attrs { name: \"axes\" ints { values: [1] } } " +
           Floats("scales", {1.75}),
       {2, 4, 3}},
  };
  for (const GradCase& c : cases) {
    SCOPED_TRACE(c.name);
    absl::Status status =
        CheckGradient(Resize(c.attrs), {{"x", Random(c.x, 5)}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(ResizeGradTest, ScalesFedAtRunTime) {
  GradCheckOptions options;
  options.wrt = {"x"};
  absl::Status status = CheckGradient(
      Resize(Str("mode", "linear"), "inputs { slot: \"Scales\" vars: \"s\" } "),
      {{"x", Random({2, 3}, 1)}, {"s", MakeTensor<double>({2}, {1.5, 2})}},
      options);
  EXPECT_TRUE(status.ok()) << status;
  status = CheckGradient(
      Resize(Str("mode", "cubic"), "inputs { slot: \"Sizes\" vars: \"s\" } "),
      {{"x", Random({3, 4}, 2)}, {"s", MakeTensor<int64_t>({2}, {5, 2})}},
      options);
  EXPECT_TRUE(status.ok()) << status;
}

// Nearest doubling copies each cell to a 2x2 block, whose gradients add.
TEST(ResizeGradTest, HandComputedNearest) {
  auto dx =
      RunOp(ResizeGrad(Floats("scales", {2, 2})),
            {{"x", MakeTensor<float>({2, 2}, {0, 0, 0, 0})},
             {"dy", MakeTensor<float>({4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                               11, 12, 13, 14, 15, 16})}},
            {"dx"});
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(Values<float>((*dx)[0]),
              ElementsAre(1 + 2 + 5 + 6, 3 + 4 + 7 + 8, 9 + 10 + 13 + 14,
                          11 + 12 + 15 + 16));
}

// Linear doubling of [a, b] (half_pixel) is [a, .75a + .25b, .25a + .75b,
// b]: each cell gathers its weights times the gradients flowing back.
TEST(ResizeGradTest, HandComputedLinear) {
  auto dx = RunOp(ResizeGrad(Str("mode", "linear") + Floats("scales", {1, 2})),
                  {{"x", MakeTensor<float>({1, 2}, {0, 0})},
                   {"dy", MakeTensor<float>({1, 4}, {1, 10, 100, 1000})}},
                  {"dx"});
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_THAT(Values<float>((*dx)[0]),
              ElementsAre(1 + 7.5 + 25, 2.5 + 75 + 1000));
}

TEST(ResizeGradTest, OutputGradShapeIsChecked) {
  absl::Status status =
      PrepareOp(ResizeGrad(Floats("scales", {2, 2})),
                {{"x", MakeTensor<float>({2, 2}, {0, 0, 0, 0})},
                 {"dy", MakeTensor<float>({4, 3}, std::vector<float>(12, 0))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (resize_grad): input \"Out@GRAD\" (variable "
                        "\"dy\") is float32 [4, 3]: expected float32 [4, 4], "
                        "as the forward op's output \"Out\""));
}

}  // namespace
}  // namespace scopeflow
