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

TEST(ReshapeTest, ZeroCopiesDimAndMinusOneIsInferred) {
  Tensor x = MakeTensor<float>({2, 3, 4}, std::vector<float>(24, 1.5f));
  auto out = RunOp(R"pb(type: "reshape"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "y" }
                        attrs {
                          name: "shape"
                          i64s { values: [ 0, -1, 2 ] }
                        })pb",
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 6, 2));
  // A view: no copy.
  EXPECT_TRUE((*out)[0].SharesBufferWith(x));
}

TEST(ReshapeTest, KeepsElementOrderForEveryDtype) {
  const std::string op = R"pb(type: "reshape"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "y" }
                              attrs {
                                name: "shape"
                                ints { values: [ 3, 2 ] }
                              })pb";
  auto i64 = RunOp(op, {{"x", MakeTensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6})}},
                   {"y"});
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_THAT((*i64)[0].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<int64_t>((*i64)[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  auto b = RunOp(
      op,
      {{"x", MakeTensor<bool>({6}, {true, false, true, true, false, false})}},
      {"y"});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)[0].dtype(), kBool);
  EXPECT_THAT(Values<bool>((*b)[0]),
              ElementsAre(true, false, true, true, false, false));
  auto f64 =
      RunOp(op, {{"x", MakeTensor<double>({1, 6}, {0, 1, 2, 3, 4, 5})}}, {"y"});
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_THAT(Values<double>((*f64)[0]), ElementsAre(0, 1, 2, 3, 4, 5));
  auto i32 = RunOp(op, {{"x", MakeTensor<int32_t>({6, 1}, {6, 5, 4, 3, 2, 1})}},
                   {"y"});
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(Values<int32_t>((*i32)[0]), ElementsAre(6, 5, 4, 3, 2, 1));
}

TEST(ReshapeTest, UnknownDimsAtPrepare) {
  const std::string op = R"pb(type: "reshape"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "y" }
                              attrs {
                                name: "shape"
                                i64s { values: [ 0, -1 ] }
                              })pb";
  // The batch dim is unknown: 0 copies it, -1 cannot be inferred yet.
  auto info = InferAtPrepare(op, {{"x", kFloat32, {-1, 3, 4}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->has_dims);
  EXPECT_THAT(info->dims, ElementsAre(-1, -1));
  // Unknown rank: the output still has the attribute's rank.
  info = InferAtPrepare(op, {{"x", kFloat32, {}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, -1));
  // At run time every dim is known.
  auto out = RunDeclared(
      op, {{"x", kFloat32, {-1, 3, 4}}},
      {{"x", MakeTensor<float>({2, 3, 4}, std::vector<float>(24))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 12));
}

TEST(ReshapeTest, ElementCountsThatDifferNameOpAndVariable) {
  absl::Status status = PrepareOp(
      R"pb(type: "reshape"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "y" }
           attrs {
             name: "shape"
             i64s { values: [ 4, 2 ] }
           })pb",
      {{"x", MakeTensor<float>({2, 3}, std::vector<float>(6))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (reshape): cannot reshape input \"X\" (variable "
                        "\"x\") of shape [2, 3] (6 elements) to [4, 2] (8 "
                        "elements): the element counts differ"));
  status = PrepareOp(
      R"pb(type: "reshape"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "y" }
           attrs {
             name: "shape"
             i64s { values: [ -1, 4 ] }
           })pb",
      {{"x", MakeTensor<float>({2, 3}, std::vector<float>(6))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (reshape): cannot reshape input \"X\" (variable "
                        "\"x\") of shape [2, 3] (6 elements) to attribute "
                        "\"shape\" = [-1, 4]: 6 is not a multiple of 4"));
}

TEST(ReshapeTest, RunTimeCountMismatchNamesOpAndVariable) {
  // Unknown at Prepare, wrong at Run: the second inference catches it.
  auto out = RunDeclared(R"pb(type: "reshape"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "y" }
                              attrs {
                                name: "shape"
                                i64s { values: [ 5 ] }
                              })pb",
                         {{"x", kFloat32, {-1}}},
                         {{"x", MakeTensor<float>({4}, {1, 2, 3, 4})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (reshape): cannot reshape input \"X\" (variable "
                        "\"x\") of shape [4] (4 elements) to [5]"));
}

TEST(ReshapeTest, BadShapeAttribute) {
  const Tensor x = MakeTensor<float>({2, 3}, std::vector<float>(6));
  absl::Status status = PrepareOp(R"pb(type: "reshape"
                                       inputs { slot: "X" vars: "x" }
                                       outputs { slot: "Out" vars: "y" }
                                       attrs {
                                         name: "shape"
                                         i64s { values: [ -1, -1 ] }
                                       })pb",
                                  {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (reshape): attribute \"shape\" may hold at most "
                        "one -1, got [-1, -1]"));
  status = PrepareOp(R"pb(type: "reshape"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "shape"
                            i64s { values: [ 6, -3 ] }
                          })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("attribute \"shape\" must hold dims >= -1, got -3"));
  status = PrepareOp(R"pb(type: "reshape"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "shape"
                            i64s { values: [ 1, 1, 0 ] }
                          })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (reshape): attribute \"shape\" = [1, 1, 0] "
                        "copies dim 2 (a 0) from input \"X\" (variable \"x\") "
                        "of shape [2, 3], which has no such dim"));
  status = PrepareOp(R"pb(type: "reshape"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "shape"
                            i64s { values: [ -1, 0 ] }
                          })pb",
                     {{"x", MakeTensor<float>({2, 0}, {})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (reshape): attribute \"shape\" = [-1, 0] cannot "
                        "infer its -1: the other dims hold 0 elements, for "
                        "input \"X\" (variable \"x\")"));
}

