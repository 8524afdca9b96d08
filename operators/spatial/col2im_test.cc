// col2im against PyTorch 1.13's torch.nn.functional.fold (2-D: overlaps,
// padding, strides, dilations), a hand-computed 3-D case, numeric
// gradients, and its errors.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string Col2Im(const std::string& attrs) {
  return absl::StrCat(
      "type: \"col2im\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"ImageShape\" vars: \"image\" } "
      "inputs { slot: \"BlockShape\" vars: \"block\" } "
      "outputs { slot: \"Out\" vars: \"y\" } ",
      attrs);
}

std::string Ints(const std::string& name, const std::string& values) {
  return absl::StrCat("attrs { name: \"", name, "\" i64s { values: [", values,
                      "] } } ");
}

std::vector<double> Iota(int64_t n, double scale, double shift) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i * scale + shift;
  return v;
}

// fold(arange(24).reshape(1, 4, 6), (3, 4), (2, 2)): overlapping 2x2
// blocks add up.
TEST(Col2ImTest, OverlapsAddUpAsTorchFold) {
  auto y = RunOp(Col2Im(""),
                 {{"x", MakeTensor<double>({1, 4, 6}, Iota(24, 1, 0))},
                  {"image", MakeTensor<int64_t>({2}, {3, 4})},
                  {"block", MakeTensor<int64_t>({2}, {2, 2})}},
                 {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Dims({1, 1, 3, 4}));
  EXPECT_THAT(Values<double>((*y)[0]),
              ElementsAre(0, 7, 9, 8, 15, 44, 48, 31, 15, 37, 39, 23));
}

// fold(arange(36).reshape(1, 12, 3) * 0.5 - 3, (4, 5), (2, 3), dilation
// (1, 2), padding (1, 0), stride (2, 1)): two channels.
TEST(Col2ImTest, PaddingStridesDilationsAsTorchFold) {
  auto y = RunOp(Col2Im(Ints("dilations", "1, 2") + Ints("pads", "1, 0, 1, 0") +
                        Ints("strides", "2, 1")),
                 {{"x", MakeTensor<double>({1, 12, 3}, Iota(36, 0.5, -3))},
                  {"image", MakeTensor<int64_t>({2}, {4, 5})},
                  {"block", MakeTensor<int64_t>({2}, {2, 3})}},
                 {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Dims({1, 2, 4, 5}));
  EXPECT_THAT(
      Values<double>((*y)[0]),
      ElementsAreArray(std::vector<double>{
          1.5, 0,   3,  0,    4.5,  -2.5, 0,    -1, 0,  0.5, 2,    0,   3.5, 0,
          5,   -2,  0,  -0.5, 0,    1,    10.5, 0,  12, 0,   13.5, 6.5, 0,   8,
          0,   9.5, 11, 0,    12.5, 0,    14,   7,  0,  8.5, 0,    10}));
}

// A 1x2x2 image from 1x1x2 blocks, one per row: block cell k of position
// l (X[0, k, l]) lands at (0, l, k).
TEST(Col2ImTest, ThreeSpatialAxes) {
  auto y = RunOp(Col2Im(""),
                 {{"x", MakeTensor<float>({1, 2, 2}, {1, 2, 3, 4})},
                  {"image", MakeTensor<int64_t>({3}, {1, 2, 2})},
                  {"block", MakeTensor<int64_t>({3}, {1, 1, 2})}},
                 {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Dims({1, 1, 1, 2, 2}));
  EXPECT_THAT(Values<float>((*y)[0]), ElementsAre(1, 3, 2, 4));
}

TEST(Col2ImTest, GradientMatchesCentralDifferences) {
  GradCheckOptions options;
  options.wrt = {"x"};
  absl::Status status = CheckGradient(
      Col2Im(Ints("dilations", "2, 1") + Ints("pads", "1, 0, 0, 2") +
             Ints("strides", "1, 2")),
      {{"x", MakeTensor<double>({2, 12, 9}, Iota(216, 0.01, -0.7))},
       {"image", MakeTensor<int64_t>({2}, {4, 5})},
       {"block", MakeTensor<int64_t>({2}, {2, 3})}},
      options);
  EXPECT_TRUE(status.ok()) << status;
  status =
      CheckGradient(Col2Im(""),
                    {{"x", MakeTensor<double>({1, 4, 8}, Iota(32, 0.1, -1))},
                     {"image", MakeTensor<int64_t>({3}, {2, 3, 3})},
                     {"block", MakeTensor<int64_t>({3}, {1, 2, 2})}},
                    options);
  EXPECT_TRUE(status.ok()) << status;
}

absl::Status RunCol2Im(const std::string& attrs, const Dims& x,
                       const Dims& image, const Dims& block) {
  return RunOp(
             Col2Im(attrs),
             {{"x", MakeTensor<float>(x, std::vector<float>(NumElements(x)))},
              {"image", MakeTensor<int64_t>(
                            {static_cast<int64_t>(image.size())},
                            std::vector<int64_t>(image.begin(), image.end()))},
              {"block", MakeTensor<int64_t>(
                            {static_cast<int64_t>(block.size())},
                            std::vector<int64_t>(block.begin(), block.end()))}},
             {"y"})
      .status();
}

TEST(Col2ImTest, ErrorsSayWhatWasExpected) {
  EXPECT_THAT(RunCol2Im("", {1, 4, 5}, {3, 4}, {2, 2}).message(),
              HasSubstr("expected axis 2 to hold the 6 block positions of "
                        "input \"ImageShape\""));
  EXPECT_THAT(RunCol2Im("", {1, 5, 6}, {3, 4}, {2, 2}).message(),
              HasSubstr("expected axis 1 to hold C blocks of 4 cells"));
  EXPECT_THAT(RunCol2Im("", {1, 4, 6}, {3, 4}, {2}).message(),
              HasSubstr("expected one image and one block size per spatial "
                        "axis"));
  EXPECT_THAT(RunCol2Im("", {1, 4, 1}, {1, 4}, {2, 2}).message(),
              HasSubstr("a block spans 2 cells on axis 0, more than the 1"));
  EXPECT_THAT(
      RunCol2Im(Ints("strides", "0, 1"), {1, 4, 6}, {3, 4}, {2, 2}).message(),
      HasSubstr("attribute \"strides\" = [0, 1]: expected values >= 1"));
  EXPECT_THAT(
      RunCol2Im(Ints("pads", "1, 1"), {1, 4, 6}, {3, 4}, {2, 2}).message(),
      HasSubstr("attribute \"pads\" = [1, 1]: expected 4 values"));
}

}  // namespace
}  // namespace scopeflow
