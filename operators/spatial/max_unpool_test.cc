// max_unpool against PyTorch 1.13's max_unpool2d (one image, where its
// per-image offsets are ONNX's flat ones), offsets across images and
// channels, its gradient by central differences, and its errors.
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
using ::testing::HasSubstr;

std::string MaxUnpool(const std::string& attrs, bool output_shape = false) {
  return absl::StrCat(
      "type: \"max_unpool\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Indices\" vars: \"i\" } ",
      output_shape ? "inputs { slot: \"OutputShape\" vars: \"shape\" } " : "",
      "outputs { slot: \"Out\" vars: \"y\" } ", attrs);
}

const char kKernel2Stride2[] =
    "attrs { name: \"kernel_shape\" i64s { values: [2, 2] } } "
    "attrs { name: \"strides\" i64s { values: [2, 2] } } ";

// max_pool2d(x, 2, 2) of a 3x4 image gives [5, 8] at offsets [1, 6];
// unpooled to the inferred 2x4, or to the 3x4 the pool read.
TEST(MaxUnpoolTest, MatchesTorch) {
  const Tensor x = MakeTensor<float>({1, 1, 1, 2}, {5, 8});
  const Tensor i = MakeTensor<int64_t>({1, 1, 1, 2}, {1, 6});
  auto y = RunOp(MaxUnpool(kKernel2Stride2), {{"x", x}, {"i", i}}, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Dims({1, 1, 2, 4}));
  EXPECT_THAT(Values<float>((*y)[0]), ElementsAre(0, 5, 0, 0, 0, 0, 8, 0));
  y = RunOp(
      MaxUnpool(kKernel2Stride2, true),
      {{"x", x}, {"i", i}, {"shape", MakeTensor<int64_t>({4}, {1, 1, 3, 4})}},
      {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Dims({1, 1, 3, 4}));
  EXPECT_THAT(Values<float>((*y)[0]),
              ElementsAre(0, 5, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0));
}

// Offsets are into the whole output, not a channel's: a 1-D axis of 1
// cell, kernel 2 and pads 1 + 0 unpools to 1 cell per channel, so offset 1
// is channel 1's cell.
TEST(MaxUnpoolTest, OffsetsSpanImagesAndChannels) {
  auto y =
      RunOp(MaxUnpool("attrs { name: \"kernel_shape\" i64s { values: [2] } } "
                      "attrs { name: \"pads\" i64s { values: [1, 0] } } "),
            {{"x", MakeTensor<double>({1, 2, 1}, {7, 9})},
             {"i", MakeTensor<int64_t>({1, 2, 1}, {1, 0})}},
            {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Dims({1, 2, 1}));
  EXPECT_THAT(Values<double>((*y)[0]), ElementsAre(9, 7));
}

TEST(MaxUnpoolTest, GradientMatchesCentralDifferences) {
  GradCheckOptions options;
  options.wrt = {"x"};
  absl::Status status = CheckGradient(
      MaxUnpool(kKernel2Stride2),
      {{"x", MakeTensor<double>({2, 1, 1, 2}, {0.5, -1, 2, 3})},
       // Offset 6 twice: the later element's value wins, and its gradient.
       {"i", MakeTensor<int64_t>({2, 1, 1, 2}, {1, 6, 6, 12})}},
      options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(MaxUnpoolTest, ErrorsSayWhatWasExpected) {
  const Tensor x = MakeTensor<float>({1, 1, 1, 2}, {5, 8});
  auto status =
      RunOp(MaxUnpool(kKernel2Stride2),
            {{"x", x}, {"i", MakeTensor<int64_t>({1, 1, 1, 2}, {1, 8})}}, {"y"})
          .status();
  EXPECT_THAT(status.message(),
              HasSubstr("input \"Indices\" (variable \"i\") holds 8 at element "
                        "1: expected an offset into the output's 8 elements"));
  status =
      RunOp(MaxUnpool(kKernel2Stride2),
            {{"x", x}, {"i", MakeTensor<int64_t>({1, 1, 2, 1}, {1, 2})}}, {"y"})
          .status();
  EXPECT_THAT(status.message(), HasSubstr("expected the shape of input \"X\""));
  status =
      RunOp(MaxUnpool(""),
            {{"x", x}, {"i", MakeTensor<int64_t>({1, 1, 1, 2}, {1, 2})}}, {"y"})
          .status();
  EXPECT_THAT(
      status.message(),
      HasSubstr("attribute \"kernel_shape\" = [0, 0]: expected values >= 1"));
  status = RunOp(MaxUnpool(kKernel2Stride2, true),
                 {{"x", x},
                  {"i", MakeTensor<int64_t>({1, 1, 1, 2}, {1, 2})},
                  {"shape", MakeTensor<int64_t>({2}, {3, 4})}},
                 {"y"})
               .status();
  EXPECT_THAT(status.message(),
              HasSubstr("expected the 4 dims of the output, as X has"));
}

}  // namespace
}  // namespace scopeflow