TEST(FlattenTest, DefaultAxisAndNegativeAxis) {
  const Tensor x =
      MakeTensor<int32_t>({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto out = RunOp(R"pb(type: "flatten"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "y" })pb",
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 6));
  EXPECT_TRUE((*out)[0].SharesBufferWith(x));
  EXPECT_THAT(Values<int32_t>((*out)[0]),
              ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
  out = RunOp(R"pb(type: "flatten"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "y" }
                   attrs { name: "axis" i: -1 })pb",
              {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(6, 2));
  out = RunOp(R"pb(type: "flatten"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "y" }
                   attrs { name: "axis" i: 0 })pb",
              {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 12));
  out = RunOp(R"pb(type: "flatten"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "y" }
                   attrs { name: "axis" i: 3 })pb",
              {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(12, 1));
}

TEST(FlattenTest, UnknownDimsAndBadAxis) {
  const std::string op = R"pb(type: "flatten"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "y" }
                              attrs { name: "axis" i: 1 })pb";
  auto info = InferAtPrepare(op, {{"x", kFloat32, {-1, 3, 4}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 12));
  info = InferAtPrepare(op, {{"x", kFloat32, {}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, -1));
  absl::Status status =
      PrepareOp(R"pb(type: "flatten"
                     inputs { slot: "X" vars: "x" }
                     outputs { slot: "Out" vars: "y" }
                     attrs { name: "axis" i: 4 })pb",
                {{"x", MakeTensor<float>({2, 3, 4}, std::vector<float>(24))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (flatten): attribute \"axis\" = 4 is out of "
                        "range for input \"X\" (variable \"x\") of shape [2, "
                        "3, 4] (expected [-3, 3])"));
}

TEST(SqueezeTest, AllOnesOrGivenAxes) {
  const Tensor x = MakeTensor<float>({1, 3, 1, 2}, {1, 2, 3, 4, 5, 6});
  auto out = RunOp(R"pb(type: "squeeze"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "y" })pb",
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 2));
  EXPECT_TRUE((*out)[0].SharesBufferWith(x));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  out = RunOp(R"pb(type: "squeeze"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "y" }
                   attrs {
                     name: "axes"
                     ints { values: [ -2 ] }
                   })pb",
              {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 3, 2));
}

