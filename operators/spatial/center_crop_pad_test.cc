// center_crop_pad: hand-computed crops and pads (odd differences put the
// extra cell after), chosen and negative axes, other dtypes, its gradient
// by central differences, and its errors.
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

std::string CenterCropPad(const std::string& attrs = "") {
  return absl::StrCat(
      "type: \"center_crop_pad\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Shape\" vars: \"shape\" } "
      "outputs { slot: \"Out\" vars: \"y\" } ",
      attrs);
}

// Rows 0..4 of 1 cell: cropping 5 to 2 drops 1 before, 2 after; padding 1
// column to 4 adds 1 before, 2 after.
TEST(CenterCropPadTest, CropsAndPadsAroundTheCentre) {
  auto y = RunOp(CenterCropPad(),
                 {{"x", MakeTensor<float>({5, 1}, {0, 1, 2, 3, 4})},
                  {"shape", MakeTensor<int64_t>({2}, {2, 4})}},
                 {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Dims({2, 4}));
  EXPECT_THAT(Values<float>((*y)[0]), ElementsAre(0, 1, 0, 0, 0, 2, 0, 0));
}

TEST(CenterCropPadTest, ChosenAndNegativeAxes) {
  std::vector<int32_t> x(2 * 4 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i);
  auto y =
      RunOp(CenterCropPad("attrs { name: \"axes\" ints { values: [-3, -1] } }"),
            {{"x", MakeTensor<int32_t>({2, 4, 3}, x)},
             {"shape", MakeTensor<int64_t>({2}, {1, 1})}},
            {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].dims(), Dims({1, 4, 1}));
  // Axis 0: 2 -> 1 keeps row 0; axis 2: 3 -> 1 keeps column 1.
  EXPECT_THAT(Values<int32_t>((*y)[0]), ElementsAre(1, 4, 7, 10));
}

TEST(CenterCropPadTest, GradientMatchesCentralDifferences) {
  GradCheckOptions options;
  options.wrt = {"x"};
  std::vector<double> x(3 * 4 * 5);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1 * i - 2;
  absl::Status status =
      CheckGradient(CenterCropPad(),
                    {{"x", MakeTensor<double>({3, 4, 5}, x)},
                     {"shape", MakeTensor<int64_t>({3}, {6, 1, 4})}},
                    options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(CenterCropPadTest, ErrorsSayWhatWasExpected) {
  auto run = [](const std::string& attrs, const std::vector<int64_t>& shape) {
    return RunOp(CenterCropPad(attrs),
                 {{"x", MakeTensor<float>({2, 2}, {0, 0, 0, 0})},
                  {"shape", MakeTensor<int64_t>(
                                {static_cast<int64_t>(shape.size())}, shape)}},
                 {"y"})
        .status();
  };
  EXPECT_THAT(run("", {1}).message(),
              HasSubstr("input \"Shape\" (variable \"shape\") = [1]: expected "
                        "2 values, one per axis cropped or padded"));
  EXPECT_THAT(run("", {1, -1}).message(), HasSubstr("expected lengths >= 0"));
  EXPECT_THAT(
      run("attrs { name: \"axes\" ints { values: [2] } }", {1}).message(),
      HasSubstr("axis 2 is out of range for rank 2"));
  EXPECT_THAT(run("attrs { name: \"axes\" ints { values: [0, -2] } }", {1, 1})
                  .message(),
              HasSubstr("names axis 0 twice"));
}

}  // namespace
}  // namespace scopeflow
