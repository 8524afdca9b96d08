#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]].
Tensor Matrix3x4() {
  return MakeTensor<float>({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

std::string SliceOp(const std::string& attrs) {
  return R"pb(type: "slice"
              inputs { slot: "X" vars: "x" }
              outputs { slot: "Out" vars: "y" })pb" +
         attrs;
}

TEST(SliceTest, NegativeAndClampedBounds) {
  // x[1:3, -3:100]
  auto out = RunOp(SliceOp(R"pb(attrs {
                                  name: "axes"
                                  ints { values: [ 0, 1 ] }
                                }
                                attrs {
                                  name: "starts"
                                  ints { values: [ 1, -3 ] }
                                }
                                attrs {
                                  name: "ends"
                                  ints { values: [ 3, 100 ] }
                                })pb"),
                   {{"x", Matrix3x4()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(5, 6, 7, 9, 10, 11));
  // x[5:10]: both clamp to 3, nothing left.
  out = RunOp(SliceOp(R"pb(attrs {
                             name: "axes"
                             ints { values: [ 0 ] }
                           }
                           attrs {
                             name: "starts"
                             ints { values: [ 5 ] }
                           }
                           attrs {
                             name: "ends"
                             ints { values: [ 10 ] }
                           })pb"),
              {{"x", Matrix3x4()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(0, 4));
}

TEST(SliceTest, Steps) {
  // x[:, -1:-100:-2]: columns 3 and 1.
  auto out = RunOp(SliceOp(R"pb(attrs {
                                  name: "axes"
                                  ints { values: [ 1 ] }
                                }
                                attrs {
                                  name: "starts"
                                  ints { values: [ -1 ] }
                                }
                                attrs {
                                  name: "ends"
                                  ints { values: [ -100 ] }
                                }
                                attrs {
                                  name: "steps"
                                  ints { values: [ -2 ] }
                                })pb"),
                   {{"x", Matrix3x4()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 1, 7, 5, 11, 9));
  // x[2:0:-1] along axis -2: rows 2 and 1.
  out = RunOp(SliceOp(R"pb(attrs {
                             name: "axes"
                             ints { values: [ -2 ] }
                           }
                           attrs {
                             name: "starts"
                             ints { values: [ 2 ] }
                           }
                           attrs {
                             name: "ends"
                             ints { values: [ 0 ] }
                           }
                           attrs {
                             name: "steps"
                             ints { values: [ -1 ] }
                           })pb"),
              {{"x", Matrix3x4()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 4));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(8, 9, 10, 11, 4, 5, 6, 7));
  // x[100:-100:-1]: the start clamps to the last row, the end to before
  // the first: every row, reversed.
  out = RunOp(SliceOp(R"pb(attrs {
                             name: "axes"
                             ints { values: [ 0 ] }
                           }
                           attrs {
                             name: "starts"
                             ints { values: [ 100 ] }
                           }
                           attrs {
                             name: "ends"
                             ints { values: [ -100 ] }
                           }
                           attrs {
                             name: "steps"
                             ints { values: [ -1 ] }
                           })pb"),
              {{"x", Matrix3x4()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
  // x[:, 0:4:3] on int64: columns 0 and 3.
  out = RunOp(SliceOp(R"pb(attrs {
                             name: "axes"
                             ints { values: [ 1 ] }
                           }
                           attrs {
                             name: "starts"
                             ints { values: [ 0 ] }
                           }
                           attrs {
                             name: "ends"
                             ints { values: [ 4 ] }
                           }
                           attrs {
                             name: "steps"
                             ints { values: [ 3 ] }
                           })pb"),
              {{"x", MakeTensor<int64_t>(
                         {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(0, 3, 4, 7, 8, 11));
}

TEST(SliceTest, ThreeDimsMatchIndexArithmetic) {
  // x[a][b][c] = 100a + 10b + c, dims [4, 5, 6]; x[3:0:-2, :, 1:6:2].
  std::vector<int64_t> values;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 5; ++b) {
      for (int c = 0; c < 6; ++c) values.push_back(100 * a + 10 * b + c);
    }
  }
  auto out = RunOp(SliceOp(R"pb(attrs {
                                  name: "axes"
                                  ints { values: [ 0, 2 ] }
                                }
                                attrs {
                                  name: "starts"
                                  ints { values: [ 3, 1 ] }
                                }
                                attrs {
                                  name: "ends"
                                  ints { values: [ 0, 6 ] }
                                }
                                attrs {
                                  name: "steps"
                                  ints { values: [ -2, 2 ] }
                                })pb"),
                   {{"x", MakeTensor<int64_t>({4, 5, 6}, values)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_THAT((*out)[0].dims(), ElementsAre(2, 5, 3));
  const std::vector<int64_t> got = Values<int64_t>((*out)[0]);
  int n = 0;
  for (int a : {3, 1}) {
    for (int b = 0; b < 5; ++b) {
      for (int c : {1, 3, 5}) EXPECT_EQ(got[n++], 100 * a + 10 * b + c);
    }
  }
}

TEST(SliceTest, UnknownDimsAtPrepare) {
  const std::string op = SliceOp(R"pb(attrs {
                                        name: "axes"
                                        ints { values: [ 0, 1 ] }
                                      }
                                      attrs {
                                        name: "starts"
                                        ints { values: [ 1, 1 ] }
                                      }
                                      attrs {
                                        name: "ends"
                                        ints { values: [ 3, 4 ] }
                                      })pb");
  auto info = InferAtPrepare(op, {{"x", kFloat32, {-1, 4}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 3));
  info = InferAtPrepare(op, {{"x", kFloat32, {}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->has_dims);
}

TEST(SliceTest, ErrorsNameOpAndVariable) {
  absl::Status status = PrepareOp(SliceOp(R"pb(attrs {
                                                 name: "axes"
                                                 ints { values: [ 0, 1 ] }
                                               }
                                               attrs {
                                                 name: "starts"
                                                 ints { values: [ 0 ] }
                                               }
                                               attrs {
                                                 name: "ends"
                                                 ints { values: [ 1, 1 ] }
                                               })pb"),
                                  {{"x", Matrix3x4()}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (slice): expected as many ends, axes (if any) "
                        "and steps (if any) as starts, got attribute "
                        "\"starts\" = [0], attribute \"ends\" = [1, 1], "
                        "attribute \"axes\" = [0, 1] and attribute \"steps\" "
                        "= [], for input \"X\" (variable \"x\") of shape "
                        "[3, 4]"));
  status = PrepareOp(SliceOp(R"pb(attrs {
                                    name: "axes"
                                    ints { values: [ 0 ] }
                                  }
                                  attrs {
                                    name: "starts"
                                    ints { values: [ 0 ] }
                                  }
                                  attrs {
                                    name: "ends"
                                    ints { values: [ 1 ] }
                                  }
                                  attrs {
                                    name: "steps"
                                    ints { values: [ 0 ] }
                                  })pb"),
                     {{"x", Matrix3x4()}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (slice): attribute \"steps\" = [0] holds a 0, "
                        "for input \"X\" (variable \"x\")"));
  status = PrepareOp(SliceOp(R"pb(attrs {
                                    name: "axes"
                                    ints { values: [ 1, -1 ] }
                                  }
                                  attrs {
                                    name: "starts"
                                    ints { values: [ 0, 0 ] }
                                  }
                                  attrs {
                                    name: "ends"
                                    ints { values: [ 1, 1 ] }
                                  })pb"),
                     {{"x", Matrix3x4()}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (slice): attribute \"axes\" = [1, -1] names "
                        "axis 1 twice (expected distinct axes), for input "
                        "\"X\" (variable \"x\")"));
  status = PrepareOp(SliceOp(R"pb(attrs {
                                    name: "axes"
                                    ints { values: [ 2 ] }
                                  }
                                  attrs {
                                    name: "starts"
                                    ints { values: [ 0 ] }
                                  }
                                  attrs {
                                    name: "ends"
                                    ints { values: [ 1 ] }
                                  })pb"),
                     {{"x", Matrix3x4()}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (slice): attribute \"axes\" = [2]: axis 2 is out "
                        "of range for rank 2 (expected [-2, 2)), for input "
                        "\"X\" "
                        "(variable \"x\")"));
}

std::string PadOp(const std::string& attrs) {
  return R"pb(type: "pad"
              inputs { slot: "X" vars: "x" }
              outputs { slot: "Out" vars: "y" })pb" +
         attrs;
}

TEST(PadTest, ConstantBorder) {
  auto out = RunOp(PadOp(R"pb(attrs {
                                name: "paddings"
                                ints { values: [ 1, 0, 0, 2 ] }
                              }
                              attrs { name: "pad_value" f: 9 })pb"),
                   {{"x", MakeTensor<float>({2, 2}, {1, 2, 3, 4})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 4));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9));
  // Default value 0.
  out = RunOp(PadOp(R"pb(attrs {
                           name: "paddings"
                           ints { values: [ 2, 1 ] }
                         })pb"),
              {{"x", MakeTensor<int32_t>({3}, {1, 2, 3})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(0, 0, 1, 2, 3, 0));
  out = RunOp(PadOp(R"pb(attrs {
                           name: "paddings"
                           ints { values: [ 0, 1, 1, 0 ] }
                         }
                         attrs { name: "pad_value" f: 1 })pb"),
              {{"x", MakeTensor<bool>({1, 1}, {false})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<bool>((*out)[0]), ElementsAre(true, false, true, true));
  out = RunOp(PadOp(R"pb(attrs {
                           name: "paddings"
                           ints { values: [ 1, 1 ] }
                         }
                         attrs { name: "pad_value" f: -2.5 })pb"),
              {{"x", MakeTensor<int64_t>({1}, {7})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(-2, 7, -2));
}

TEST(PadTest, UnknownDimsAtPrepare) {
  const std::string op = PadOp(R"pb(attrs {
                                      name: "paddings"
                                      ints { values: [ 1, 1, 0, 3 ] }
                                    })pb");
  auto info = InferAtPrepare(op, {{"x", kFloat64, {-1, 2}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 5));
  info = InferAtPrepare(op, {{"x", kFloat64, {}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, -1));
}

TEST(PadTest, ErrorsNameOpAndVariable) {
  const Tensor x = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  absl::Status status = PrepareOp(PadOp(R"pb(attrs {
                                               name: "paddings"
                                               ints { values: [ 1, 0, 1 ] }
                                             })pb"),
                                  {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pad): attribute \"paddings\" = [1, 0, 1] has "
                        "odd length 3: expected [before_0, after_0, before_1, "
                        "after_1, ...], two per dim of input \"X\" (variable "
                        "\"x\") of shape [2, 2]"));
  status = PrepareOp(PadOp(R"pb(attrs {
                                  name: "paddings"
                                  ints { values: [ 1, 1 ] }
                                })pb"),
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pad): attribute \"paddings\" = [1, 1] pads 1 "
                        "dims, but input \"X\" (variable \"x\") of shape [2, "
                        "2] has rank 2: expected 2 * rank = 4 entries"));
  status = PrepareOp(PadOp(R"pb(attrs {
                                  name: "paddings"
                                  ints { values: [ 1, 1, -1, 0 ] }
                                })pb"),
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (pad): attribute \"paddings\" must be "
                        "non-negative, got -1"));
  auto out = RunOp(PadOp(R"pb(attrs {
                                name: "paddings"
                                ints { values: [ 1, 1 ] }
                              }
                              attrs { name: "pad_value" f: 3e9 })pb"),
                   {{"x", MakeTensor<int32_t>({1}, {7})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (pad): attribute \"pad_value\" = 3e+09 does not "
                        "fit the dtype int32"));
}