TEST(SqueezeTest, UnknownDimsAtPrepare) {
  // With no axes, which dims go depends on the unknown one.
  auto info = InferAtPrepare(R"pb(type: "squeeze"
                                  inputs { slot: "X" vars: "x" }
                                  outputs { slot: "Out" vars: "y" })pb",
                             {{"x", kFloat32, {-1, 1, 3}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->has_dims);
  EXPECT_EQ(info->dtype, kFloat32);
  // With axes, an unknown dim is taken as 1 until run time.
  const std::string op = R"pb(type: "squeeze"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "y" }
                              attrs {
                                name: "axes"
                                ints { values: [ 0 ] }
                              })pb";
  info = InferAtPrepare(op, {{"x", kFloat32, {-1, 3}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(3));
  auto out = RunDeclared(
      op, {{"x", kFloat32, {-1, 3}}},
      {{"x", MakeTensor<float>({2, 3}, std::vector<float>(6))}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (squeeze): cannot squeeze axis 0 of input \"X\" "
                        "(variable \"x\") of shape [2, 3]: its size is 2, "
                        "expected 1"));
}

TEST(SqueezeTest, NonOneDimNamesOpAndVariable) {
  absl::Status status = PrepareOp(
      R"pb(type: "squeeze"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "y" }
           attrs {
             name: "axes"
             ints { values: [ 1 ] }
           })pb",
      {{"x", MakeTensor<float>({1, 3}, {1, 2, 3})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (squeeze): cannot squeeze axis 1 of input \"X\" "
                        "(variable \"x\") of shape [1, 3]: its size is 3, "
                        "expected 1"));
  status = PrepareOp(R"pb(type: "squeeze"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "axes"
                            ints { values: [ 2 ] }
                          })pb",
                     {{"x", MakeTensor<float>({1, 3}, {1, 2, 3})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (squeeze): attribute \"axes\" = [2]: axis 2 is "
                        "out of range for rank 2 (expected [-2, 2)), for input "
                        "\"X\" "
                        "(variable \"x\") of shape [1, 3]"));
}

TEST(UnsqueezeTest, AxesIndexTheOutput) {
  const Tensor x = MakeTensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunOp(R"pb(type: "unsqueeze"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "y" }
                        attrs {
                          name: "axes"
                          ints { values: [ 0, -1 ] }
                        })pb",
                   {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 3, 1));
  EXPECT_TRUE((*out)[0].SharesBufferWith(x));
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  out = RunOp(R"pb(type: "unsqueeze"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "y" }
                   attrs {
                     name: "axes"
                     ints { values: [ 1, 3 ] }
                   })pb",
              {{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 1, 3, 1));
  auto info = InferAtPrepare(R"pb(type: "unsqueeze"
                                  inputs { slot: "X" vars: "x" }
                                  outputs { slot: "Out" vars: "y" }
                                  attrs {
                                    name: "axes"
                                    ints { values: [ 1 ] }
                                  })pb",
                             {{"x", kFloat32, {-1, 5}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 1, 5));
}

TEST(UnsqueezeTest, Errors) {
  const Tensor x = MakeTensor<float>({2}, {1, 2});
  absl::Status status = PrepareOp(R"pb(type: "unsqueeze"
                                       inputs { slot: "X" vars: "x" }
                                       outputs { slot: "Out" vars: "y" })pb",
                                  {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (unsqueeze): no axes to insert: expected "
                        "attribute \"axes\" or input \"Axes\", for input "
                        "\"X\" (variable \"x\")"));
  status = PrepareOp(R"pb(type: "unsqueeze"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "axes"
                            ints { values: [ 0, -3 ] }
                          })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (unsqueeze): attribute \"axes\" = [0, -3] names "
                        "axis 0 twice (expected distinct axes), for input "
                        "\"X\" (variable \"x\") of shape [2]"));
  status = PrepareOp(R"pb(type: "unsqueeze"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "axes"
                            ints { values: [ 2 ] }
                          })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (unsqueeze): attribute \"axes\" = [2]: axis 2 "
                        "is out of range for rank 2 (expected [-2, 2)), for "
                        "input \"X\" "
                        "(variable \"x\")"));
}

