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

std::string ReverseOp(int64_t batch_axis, int64_t time_axis) {
  return absl::StrCat(R"pb(type: "reverse_sequence"
                           inputs { slot: "X" vars: "x" }
                           inputs { slot: "SequenceLens" vars: "lens" }
                           outputs { slot: "Out" vars: "y" })pb",
                      " attrs { name: \"batch_axis\" i64: ", batch_axis,
                      " } attrs { name: \"time_axis\" i64: ", time_axis,
                      " }");
}

TEST(ReverseSequenceTest, OnnxExamples) {
  // ONNX's ReverseSequence examples, time-major then batch-major.
  auto time_major = RunOp(
      ReverseOp(1, 0),
      {{"x", MakeTensor<float>({4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14,
                                        3, 7, 11, 15})},
       {"lens", MakeTensor<int64_t>({4}, {4, 3, 2, 1})}},
      {"y"});
  ASSERT_TRUE(time_major.ok()) << time_major.status();
  EXPECT_THAT(Values<float>((*time_major)[0]),
              ElementsAreArray<float>(
                  {3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15}));
  auto batch_major = RunOp(
      ReverseOp(0, 1),
      {{"x", MakeTensor<float>({4, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                        12, 13, 14, 15})},
       {"lens", MakeTensor<int64_t>({4}, {1, 2, 3, 4})}},
      {"y"});
  ASSERT_TRUE(batch_major.ok()) << batch_major.status();
  EXPECT_THAT(Values<float>((*batch_major)[0]),
              ElementsAreArray<float>(
                  {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
}

TEST(ReverseSequenceTest, InnerDimsMoveWholeAndOtherDtypes) {
  // Batch 2, 3 steps of 2 values; lengths 3 and 0 (nothing reversed).
  auto out = RunOp(
      ReverseOp(0, 1),
      {{"x", MakeTensor<int32_t>({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                              11, 12})},
       {"lens", MakeTensor<int64_t>({2}, {3, 0})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]),
              ElementsAre(5, 6, 3, 4, 1, 2, 7, 8, 9, 10, 11, 12));
}

TEST(ReverseSequenceTest, GradientReversesTheSameSteps) {
  const absl::Status status = CheckGradient(
      ReverseOp(1, 0),
      {{"x", MakeTensor<double>({3, 2, 2}, RandomValues(12, 3))},
       {"lens", MakeTensor<int64_t>({2}, {2, 3})}});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(ReverseSequenceTest, BadInputsNameTheVariable) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::Status status =
      PrepareOp(ReverseOp(0, 0),
                {{"x", x}, {"lens", MakeTensor<int64_t>({2}, {1, 1})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("batch_axis = 0 and time_axis = 0: expected 0 and 1, "
                        "one each"));
  status = PrepareOp(ReverseOp(0, 1),
                     {{"x", x}, {"lens", MakeTensor<int64_t>({3}, {1, 1, 1})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"SequenceLens\" (variable \"lens\") has 3 "
                        "lengths, but input \"X\" (variable \"x\", shape [2, "
                        "3]) has a batch of 2"));
  status = PrepareOp(ReverseOp(0, 1),
                     {{"x", x}, {"lens", MakeTensor<int32_t>({2}, {1, 1})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"SequenceLens\" (variable \"lens\") has "
                        "dtype int32: expected int64"));
  auto out = RunOp(ReverseOp(0, 1),
                   {{"x", x}, {"lens", MakeTensor<int64_t>({2}, {1, 4})}},
                   {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("input \"SequenceLens\" (variable \"lens\") = 4 at "
                        "batch entry 1: expected 0 to 3"));
}

}  // namespace
}  // namespace scopeflow