// Slices of a dim near the int64 limit count exactly: their sizes always
// fit.
TEST(SliceTest, HugeDimsCountExactly) {
  auto y = InferAtPrepare(R"pb(type: "slice"
                               inputs { slot: "X" vars: "x" }
                               outputs { slot: "Out" vars: "y" }
                               attrs {
                                 name: "axes"
                                 ints { values: [ 0 ] }
                               }
                               attrs {
                                 name: "starts"
                                 ints { values: [ 0 ] }
                               }
                               attrs {
                                 name: "ends"
                                 ints { values: [ -1 ] }
                               }
                               attrs {
                                 name: "steps"
                                 ints { values: [ 3 ] }
                               })pb",
                          {{"x", kFloat32, {9223372036854775807}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  // len(range(0, 2^63 - 2, 3)).
  EXPECT_THAT(y->dims, ElementsAre(3074457345618258602));
  y = InferAtPrepare(R"pb(type: "slice"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "axes"
                            ints { values: [ 0 ] }
                          }
                          attrs {
                            name: "starts"
                            ints { values: [ -1 ] }
                          }
                          attrs {
                            name: "ends"
                            ints { values: [ 0 ] }
                          }
                          attrs {
                            name: "steps"
                            ints { values: [ -2147483647 ] }
                          })pb",
                     {{"x", kFloat32, {9223372036854775807}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  // len(range(2^63 - 2, 0, -(2^31 - 1))).
  EXPECT_THAT(y->dims, ElementsAre(4294967298));
}

TEST(PadTest, SizesBeyondInt64AreErrors) {
  const std::string op = R"pb(type: "pad"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "y" }
                              attrs {
                                name: "paddings"
                                ints { values: [ 1, 1 ] }
                              })pb";
  EXPECT_THAT(
      InferAtPrepare(op, {{"x", kFloat32, {9223372036854775807}}}, "y")
          .status()
          .message(),
      HasSubstr("op 0 (pad): attribute \"paddings\" = [1, 1] pads dim 0 of "
                "input \"X\" (variable \"x\") of shape [9223372036854775807] "
                "beyond the int64 limit"));
  auto y = InferAtPrepare(op, {{"x", kFloat32, {9223372036854775805}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(9223372036854775807));
}

// The op text of slice reading x and `inputs` (slot, variable pairs), then
// `attrs`.
std::string SliceWithInputs(
    const std::vector<std::pair<std::string, std::string>>& inputs,
    const std::string& attrs = "") {
  std::string text = R"pb(type: "slice"
                          inputs { slot: "X" vars: "x" })pb";
  for (const auto& [slot, var] : inputs) {
    text += " inputs { slot: \"" + slot + "\" vars: \"" + var + "\" }";
  }
  return text + R"pb(outputs { slot: "Out" vars: "y" })pb" + attrs;
}

Tensor Ints(const std::vector<int64_t>& values) {
  return MakeTensor<int64_t>({static_cast<int64_t>(values.size())}, values);
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(SliceTest, BoundsFromInputs) {
  // x[2:0:-1, -1::-2]: ONNX writes INT64_MIN for "to the start".
  auto out = RunOp(
      SliceWithInputs(
          {{"Starts", "s"}, {"Ends", "e"}, {"Axes", "a"}, {"Steps", "st"}}),
      {{"x", Matrix3x4()},
       {"s", Ints({2, -1})},
       {"e", Ints({0, kMin})},
       {"a", Ints({0, 1})},
       {"st", Ints({-1, -2})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(11, 9, 7, 5));
  // Starts from an int32 input, the rest from attributes: x[:, 1:3].
  out =
      RunOp(SliceWithInputs({{"Starts", "s"}}, R"pb(attrs {
                                                      name: "axes"
                                                      ints { values: [ 1 ] }
                                                    }
                                                    attrs {
                                                      name: "ends"
                                                      ints { values: [ 3 ] }
                                                    })pb"),
            {{"x", Matrix3x4()}, {"s", MakeTensor<int32_t>({1}, {1})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 5, 6, 9, 10));
  // No axes: the first len(starts) axes. x[1:].
  out =
      RunOp(SliceWithInputs({{"Starts", "s"}, {"Ends", "e"}}),
            {{"x", Matrix3x4()}, {"s", Ints({1})}, {"e", Ints({kMax})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 4));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(4, 5, 6, 7, 8, 9, 10, 11));
}

// Steps beyond the dim, up to the int64 limits, take one element.
TEST(SliceTest, HugeStepsFromInputs) {
  const std::string op = SliceWithInputs(
      {{"Starts", "s"}, {"Ends", "e"}, {"Axes", "a"}, {"Steps", "st"}});
  auto out = RunOp(op,
                   {{"x", Matrix3x4()},
                    {"s", Ints({0})},
                    {"e", Ints({kMax})},
                    {"a", Ints({1})},
                    {"st", Ints({kMax})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 1));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 4, 8));
  out = RunOp(op,
              {{"x", Matrix3x4()},
               {"s", Ints({-1})},
               {"e", Ints({kMin})},
               {"a", Ints({1})},
               {"st", Ints({kMin})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 7, 11));
}

TEST(SliceTest, InputsLeaveTheSlicedDimsUnknownAtPrepare) {
  auto info = InferAtPrepare(
      SliceWithInputs({{"Starts", "s"}}, R"pb(attrs {
                                                name: "axes"
                                                ints { values: [ 1 ] }
                                              }
                                              attrs {
                                                name: "ends"
                                                ints { values: [ 3 ] }
                                              })pb"),
      {{"x", kFloat32, {3, 4}}, {"s", kInt64, {1}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(3, -1));
  // No axes: the starts' length says which.
  info = InferAtPrepare(
      SliceWithInputs({{"Starts", "s"}, {"Ends", "e"}}),
      {{"x", kFloat32, {3, 4}}, {"s", kInt64, {1}}, {"e", kInt64, {1}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 4));
  info = InferAtPrepare(
      SliceWithInputs({{"Axes", "a"}}, R"pb(attrs {
                                              name: "starts"
                                              ints { values: [ 1 ] }
                                            }
                                            attrs {
                                              name: "ends"
                                              ints { values: [ 3 ] }
                                            })pb"),
      {{"x", kFloat32, {3, 4}}, {"a", kInt32, {1}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, -1));
}

TEST(SliceTest, InputErrorsNameOpVariableAndExpectation) {
  const std::string op = SliceWithInputs(
      {{"Starts", "s"}, {"Ends", "e"}, {"Axes", "a"}, {"Steps", "st"}});
  auto out = RunOp(op,
                   {{"x", Matrix3x4()},
                    {"s", Ints({0})},
                    {"e", Ints({2})},
                    {"a", Ints({1})},
                    {"st", Ints({0})}},
                   {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (slice): input \"Steps\" (variable \"st\") = [0] "
                        "holds a 0, for input \"X\" (variable \"x\") of shape "
                        "[3, 4]"));
  out =
      RunOp(SliceWithInputs({{"Starts", "s"}, {"Ends", "e"}}),
            {{"x", Matrix3x4()}, {"s", Ints({0, 1})}, {"e", Ints({2})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (slice): expected as many ends, axes (if any) "
                        "and steps (if any) as starts, got input \"Starts\" "
                        "(variable \"s\") = [0, 1], input \"Ends\" (variable "
                        "\"e\") = [2], attribute \"axes\" = [] and attribute "
                        "\"steps\" = [], for input \"X\" (variable \"x\") of "
                        "shape [3, 4]"));
  out = RunOp(op,
              {{"x", Matrix3x4()},
               {"s", Ints({0})},
               {"e", Ints({2})},
               {"a", Ints({-3})},
               {"st", Ints({1})}},
              {"y"});
  EXPECT_THAT(
      out.status().message(),
      HasSubstr("op 0 (slice): input \"Axes\" (variable \"a\") = [-3]: "
                "axis -3 is out of range for rank 2 (expected [-2, 2))"));
  EXPECT_THAT(
      PrepareOp(SliceWithInputs({{"Starts", "s"}}),
                {{"x", Matrix3x4()}, {"s", MakeTensor<float>({1}, {0})}})
          .message(),
      HasSubstr("op 0 (slice): input \"Starts\" (variable \"s\") has "
                "dtype float32: expected int32 or int64"));
}

// slice_grad reads the inputs again; its shapes were all known at Prepare,
// so it runs without inference, and its kernel checks Out@GRAD against the
// slice.
TEST(SliceTest, GradKernelChecksTheSliceItIsGiven) {
  auto out = RunOp(R"pb(type: "slice_grad"
                        inputs { slot: "X" vars: "x" }
                        inputs { slot: "Out@GRAD" vars: "g" }
                        inputs { slot: "Starts" vars: "s" }
                        inputs { slot: "Ends" vars: "e" }
                        outputs { slot: "X@GRAD" vars: "dx" }
                        attrs {
                          name: "axes"
                          ints { values: [ 0 ] }
                        })pb",
                   {{"x", Matrix3x4()},
                    {"g", MakeTensor<float>({2, 4}, std::vector<float>(8))},
                    {"s", Ints({2})},
                    {"e", Ints({3})}},
                   {"dx"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (slice_grad): the slice of input \"X\" of shape "
                        "[3, 4] has shape [1, 4], but \"Out@GRAD\" has shape "
                        "[2, 4]"));
}

}  // namespace
}  // namespace scopeflow
