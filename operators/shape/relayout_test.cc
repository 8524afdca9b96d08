#include <cstdint>
#include <string>
#include <vector>

#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TransposeTest, Matrix) {
  auto out =
      RunOp(R"pb(type: "transpose"
                 inputs { slot: "X" vars: "x" }
                 outputs { slot: "Out" vars: "y" }
                 attrs {
                   name: "perm"
                   ints { values: [ 1, 0 ] }
                 })pb",
            {{"x", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(TransposeTest, ThreeDims) {
  // x[i][j][k] = 6i + 2j + k; out[a][b][c] = x[b][c][a].
  auto out = RunOp(
      R"pb(type: "transpose"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "y" }
           attrs {
             name: "perm"
             ints { values: [ 2, 0, 1 ] }
           })pb",
      {{"x", MakeTensor<int64_t>({2, 3, 2},
                                 {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2, 3));
  EXPECT_THAT(Values<int64_t>((*out)[0]),
              ElementsAre(0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11));
  // The identity permutation copies.
  auto same = RunOp(R"pb(type: "transpose"
                         inputs { slot: "X" vars: "x" }
                         outputs { slot: "Out" vars: "y" }
                         attrs {
                           name: "perm"
                           ints { values: [ 0, 1 ] }
                         })pb",
                    {{"x", MakeTensor<bool>({1, 2}, {true, false})}}, {"y"});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_THAT(Values<bool>((*same)[0]), ElementsAre(true, false));
}

TEST(TransposeTest, FourDimsMatchIndexArithmetic) {
  // x[a][b][c][d] = 1000a + 100b + 10c + d, dims [2, 3, 4, 5]; with perm
  // [3, 1, 0, 2], out[d][b][a][c] = x[a][b][c][d].
  std::vector<int32_t> values;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 3; ++b) {
      for (int c = 0; c < 4; ++c) {
        for (int d = 0; d < 5; ++d)
          values.push_back(1000 * a + 100 * b + 10 * c + d);
      }
    }
  }
  auto out = RunOp(R"pb(type: "transpose"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "y" }
                        attrs {
                          name: "perm"
                          ints { values: [ 3, 1, 0, 2 ] }
                        })pb",
                   {{"x", MakeTensor<int32_t>({2, 3, 4, 5}, values)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_THAT((*out)[0].dims(), ElementsAre(5, 3, 2, 4));
  const std::vector<int32_t> got = Values<int32_t>((*out)[0]);
  int n = 0;
  for (int d = 0; d < 5; ++d) {
    for (int b = 0; b < 3; ++b) {
      for (int a = 0; a < 2; ++a) {
        for (int c = 0; c < 4; ++c) {
          EXPECT_EQ(got[n++], 1000 * a + 100 * b + 10 * c + d);
        }
      }
    }
  }
}

// Copies large enough to be spread over threads (where more than one is
// available): NCHW to NHWC, and a 2-D transpose whose innermost dimension
// merges into one run, each element checked by index arithmetic.
TEST(TransposeTest, LargeCopiesMatchIndexArithmetic) {
  constexpr int kN = 5, kC = 48, kH = 33, kW = 31;
  std::vector<int32_t> values(kN * kC * kH * kW);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<int32_t>(i);
  auto out =
      RunOp(R"pb(type: "transpose"
                 inputs { slot: "X" vars: "x" }
                 outputs { slot: "Out" vars: "y" }
                 attrs {
                   name: "perm"
                   ints { values: [ 0, 2, 3, 1 ] }
                 })pb",
            {{"x", MakeTensor<int32_t>({kN, kC, kH, kW}, values)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_THAT((*out)[0].dims(), ElementsAre(kN, kH, kW, kC));
  const std::vector<int32_t> nhwc = Values<int32_t>((*out)[0]);
  int64_t mismatches = 0, n = 0;
  for (int a = 0; a < kN; ++a) {
    for (int h = 0; h < kH; ++h) {
      for (int w = 0; w < kW; ++w) {
        for (int c = 0; c < kC; ++c) {
          mismatches += nhwc[n++] != ((a * kC + c) * kH + h) * kW + w;
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
  // [kN * kC, kH * kW] transposed: rows of the output gather a column.
  auto matrix =
      RunOp(R"pb(type: "transpose"
                 inputs { slot: "X" vars: "x" }
                 outputs { slot: "Out" vars: "y" }
                 attrs {
                   name: "perm"
                   ints { values: [ 1, 0 ] }
                 })pb",
            {{"x", MakeTensor<int32_t>({kN * kC, kH * kW}, values)}}, {"y"});
  ASSERT_TRUE(matrix.ok()) << matrix.status();
  const std::vector<int32_t> t = Values<int32_t>((*matrix)[0]);
  mismatches = 0;
  for (int j = 0; j < kH * kW; ++j) {
    for (int i = 0; i < kN * kC; ++i) {
      mismatches += t[j * kN * kC + i] != i * kH * kW + j;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(TransposeTest, UnknownDimsAtPrepare) {
  const std::string op = R"pb(type: "transpose"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "y" }
                              attrs {
                                name: "perm"
                                ints { values: [ 1, 2, 0 ] }
                              })pb";
  auto info = InferAtPrepare(op, {{"x", kFloat64, {-1, 3, 4}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(3, 4, -1));
  info = InferAtPrepare(op, {{"x", kFloat64, {}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, -1, -1));
}

TEST(TransposeTest, BadPermNamesOpAndVariable) {
  const Tensor x = MakeTensor<float>({2, 3}, std::vector<float>(6));
  absl::Status status = PrepareOp(R"pb(type: "transpose"
                                       inputs { slot: "X" vars: "x" }
                                       outputs { slot: "Out" vars: "y" }
                                       attrs {
                                         name: "perm"
                                         ints { values: [ 1, 1 ] }
                                       })pb",
                                  {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (transpose): attribute \"perm\" = [1, 1] is not "
                        "a permutation of 0..1, for input \"X\" (variable "
                        "\"x\") of shape [2, 3]"));
  status = PrepareOp(R"pb(type: "transpose"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "perm"
                            ints { values: [ 0, 2 ] }
                          })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (transpose): attribute \"perm\" = [0, 2] is not "
                        "a permutation of 0..1, for input \"X\" (variable "
                        "\"x\")"));
  // Rank mismatch.
  status = PrepareOp(R"pb(type: "transpose"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "perm"
                            ints { values: [ 2, 0, 1 ] }
                          })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (transpose): attribute \"perm\" = [2, 0, 1] has "
                        "3 entries, but input \"X\" (variable \"x\") of shape "
                        "[2, 3] has rank 2"));
}

TEST(ExpandTest, BroadcastsLikeNumpy) {
  auto out = RunOp(R"pb(type: "expand"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "y" }
                        attrs {
                          name: "shape"
                          i64s { values: [ 2, 3, 2 ] }
                        })pb",
                   {{"x", MakeTensor<int32_t>({3, 1}, {1, 2, 3})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3, 2));
  EXPECT_THAT(Values<int32_t>((*out)[0]),
              ElementsAre(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
  out = RunOp(R"pb(type: "expand"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "y" }
                   attrs {
                     name: "shape"
                     ints { values: [ 2, 3 ] }
                   })pb",
              {{"x", MakeTensor<bool>({3}, {true, false, true})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<bool>((*out)[0]),
              ElementsAre(true, false, true, true, false, true));
  // A scalar fills the whole shape.
  out = RunOp(R"pb(type: "expand"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "y" }
                   attrs {
                     name: "shape"
                     ints { values: [ 2, 2 ] }
                   })pb",
              {{"x", MakeTensor<double>({}, {7})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(7, 7, 7, 7));
}

TEST(ExpandTest, ShapeKnownAtPrepareEvenIfInputIsNot) {
  auto info = InferAtPrepare(R"pb(type: "expand"
                                  inputs { slot: "X" vars: "x" }
                                  outputs { slot: "Out" vars: "y" }
                                  attrs {
                                    name: "shape"
                                    i64s { values: [ 4, 3 ] }
                                  })pb",
                             {{"x", kFloat32, {-1}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(4, 3));
}

TEST(ExpandTest, ErrorsNameOpAndVariable) {
  const Tensor x = MakeTensor<float>({2, 3}, std::vector<float>(6));
  absl::Status status = PrepareOp(R"pb(type: "expand"
                                       inputs { slot: "X" vars: "x" }
                                       outputs { slot: "Out" vars: "y" }
                                       attrs {
                                         name: "shape"
                                         i64s { values: [ 2, 4 ] }
                                       })pb",
                                  {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (expand): cannot expand input \"X\" (variable "
                        "\"x\") of shape [2, 3] to attribute \"shape\" = [2, "
                        "4]: dim 1 is 3, expected 1 or 4"));
  status = PrepareOp(R"pb(type: "expand"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "shape"
                            i64s { values: [ 3 ] }
                          })pb",
                     {{"x", x}});
  // A target with fewer dims broadcasts both ways, as ONNX's Expand does.
  EXPECT_TRUE(status.ok()) << status;
}

TEST(TileTest, RepeatsAlignedToTheRight) {
  const Tensor x = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  auto out = RunOp(R"pb(type: "tile"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "y" }
                        attrs {
                          name: "repeat_times"
                          ints { values: [ 2, 1 ] }
                        })pb",
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(4, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3, 4, 1, 2, 3, 4));
  out = RunOp(R"pb(type: "tile"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "y" }
                   attrs {
                     name: "repeat_times"
                     ints { values: [ 2 ] }
                   })pb",
              {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 4));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 1, 2, 3, 4, 3, 4));
  out = RunOp(R"pb(type: "tile"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "y" }
                   attrs {
                     name: "repeat_times"
                     ints { values: [ 2, 1, 2 ] }
                   })pb",
              {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2, 4));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4));
  out = RunOp(R"pb(type: "tile"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "y" }
                   attrs {
                     name: "repeat_times"
                     ints { values: [ 0, 1 ] }
                   })pb",
              {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(0, 2));
}

TEST(TileTest, OtherDtypesAndUnknownDims) {
  auto out = RunOp(R"pb(type: "tile"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "y" }
                        attrs {
                          name: "repeat_times"
                          ints { values: [ 3 ] }
                        })pb",
                   {{"x", MakeTensor<int64_t>({2}, {5, -5})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(5, -5, 5, -5, 5, -5));
  auto info = InferAtPrepare(R"pb(type: "tile"
                                  inputs { slot: "X" vars: "x" }
                                  outputs { slot: "Out" vars: "y" }
                                  attrs {
                                    name: "repeat_times"
                                    ints { values: [ 2, 3 ] }
                                  })pb",
                             {{"x", kFloat32, {-1, 4}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 12));
  absl::Status status = PrepareOp(R"pb(type: "tile"
                                       inputs { slot: "X" vars: "x" }
                                       outputs { slot: "Out" vars: "y" }
                                       attrs {
                                         name: "repeat_times"
                                         ints { values: [ -1 ] }
                                       })pb",
                                  {{"x", MakeTensor<float>({2}, {1, 2})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (tile): attribute \"repeat_times\" must be "
                        "non-negative, got -1"));
}

TEST(TileTest, SizesBeyondInt64AreErrors) {
  const std::string op = R"pb(type: "tile"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "y" }
                              attrs {
                                name: "repeat_times"
                                ints { values: [ 1, 4 ] }
                              })pb";
  EXPECT_THAT(
      InferAtPrepare(op, {{"x", kFloat32, {4611686018427387904}}}, "y")
          .status()
          .message(),
      HasSubstr("op 0 (tile): attribute \"repeat_times\" = [1, 4] repeats "
                "input \"X\" (variable \"x\") of shape [4611686018427387904] "
                "to more elements in a dim than int64 holds"));
  auto y = InferAtPrepare(op, {{"x", kFloat32, {2305843009213693951}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(1, 9223372036854775804));
}

TEST(ExpandTest, SizesBeyondInt64AreErrors) {
  EXPECT_THAT(InferAtPrepare(R"pb(type: "expand"
                                  inputs { slot: "X" vars: "x" }
                                  outputs { slot: "Out" vars: "y" }
                                  attrs {
                                    name: "shape"
                                    i64s { values: [ 4611686018427387904, 4 ] }
                                  })pb",
                             {{"x", kFloat32, {1}}}, "y")
                  .status()
                  .message(),
              HasSubstr("op 0 (expand): cannot expand input \"X\" (variable "
                        "\"x\") of shape [1] to attribute \"shape\" = "
                        "[4611686018427387904, 4]: more elements than int64 "
                        "holds"));
}

// Input "Shape" (int32 or int64) gives expand's target in place of the
// attribute; the two broadcast both ways, as ONNX's Expand.
TEST(ExpandTest, ShapeInput) {
  const std::string op = R"pb(type: "expand"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Shape" vars: "s" }
                              outputs { slot: "Out" vars: "y" })pb";
  const Tensor x = MakeTensor<float>({3, 1}, {1, 2, 3});
  // A 1 in the shape keeps X's 3.
  auto out =
      RunOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({3}, {2, 1, 2})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3, 2));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
  // Fewer dims than X.
  out = RunOp(op, {{"x", x}, {"s", MakeTensor<int32_t>({1}, {2})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 1, 2, 2, 3, 3));
  // At Prepare X's dims above 1 stay known.
  auto info =
      InferAtPrepare(op, {{"x", kFloat32, {3, 1}}, {"s", kInt64, {3}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 3, -1));
  out = RunOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({2}, {-1, 2})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (expand): input \"Shape\" (variable \"s\") = "
                        "[-1, 2]: expected dims >= 0, got -1, to expand input "
                        "\"X\" (variable \"x\") of shape [3, 1]"));
  out = RunOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({2}, {2, 4})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (expand): cannot expand input \"X\" (variable "
                        "\"x\") of shape [3, 1] to input \"Shape\" (variable "
                        "\"s\") = [2, 4]: dim 0 is 3, expected 1 or 2"));
}