TEST(ShapeTest, DimsAsInt64ForAnyDtype) {
  auto out = RunOp(R"pb(type: "shape"
                        inputs { slot: "X" vars: "x" }
                        outputs { slot: "Out" vars: "s" })pb",
                   {{"x", MakeTensor<bool>({2, 0, 5}, {})}}, {"s"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kInt64);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3));
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(2, 0, 5));
  out = RunOp(R"pb(type: "shape"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "s" })pb",
              {{"x", MakeTensor<uint8_t>({4}, {1, 2, 3, 4})}}, {"s"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(4));
  // A scalar has rank 0: an empty shape.
  out = RunOp(R"pb(type: "shape"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "s" })pb",
              {{"x", MakeTensor<double>({}, {3.0})}}, {"s"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(0));
  auto info = InferAtPrepare(R"pb(type: "shape"
                                  inputs { slot: "X" vars: "x" }
                                  outputs { slot: "Out" vars: "s" })pb",
                             {{"x", kFloat32, {}}}, "s");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->dtype, kInt64);
  EXPECT_THAT(info->dims, ElementsAre(-1));
}

// Sizes near the int64 limit are errors, not overflows: the "shape"
// attribute's product, and (where no Prepare checked the declaration) X's
// element count.
TEST(ReshapeTest, ElementCountsBeyondInt64AreErrors) {
  auto y = InferAtPrepare(R"pb(type: "reshape"
                               inputs { slot: "X" vars: "x" }
                               outputs { slot: "Out" vars: "y" }
                               attrs {
                                 name: "shape"
                                 i64s { values: [ 805306367, 53687091188 ] }
                               })pb",
                          {{"x", kFloat32, {-1}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("op 0 (reshape): attribute \"shape\""));
  EXPECT_THAT(y.status().message(),
              HasSubstr("makes a shape [805306367, 53687091188] of more "
                        "elements than int64 holds"));
  // A 0 copies X's dim, which the others then multiply.
  y = InferAtPrepare(R"pb(type: "reshape"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "y" }
                          attrs {
                            name: "shape"
                            i64s { values: [ 0, 4 ] }
                          })pb",
                     {{"x", kFloat32, {4611686018427387904, 1}}}, "y");
  EXPECT_THAT(y.status().message(),
              HasSubstr("makes a shape [4611686018427387904, 4] of more "
                        "elements than int64 holds"));
  const std::string to_row = R"pb(type: "reshape"
                                  inputs { slot: "X" vars: "x" }
                                  outputs { slot: "Out" vars: "y" }
                                  attrs {
                                    name: "shape"
                                    i64s { values: [ -1 ] }
                                  })pb";
  EXPECT_THAT(
      InferAlone(to_row, {{"x", kFloat64, {922337203685477580, 64}}}, "y")
          .status()
          .message(),
      HasSubstr("input \"X\" (variable \"x\", shape [922337203685477580, 64]) "
                "has more elements than int64 holds"));
  auto row =
      InferAtPrepare(to_row, {{"x", kFloat64, {4611686018427387903, 2}}}, "y");
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_THAT(row->dims, ElementsAre(9223372036854775806));
}

TEST(FlattenTest, ElementCountsBeyondInt64AreErrors) {
  const std::string op = R"pb(type: "flatten"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "y" }
                              attrs { name: "axis" i: 0 })pb";
  EXPECT_THAT(
      InferAlone(op, {{"x", kFloat32, {4611686018427387904, 4}}}, "y")
          .status()
          .message(),
      HasSubstr("input \"X\" (variable \"x\") of shape [4611686018427387904, "
                "4] has more elements than int64 holds: it cannot flatten at "
                "attribute \"axis\" = 0"));
  // A 0 makes the count 0 whatever the other dims.
  auto y = InferAlone(op, {{"x", kFloat32, {4611686018427387904, 4, 0}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(1, 0));
}

// Input "Shape" (int32 or int64) replaces attribute "shape", which it wins
// over; 0 and -1 mean what they mean in the attribute.
TEST(ReshapeTest, ShapeInputWinsOverTheAttribute) {
  const std::string op = R"pb(type: "reshape"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Shape" vars: "s" }
                              outputs { slot: "Out" vars: "y" }
                              attrs {
                                name: "shape"
                                i64s { values: [ 24 ] }
                              })pb";
  std::vector<float> values(24);
  for (int i = 0; i < 24; ++i) values[i] = static_cast<float>(i);
  const Tensor x = MakeTensor<float>({2, 3, 4}, values);
  auto out =
      RunOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({3}, {4, -1, 3})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(4, 2, 3));
  EXPECT_EQ(Values<float>((*out)[0]), values);
  out = RunOp(op, {{"x", x}, {"s", MakeTensor<int32_t>({2}, {0, 12})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 12));
  // An empty shape makes a scalar of a one-element X.
  out = RunOp(op,
              {{"x", MakeTensor<float>({1, 1}, {5})},
               {"s", MakeTensor<int64_t>({0}, {})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].dims().empty());
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(5));
}

