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

std::string TriluOp(bool upper, bool k_input) {
  return absl::StrCat(R"pb(type: "trilu"
                           inputs { slot: "X" vars: "x" }
                           outputs { slot: "Out" vars: "y" })pb",
                      k_input ? R"pb( inputs { slot: "K" vars: "k" })pb" : "",
                      " attrs { name: \"upper\" b: ", upper ? "true" : "false",
                      " }");
}

TEST(TriluTest, MatchesTorchTriuAndTrilForEachK) {
  // torch.triu / torch.tril of arange(1, 13).reshape(3, 4), torch 1.13.
  struct Case {
    int64_t k;
    std::vector<float> triu, tril;
  };
  const std::vector<Case> cases = {
      {0,
       {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12},
       {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}},
      {1,
       {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12},
       {1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12}},
      {-1,
       {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12},
       {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}},
      {5, std::vector<float>(12, 0), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
      {-4, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, std::vector<float>(12, 0)},
  };
  std::vector<float> values(12);
  for (int i = 0; i < 12; ++i) values[i] = i + 1;
  const Tensor x = MakeTensor<float>({3, 4}, values);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.k);
    for (bool upper : {true, false}) {
      auto out = RunOp(TriluOp(upper, true),
                       {{"x", x}, {"k", MakeTensor<int64_t>({}, {c.k})}},
                       {"y"});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(Values<float>((*out)[0]), upper ? c.triu : c.tril);
    }
  }
}

TEST(TriluTest, BatchesOfMatricesAndOtherDtypes) {
  // Two 2x2 matrices, lower triangle with the attribute's k = 0.
  auto out = RunOp(TriluOp(false, false),
                   {{"x", MakeTensor<int64_t>({2, 2, 2}, {1, 2, 3, 4, 5, 6,
                                                          7, 8})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(1, 0, 3, 4, 5, 0, 7, 8));
  auto flags = RunOp(
      TriluOp(true, false) + R"pb( attrs { name: "k" i64: 1 })pb",
      {{"x", MakeTensor<bool>({2, 3}, {true, true, true, true, true, true})}},
      {"y"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_THAT(Values<bool>((*flags)[0]),
              ElementsAre(false, true, true, false, false, true));
  auto empty = RunOp(TriluOp(true, false),
                     {{"x", MakeTensor<int32_t>({0, 5}, {})}}, {"y"});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT((*empty)[0].dims(), ElementsAre(0, 5));
}

TEST(TriluTest, GradientMasksTheSameWay) {
  for (bool upper : {true, false}) {
    for (int64_t k : {-1, 0, 2}) {
      SCOPED_TRACE(absl::StrCat(upper, " ", k));
      const absl::Status status = CheckGradient(
          TriluOp(upper, true),
          {{"x", MakeTensor<double>({2, 3, 4}, RandomValues(24, 5))},
           {"k", MakeTensor<int64_t>({}, {k})}});
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

TEST(TriluTest, BadInputsNameTheVariable) {
  absl::Status status = PrepareOp(TriluOp(true, false),
                                  {{"x", MakeTensor<float>({3}, {1, 2, 3})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("op 0 (trilu): input \"X\" (variable \"x\""));
  EXPECT_THAT(std::string(status.message()), HasSubstr("rank"));
  status = PrepareOp(TriluOp(true, true),
                     {{"x", MakeTensor<float>({2, 2}, {1, 2, 3, 4})},
                      {"k", MakeTensor<int64_t>({2}, {0, 1})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"K\" (variable \"k\") is int64 [2]: expected "
                        "one int64 element (a scalar)"));
}

}  // namespace
}  // namespace scopeflow
