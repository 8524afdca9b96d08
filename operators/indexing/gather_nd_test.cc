// gather_nd: ONNX's examples (hand-checked), batch_dims, negative and int32
// indices, its errors, and its gradient (values and numeric checks).
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string GatherNdOp(int batch_dims) {
  return absl::StrCat(
      "type: \"gather_nd\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Index\" vars: \"i\" } outputs { slot: \"Out\" vars: \"y\" } attrs { "
      "name: \"batch_dims\" i64: ",
      batch_dims, " }");
}

absl::StatusOr<Tensor> GatherNd(int batch_dims, const Tensor& x,
                                const Tensor& index) {
  auto out = RunOp(GatherNdOp(batch_dims), {{"x", x}, {"i", index}}, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(GatherNdTest, OnnxExamples) {
  const Tensor x2 = MakeTensor<int32_t>({2, 2}, {0, 1, 2, 3});
  // Example 1: whole rows of indices pick elements.
  auto out = GatherNd(0, x2, MakeTensor<int64_t>({2, 2}, {0, 0, 1, 1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2));
  EXPECT_THAT(Values<int32_t>(*out), ElementsAre(0, 3));
  // Example 2: one index picks a row.
  out = GatherNd(0, x2, MakeTensor<int64_t>({2, 1}, {1, 0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<int32_t>(*out), ElementsAre(2, 3, 0, 1));
  // Example 3 and 5: X [2, 2, 2] = 0..7.
  const Tensor x3 = MakeTensor<int32_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  out = GatherNd(0, x3, MakeTensor<int64_t>({2, 2}, {0, 1, 1, 0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<int32_t>(*out), ElementsAre(2, 3, 4, 5));
  // Example 5: batch_dims 1, row 1 of batch 0 and row 0 of batch 1.
  out = GatherNd(1, x3, MakeTensor<int64_t>({2, 1}, {1, 0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<int32_t>(*out), ElementsAre(2, 3, 4, 5));
}

TEST(GatherNdTest, BatchDimsWithNegativeAndInt32Indices) {
  // X [2, 3] floats; batch_dims 1, one index per batch row: [-1] of batch 0
  // (= 2) and [0] of batch 1, each twice.
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = GatherNd(1, x, MakeTensor<int32_t>({2, 2, 1}, {-1, 2, 0, -3}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>(*out), ElementsAre(3, 3, 4, 4));
  // Bool and float64 copy alike; K = 2 on a rank-2 X gives scalars.
  auto b = GatherNd(0, MakeTensor<bool>({2, 2}, {true, false, false, true}),
                    MakeTensor<int64_t>({3, 2}, {0, 1, 1, 1, -2, -2}));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(Values<bool>(*b), ElementsAre(false, true, true));
  auto d = GatherNd(0, MakeTensor<double>({3}, {0.5, 1.5, 2.5}),
                    MakeTensor<int64_t>({1}, {2}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->rank(), 0);
  EXPECT_THAT(Values<double>(*d), ElementsAre(2.5));
}

TEST(GatherNdTest, Errors) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = GatherNd(0, x, MakeTensor<int64_t>({2, 2}, {0, 1, 1, 3}));
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (gather_nd): input \"Index\" (variable \"i\") "
                        "holds 3 at [1, 1], out of range for axis 1 of input "
                        "\"X\" (variable \"x\", shape [2, 3]): expected [-3, "
                        "3)"));
  out = GatherNd(1, x, MakeTensor<int64_t>({2, 1}, {0, -4}));
  EXPECT_THAT(out.status().message(),
              HasSubstr("holds -4 at [1, 0], out of range for axis 1"));
  absl::Status status = PrepareOp(
      GatherNdOp(0), {{"x", x}, {"i", MakeTensor<int64_t>({1, 3}, {0, 0, 0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (gather_nd): input \"Index\" (variable \"i\", "
                        "shape [1, 3]) has rows of 3 indices: expected at most "
                        "2"));
  status = PrepareOp(GatherNdOp(1),
                     {{"x", x}, {"i", MakeTensor<int64_t>({3, 1}, {0, 0, 0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("differ along batch axis 0: expected equal sizes"));
  status = PrepareOp(GatherNdOp(2),
                     {{"x", x}, {"i", MakeTensor<int64_t>({2, 1}, {0, 0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("attribute \"batch_dims\" = 2: expected fewer than"));
  status = PrepareOp(GatherNdOp(0),
                     {{"x", x}, {"i", MakeTensor<float>({2, 1}, {0, 0})}});
  EXPECT_THAT(status.message(),
              HasSubstr("input \"Index\" (variable \"i\") has dtype float32"));
}

TEST(GatherNdTest, UnknownDimsAtPrepare) {
  auto info = InferAtPrepare(
      GatherNdOp(0), {{"x", kFloat32, {-1, 4, 5}}, {"i", kInt64, {-1, 7, 2}}},
      "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 7, 5));
  info = InferAtPrepare(GatherNdOp(0),
                        {{"x", kFloat32, {3, 4}}, {"i", kInt64, {2, -1}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->has_dims);
}

TEST(GatherNdTest, GradScatterAddsRepeatedSlices) {
  // X [3, 2]; rows 2, 0, -1 (= 2) gathered.
  const std::string op =
      "type: \"gather_nd_grad\" inputs { slot: \"X\" vars: \"x\" } inputs { "
      "slot: \"Index\" vars: \"i\" } inputs { slot: \"Out@GRAD\" vars: \"g\" "
      "} outputs { slot: \"X@GRAD\" vars: \"dx\" }";
  auto out = RunOp(op,
                   {{"x", MakeTensor<float>({3, 2}, {0, 0, 0, 0, 0, 0})},
                    {"i", MakeTensor<int64_t>({3, 1}, {2, 0, -1})},
                    {"g", MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6})}},
                   {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 4, 0, 0, 6, 8));
}

TEST(GatherNdTest, GradientNumeric) {
  struct Case {
    int batch_dims;
    Dims x_dims;
    Tensor index;
  };
  for (const Case& c : {
           Case{0, {3, 2, 2}, MakeTensor<int64_t>({3, 2}, {2, 1, 0, 0, 2, 1})},
           Case{0, {3, 2}, MakeTensor<int32_t>({2, 2, 1}, {1, 1, -1, 0})},
           Case{1,
                {2, 3, 2},
                MakeTensor<int64_t>({2, 2, 2}, {0, 1, 2, 0, 1, 1, 1, 1})},
       }) {
    SCOPED_TRACE(c.batch_dims);
    const Tensor x =
        MakeTensor<double>(c.x_dims, RandomValues(NumElements(c.x_dims), 7));
    const absl::Status status =
        CheckGradient(GatherNdOp(c.batch_dims), {{"x", x}, {"i", c.index}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

}  // namespace
}  // namespace scopeflow