TEST(ReshapeTest, ShapeInputAtPrepareGivesTheRankOnly) {
  const std::string op = R"pb(type: "reshape"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Shape" vars: "s" }
                              outputs { slot: "Out" vars: "y" })pb";
  auto info =
      InferAtPrepare(op, {{"x", kFloat32, {2, 3}}, {"s", kInt64, {3}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->has_dims);
  EXPECT_THAT(info->dims, ElementsAre(-1, -1, -1));
  info =
      InferAtPrepare(op, {{"x", kFloat32, {2, 3}}, {"s", kInt32, {-1}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->has_dims);
  EXPECT_EQ(info->dtype, kFloat32);
}

// With "allowzero" (ONNX's), a 0 is a dim of size 0 rather than a copy of
// X's dim.
TEST(ReshapeTest, AllowZeroMakesEmptyDims) {
  const std::string op = R"pb(type: "reshape"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Shape" vars: "s" }
                              outputs { slot: "Out" vars: "y" }
                              attrs { name: "allowzero" b: true })pb";
  const Tensor empty = MakeTensor<float>({0, 3, 4}, {});
  auto out = RunOp(
      op, {{"x", empty}, {"s", MakeTensor<int64_t>({3}, {3, 4, 0})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 4, 0));
  // Without it the 0 copies X's dim 2 (4): 48 elements, not 0.
  const std::string copying = R"pb(type: "reshape"
                                   inputs { slot: "X" vars: "x" }
                                   inputs { slot: "Shape" vars: "s" }
                                   outputs { slot: "Out" vars: "y" })pb";
  out =
      RunOp(copying, {{"x", empty}, {"s", MakeTensor<int64_t>({3}, {3, 4, 0})}},
            {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("to [3, 4, 4] (48 elements): the element counts "
                        "differ"));
  // The attribute form too.
  auto attr = RunOp(R"pb(type: "reshape"
                         inputs { slot: "X" vars: "x" }
                         outputs { slot: "Out" vars: "y" }
                         attrs { name: "allowzero" b: true }
                         attrs {
                           name: "shape"
                           i64s { values: [ 0, 5 ] }
                         })pb",
                    {{"x", MakeTensor<float>({2, 0}, {})}}, {"y"});
  ASSERT_TRUE(attr.ok()) << attr.status();
  EXPECT_THAT((*attr)[0].dims(), ElementsAre(0, 5));
  // A -1 beside a 0 could be any size.
  out = RunOp(op, {{"x", empty}, {"s", MakeTensor<int64_t>({2}, {0, -1})}},
              {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (reshape): input \"Shape\" (variable \"s\") = "
                        "[0, -1] holds both a 0 and a -1, but with attribute "
                        "\"allowzero\" a 0 is a dim of size 0"));
}

TEST(ReshapeTest, ShapeInputErrorsNameOpVariableAndExpectation) {
  const std::string op = R"pb(type: "reshape"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Shape" vars: "s" }
                              outputs { slot: "Out" vars: "y" })pb";
  const Tensor x = MakeTensor<float>({2, 3}, std::vector<float>(6));
  EXPECT_THAT(PrepareOp(op, {{"x", x}, {"s", MakeTensor<float>({2}, {3, 2})}})
                  .message(),
              HasSubstr("op 0 (reshape): input \"Shape\" (variable \"s\") has "
                        "dtype float32: expected int32 or int64"));
  EXPECT_THAT(
      PrepareOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({1, 2}, {3, 2})}})
          .message(),
      HasSubstr("op 0 (reshape): input \"Shape\" (variable \"s\") has shape "
                "[1, 2]: expected a 1-D list of integers"));
  auto out =
      RunOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({2}, {-2, -3})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (reshape): input \"Shape\" (variable \"s\") = "
                        "[-2, -3]: expected dims >= -1, got -2"));
  out = RunOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({2}, {-1, -1})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (reshape): input \"Shape\" (variable \"s\") = "
                        "[-1, -1]: expected at most one -1"));
  out = RunOp(op, {{"x", x}, {"s", MakeTensor<int32_t>({2}, {-1, 4})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (reshape): cannot reshape input \"X\" (variable "
                        "\"x\") of shape [2, 3] (6 elements) to input "
                        "\"Shape\" (variable \"s\") = [-1, 4]: 6 is not a "
                        "multiple of 4"));
}

