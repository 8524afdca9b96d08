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

std::string ScatterOp(const std::string& mode, bool indices,
                      const std::string& extra = "") {
  return absl::StrCat(R"pb(type: "tensor_scatter"
                           inputs { slot: "PastCache" vars: "past" }
                           inputs { slot: "Update" vars: "update" }
                           outputs { slot: "Out" vars: "y" })pb",
                      indices ? R"pb( inputs { slot: "WriteIndices"
                                               vars: "at" })pb"
                              : "",
                      " attrs { name: \"mode\" s: \"", mode, "\" }", extra);
}

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(TensorScatterTest, LinearWritesAtEachBatchEntrysIndex) {
  // Cache [2, 3, 2], axis -2: entry 0 written at step 0, entry 1 at 2.
  auto out = RunOp(
      ScatterOp("linear", true),
      {{"past", MakeTensor<float>({2, 3, 2}, Iota(12))},
       {"update", MakeTensor<float>({2, 1, 2}, {100, 101, 200, 201})},
       {"at", MakeTensor<int64_t>({2}, {0, 2})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAreArray<float>(
                  {100, 101, 2, 3, 4, 5, 6, 7, 8, 9, 200, 201}));
  // Without indices every entry is written from step 0.
  out = RunOp(ScatterOp("linear", false),
              {{"past", MakeTensor<float>({2, 3, 2}, Iota(12))},
               {"update", MakeTensor<float>({2, 1, 2}, {100, 101, 200, 201})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAreArray<float>(
                  {100, 101, 2, 3, 4, 5, 200, 201, 8, 9, 10, 11}));
}

TEST(TensorScatterTest, CircularWrapsAroundTheCache) {
  // Two steps from step 2 of 3 land at steps 2 and 0.
  auto out = RunOp(
      ScatterOp("circular", true),
      {{"past", MakeTensor<int32_t>({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                 10, 11})},
       {"update", MakeTensor<int32_t>({2, 2, 2}, {100, 101, 102, 103, 200,
                                                   201, 202, 203})},
       {"at", MakeTensor<int64_t>({2}, {2, 1})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]),
              ElementsAre(102, 103, 2, 3, 100, 101, 6, 7, 200, 201, 202, 203));
}

TEST(TensorScatterTest, HeadsBetweenBatchAndAxisShareTheEntrysIndex) {
  auto out = RunOp(
      ScatterOp("linear", true, R"pb( attrs { name: "axis" i64: 2 })pb"),
      {{"past", MakeTensor<float>({2, 2, 3, 1}, Iota(12))},
       {"update", MakeTensor<float>({2, 2, 1, 1}, {50, 51, 60, 61})},
       {"at", MakeTensor<int64_t>({2}, {1, 0})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAreArray<float>({0, 50, 2, 3, 51, 5, 60, 7, 8, 61, 10,
                                       11}));
}

TEST(TensorScatterTest, GradientSplitsOutGrad) {
  for (const std::string mode : {"linear", "circular"}) {
    SCOPED_TRACE(mode);
    const absl::Status status = CheckGradient(
        ScatterOp(mode, true),
        {{"past", MakeTensor<double>({2, 4, 3}, RandomValues(24, 1))},
         {"update", MakeTensor<double>({2, 2, 3}, RandomValues(12, 2))},
         {"at", MakeTensor<int64_t>({2}, {mode == "linear" ? 2 : 3, 1})}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(TensorScatterTest, BadInputsNameTheVariable) {
  const Tensor past = MakeTensor<float>({2, 3, 2}, Iota(12));
  const Tensor update = MakeTensor<float>({2, 1, 2}, {1, 2, 3, 4});
  absl::Status status = PrepareOp(
      ScatterOp("linear", false, R"pb( attrs { name: "axis" i64: 0 })pb"),
      {{"past", past}, {"update", update}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("axis = 0 is the batch axis"));
  status = PrepareOp(ScatterOp("linear", false),
                     {{"past", past},
                      {"update", MakeTensor<float>({2, 4, 2},
                                                   std::vector<float>(16))}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"Update\" (variable \"update\", shape [2, 4, "
                        "2]): expected input \"PastCache\" (variable "
                        "\"past\", shape [2, 3, 2])'s shape but for at most "
                        "its 3 steps at axis 1"));
  status = PrepareOp(ScatterOp("sideways", false),
                     {{"past", past}, {"update", update}});
  EXPECT_THAT(std::string(status.message()), HasSubstr("sideways"));
  auto out = RunOp(ScatterOp("linear", true),
                   {{"past", past},
                    {"update", update},
                    {"at", MakeTensor<int64_t>({2}, {0, 3})}},
                   {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("input \"WriteIndices\" (variable \"at\") = 3 at "
                        "batch entry 1: expected 0 to 2 (linear writes of 1 "
                        "steps into 3)"));
  out = RunOp(ScatterOp("circular", true),
              {{"past", past},
               {"update", update},
               {"at", MakeTensor<int64_t>({1}, {0})}},
              {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("has 1 indices: expected one per batch entry, 2"));
}

}  // namespace
}  // namespace scopeflow