// expand_grad checks Out@GRAD at Prepare against every dim of X other
// than 1, even while the target's values are unknown.
TEST(ExpandTest, GradChecksOutGradAtPrepare) {
  absl::Status status =
      PrepareOp(R"pb(type: "expand_grad"
                     inputs { slot: "X" vars: "x" }
                     inputs { slot: "Out@GRAD" vars: "g" }
                     inputs { slot: "Shape" vars: "s" }
                     outputs { slot: "X@GRAD" vars: "dx" })pb",
                {{"x", MakeTensor<float>({2, 0}, {})},
                 {"g", MakeTensor<float>({2, 5}, std::vector<float>(10))},
                 {"s", MakeTensor<int64_t>({2}, {2, 5})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (expand_grad): input \"Out@GRAD\" (variable "
                        "\"g\") of shape [2, 5] does not match the forward "
                        "output's shape [2, 0]"));
}

// Input "RepeatTimes" (int32 or int64) replaces attribute "repeat_times".
TEST(TileTest, RepeatTimesInput) {
  const std::string op = R"pb(type: "tile"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "RepeatTimes" vars: "r" }
                              outputs { slot: "Out" vars: "y" })pb";
  const Tensor x = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  auto out =
      RunOp(op, {{"x", x}, {"r", MakeTensor<int64_t>({2}, {2, 1})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(4, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3, 4, 1, 2, 3, 4));
  out =
      RunOp(op, {{"x", x}, {"r", MakeTensor<int32_t>({3}, {2, 1, 2})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2, 4));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4));
  auto info =
      InferAtPrepare(op, {{"x", kFloat32, {5, 2, 2}}, {"r", kInt64, {2}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(5, -1, -1));
  out = RunOp(op, {{"x", x}, {"r", MakeTensor<int64_t>({2}, {1, -1})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (tile): input \"RepeatTimes\" (variable \"r\") = "
                        "[1, -1]: expected repeats >= 0, got -1"));
}

TEST(TileTest, GradKernelChecksOutGrad) {
  auto out = RunOp(R"pb(type: "tile_grad"
                        inputs { slot: "X" vars: "x" }
                        inputs { slot: "Out@GRAD" vars: "g" }
                        inputs { slot: "RepeatTimes" vars: "r" }
                        outputs { slot: "X@GRAD" vars: "dx" })pb",
                   {{"x", MakeTensor<float>({2}, {1, 2})},
                    {"g", MakeTensor<float>({4}, {1, 2, 3, 4})},
                    {"r", MakeTensor<int64_t>({1}, {3})}},
                   {"dx"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (tile_grad): input \"RepeatTimes\" (variable "
                        "\"r\") = [3] tiles X's shape [2], but \"Out@GRAD\" "
                        "has shape [4]"));
}

}  // namespace
}  // namespace scopeflow