// Errors show a long list's ends only.
TEST(ReshapeTest, LongShapeInputIsElidedInErrors) {
  std::vector<int64_t> shape(20, 1);
  shape.back() = -2;
  auto out = RunOp(R"pb(type: "reshape"
                        inputs { slot: "X" vars: "x" }
                        inputs { slot: "Shape" vars: "s" }
                        outputs { slot: "Out" vars: "y" })pb",
                   {{"x", MakeTensor<float>({1}, {1})},
                    {"s", MakeTensor<int64_t>({20}, shape)}},
                   {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (reshape): input \"Shape\" (variable \"s\") = "
                        "[1, 1, 1, 1, 1, 1, 1, 1, ... (4 more) ..., 1, 1, 1, "
                        "1, 1, 1, 1, -2]: expected dims >= -1, got -2"));
}

TEST(SqueezeTest, AxesInput) {
  const std::string op = R"pb(type: "squeeze"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Axes" vars: "a" }
                              outputs { slot: "Out" vars: "y" })pb";
  const Tensor x = MakeTensor<float>({1, 3, 1, 2}, {1, 2, 3, 4, 5, 6});
  auto out =
      RunOp(op, {{"x", x}, {"a", MakeTensor<int64_t>({2}, {0, -2})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  out = RunOp(op, {{"x", x}, {"a", MakeTensor<int32_t>({1}, {2})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 3, 2));
  // At Prepare: one dim fewer per axis.
  auto info = InferAtPrepare(
      op, {{"x", kFloat32, {1, 3, 1, 2}}, {"a", kInt64, {2}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, -1));
  out = RunOp(op, {{"x", x}, {"a", MakeTensor<int64_t>({1}, {4})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (squeeze): input \"Axes\" (variable \"a\") = "
                        "[4]: axis 4 is out of range for rank 4 (expected [-4, "
                        "4)), for input \"X\" (variable \"x\") of shape [1, 3, "
                        "1, 2]"));
  out = RunOp(op, {{"x", x}, {"a", MakeTensor<int64_t>({1}, {1})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (squeeze): cannot squeeze axis 1 of input \"X\" "
                        "(variable \"x\") of shape [1, 3, 1, 2]: its size is "
                        "3, expected 1"));
}

TEST(UnsqueezeTest, AxesInput) {
  const std::string op = R"pb(type: "unsqueeze"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Axes" vars: "a" }
                              outputs { slot: "Out" vars: "y" })pb";
  const Tensor x = MakeTensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out =
      RunOp(op, {{"x", x}, {"a", MakeTensor<int64_t>({2}, {3, 0})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 3, 1));
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  auto info =
      InferAtPrepare(op, {{"x", kInt64, {2, 3}}, {"a", kInt32, {3}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, -1, -1, -1, -1));
  out = RunOp(op, {{"x", x}, {"a", MakeTensor<int32_t>({2}, {1, -3})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (unsqueeze): input \"Axes\" (variable \"a\") = "
                        "[1, -3] names axis 1 twice (expected distinct axes)"));
  EXPECT_THAT(
      PrepareOp(op, {{"x", x}, {"a", MakeTensor<float>({1}, {0})}}).message(),
      HasSubstr("op 0 (unsqueeze): input \"Axes\" (variable \"a\") has dtype "
                "float32: expected int32 or int64"));
}

}  // namespace
}  // namespace scopeflow
