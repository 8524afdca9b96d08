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

TEST(ConcatTest, AlongMiddleAxis) {
  auto out =
      RunOp(R"pb(type: "concat"
                 inputs { slot: "X" vars: "a" vars: "b" }
                 outputs { slot: "Out" vars: "y" }
                 attrs { name: "axis" i: 1 })pb",
            {{"a", MakeTensor<float>({2, 1, 2}, {1, 2, 3, 4})},
             {"b", MakeTensor<float>({2, 2, 2}, {5, 6, 7, 8, 9, 10, 11, 12})}},
            {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3, 2));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12));
}

TEST(ConcatTest, NegativeAxisThreeInputsAndOtherDtypes) {
  auto out = RunOp(R"pb(type: "concat"
                        inputs { slot: "X" vars: "a" vars: "b" vars: "c" }
                        outputs { slot: "Out" vars: "y" }
                        attrs { name: "axis" i: -1 })pb",
                   {{"a", MakeTensor<int64_t>({2, 1}, {1, 2})},
                    {"b", MakeTensor<int64_t>({2, 2}, {3, 4, 5, 6})},
                    {"c", MakeTensor<int64_t>({2, 0}, {})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(1, 3, 4, 2, 5, 6));
  // Default axis 0.
  auto rows = RunOp(R"pb(type: "concat"
                         inputs { slot: "X" vars: "a" vars: "b" }
                         outputs { slot: "Out" vars: "y" })pb",
                    {{"a", MakeTensor<bool>({1, 2}, {true, false})},
                     {"b", MakeTensor<bool>({1, 2}, {false, true})}},
                    {"y"});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT((*rows)[0].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<bool>((*rows)[0]), ElementsAre(true, false, false, true));
}

TEST(ConcatTest, UnknownDimsAtPrepare) {
  const std::string op = R"pb(type: "concat"
                              inputs { slot: "X" vars: "a" vars: "b" }
                              outputs { slot: "Out" vars: "y" }
                              attrs { name: "axis" i: 1 })pb";
  auto info = InferAtPrepare(
      op, {{"a", kFloat32, {-1, 2}}, {"b", kFloat32, {4, 3}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  // The other dim comes from whichever input knows it.
  EXPECT_THAT(info->dims, ElementsAre(4, 5));
  info =
      InferAtPrepare(op, {{"a", kFloat32, {}}, {"b", kFloat32, {4, 3}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(4, -1));
  info = InferAtPrepare(op, {{"a", kFloat32, {}}, {"b", kFloat32, {}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->has_dims);
  EXPECT_EQ(info->dtype, kFloat32);
}

TEST(ConcatTest, MismatchesNameOpAndVariable) {
  const std::string op = R"pb(type: "concat"
                              inputs { slot: "X" vars: "a" vars: "b" }
                              outputs { slot: "Out" vars: "y" }
                              attrs { name: "axis" i: 1 })pb";
  absl::Status status =
      PrepareOp(op, {{"a", MakeTensor<float>({2, 3}, std::vector<float>(6))},
                     {"b", MakeTensor<float>({3, 3}, std::vector<float>(9))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (concat): input \"X\" (variable \"b\") of shape "
                        "[3, 3] has dim 0 = 3: expected 2 like the other "
                        "inputs (only axis 1 may differ)"));
  status = PrepareOp(
      op, {{"a", MakeTensor<float>({2, 3}, std::vector<float>(6))},
           {"b", MakeTensor<float>({2, 3, 1}, std::vector<float>(6))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (concat): input \"X\" (variable \"b\") of shape "
                        "[2, 3, 1] has rank 3: expected rank 2, that of input "
                        "\"X\" (variable \"a\")"));
  status = PrepareOp(
      op, {{"a", MakeTensor<float>({2, 3}, std::vector<float>(6))},
           {"b", MakeTensor<int32_t>({2, 3}, std::vector<int32_t>(6))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (concat): input \"X\" (variable \"b\") of shape "
                        "[2, 3] has dtype int32: expected float32, the dtype "
                        "of input \"X\" (variable \"a\")"));
  status = PrepareOp(R"pb(type: "concat"
                          inputs { slot: "X" vars: "a" }
                          outputs { slot: "Out" vars: "y" }
                          attrs { name: "axis" i: 2 })pb",
                     {{"a", MakeTensor<float>({2, 3}, std::vector<float>(6))}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (concat): attribute \"axis\" = 2 is out of "
                        "range for rank 2 (expected [-2, 2)), for input \"X\" "
                        "(variable \"a\")"));
}

TEST(SplitTest, EqualPartsAlongNegativeAxis) {
  auto out = RunOp(
      R"pb(type: "split"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "p" vars: "q" vars: "r" }
           attrs { name: "axis" i: -1 }
           attrs { name: "num" i: 3 })pb",
      {{"x",
        MakeTensor<float>({2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}},
      {"p", "q", "r"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 1, 6, 7));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(2, 3, 8, 9));
  EXPECT_THAT(Values<float>((*out)[2]), ElementsAre(4, 5, 10, 11));
}

TEST(SplitTest, SectionsWithMinusOne) {
  auto out = RunOp(
      R"pb(type: "split"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "p" vars: "q" vars: "r" }
           attrs { name: "axis" i: 1 }
           attrs {
             name: "sections"
             ints { values: [ 1, -1, 2 ] }
           })pb",
      {{"x",
        MakeTensor<int32_t>({2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})}},
      {"p", "q", "r"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 1));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 3));
  EXPECT_THAT((*out)[2].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAre(0, 6));
  EXPECT_THAT(Values<int32_t>((*out)[1]), ElementsAre(1, 2, 3, 7, 8, 9));
  EXPECT_THAT(Values<int32_t>((*out)[2]), ElementsAre(4, 5, 10, 11));
  // Along axis 0 (the default), with an empty part.
  out = RunOp(R"pb(type: "split"
                   inputs { slot: "X" vars: "x" }
                   outputs { slot: "Out" vars: "p" vars: "q" vars: "r" }
                   attrs {
                     name: "sections"
                     ints { values: [ 2, 0, 1 ] }
                   })pb",
              {{"x", MakeTensor<double>({3, 2}, {1, 2, 3, 4, 5, 6})}},
              {"p", "q", "r"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(0, 2));
  EXPECT_THAT(Values<double>((*out)[2]), ElementsAre(5, 6));
}

TEST(SplitTest, UnknownDimsAtPrepare) {
  const std::string op = R"pb(type: "split"
                              inputs { slot: "X" vars: "x" }
                              outputs { slot: "Out" vars: "p" vars: "q" }
                              attrs { name: "axis" i: 0 }
                              attrs {
                                name: "sections"
                                ints { values: [ 2, -1 ] }
                              })pb";
  auto p = InferAtPrepare(op, {{"x", kFloat32, {-1, 3}}}, "p");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->dims, ElementsAre(2, 3));
  auto q = InferAtPrepare(op, {{"x", kFloat32, {-1, 3}}}, "q");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_THAT(q->dims, ElementsAre(-1, 3));
  // X of unknown rank: every part, not only the first, has X's dtype.
  for (const char* part : {"p", "q"}) {
    auto unranked = InferAtPrepare(op, {{"x", kFloat32, {}}}, part);
    ASSERT_TRUE(unranked.ok()) << unranked.status();
    EXPECT_FALSE(unranked->has_dims);
    EXPECT_EQ(unranked->dtype, kFloat32) << part;
  }
  auto out = RunDeclared(
      op, {{"x", kFloat32, {-1, 3}}},
      {{"x", MakeTensor<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}},
      {"p", "q"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(7, 8, 9));
}

TEST(SplitTest, ErrorsNameOpAndVariable) {
  const Tensor x = MakeTensor<float>({2, 6}, std::vector<float>(12));
  absl::Status status = PrepareOp(
      R"pb(type: "split"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "a" vars: "b" vars: "c" vars: "d" }
           attrs { name: "axis" i: 1 }
           attrs { name: "num" i: 4 })pb",
      {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (split): attribute \"num\" = 4 does not divide "
                        "input \"X\" (variable \"x\") of shape [2, 6] into "
                        "equal parts along the axis (size 6)"));
  status = PrepareOp(R"pb(type: "split"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "a" vars: "b" }
                          attrs { name: "axis" i: 1 }
                          attrs {
                            name: "sections"
                            ints { values: [ 2, 3 ] }
                          })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (split): attribute \"sections\" = [2, 3] sums to "
                        "5, but the axis of input \"X\" (variable \"x\") of "
                        "shape [2, 6] has size 6"));
  status = PrepareOp(R"pb(type: "split"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "a" vars: "b" }
                          attrs { name: "axis" i: 1 }
                          attrs {
                            name: "sections"
                            ints { values: [ 7, -1 ] }
                          })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (split): attribute \"sections\" = [7, -1] sums "
                        "to 7, more than the size 6 of the axis of input \"X\" "
                        "(variable \"x\")"));
  status = PrepareOp(R"pb(type: "split"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "a" vars: "b" })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (split): expected exactly one of attributes "
                        "\"sections\" (sizes) and \"num\" (equal parts), got "
                        "neither, to split input \"X\" (variable \"x\")"));
  status = PrepareOp(R"pb(type: "split"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "a" vars: "b" }
                          attrs { name: "num" i: 3 })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (split): attribute \"num\" = 3, but output "
                        "\"Out\" has 2 variables, to split input \"X\" "
                        "(variable \"x\")"));
  status = PrepareOp(R"pb(type: "split"
                          inputs { slot: "X" vars: "x" }
                          outputs { slot: "Out" vars: "a" vars: "b" }
                          attrs {
                            name: "sections"
                            ints { values: [ -1, -1 ] }
                          })pb",
                     {{"x", x}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (split): attribute \"sections\" may hold at most "
                        "one -1, got [-1, -1]"));
}

TEST(ConcatTest, SizesBeyondInt64AreErrors) {
  const std::string op = R"pb(type: "concat"
                              inputs { slot: "X" vars: "a" vars: "b" }
                              outputs { slot: "Out" vars: "y" }
                              attrs { name: "axis" i: 0 })pb";
  EXPECT_THAT(
      InferAtPrepare(
          op, {{"a", kFloat32, {9223372036854775807}}, {"b", kFloat32, {1}}},
          "y")
          .status()
          .message(),
      HasSubstr("op 0 (concat): input \"X\" (variable \"b\") of shape "
                "[1] makes the inputs' sizes along attribute "
                "\"axis\" = 0 add up to more than int64 holds"));
  auto y = InferAtPrepare(
      op, {{"a", kFloat32, {9223372036854775806}}, {"b", kFloat32, {1}}}, "y");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->dims, ElementsAre(9223372036854775807));
}

// Input "Sections" (int32 or int64) gives the sizes in place of the
// attributes.
TEST(SplitTest, SectionsInput) {
  const std::string op = R"pb(type: "split"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Sections" vars: "s" }
                              outputs { slot: "Out" vars: "p" vars: "q" }
                              attrs { name: "axis" i: -1 })pb";
  const Tensor x = MakeTensor<float>({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto out = RunOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({2}, {1, 3})}},
                   {"p", "q"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 4));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(1, 2, 3, 5, 6, 7));
  // -1 is the rest; a part may be empty.
  out = RunOp(op, {{"x", x}, {"s", MakeTensor<int32_t>({2}, {-1, 0})}},
              {"p", "q"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 4));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 0));
  // At Prepare only the split axis is unknown.
  auto info =
      InferAtPrepare(op, {{"x", kFloat32, {2, 4}}, {"s", kInt64, {2}}}, "q");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(2, -1));
}

TEST(SplitTest, SectionsInputErrors) {
  const std::string op = R"pb(type: "split"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Sections" vars: "s" }
                              outputs { slot: "Out" vars: "p" vars: "q" })pb";
  const Tensor x = MakeTensor<float>({4}, {0, 1, 2, 3});
  auto out = RunOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({2}, {1, 2})}},
                   {"p", "q"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (split): input \"Sections\" (variable \"s\") = "
                        "[1, 2] sums to 3, but the axis of input \"X\" "
                        "(variable \"x\") of shape [4] has size 4"));
  out = RunOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({2}, {-1, -1})}},
              {"p", "q"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (split): input \"Sections\" (variable \"s\") = "
                        "[-1, -1]: expected sizes >= 0 and at most one -1"));
  EXPECT_THAT(
      PrepareOp(op, {{"x", x}, {"s", MakeTensor<int64_t>({3}, {1, 1, 2})}})
          .message(),
      HasSubstr("op 0 (split): input \"Sections\" (variable \"s\") holds 3 "
                "sizes, but output \"Out\" has 2 variables"));
  EXPECT_THAT(PrepareOp(op + R"pb(attrs { name: "num" i: 2 })pb",
                        {{"x", x}, {"s", MakeTensor<int64_t>({2}, {2, 2})}})
                  .message(),
              HasSubstr("op 0 (split): input \"Sections\" (variable \"s\") and "
                        "attribute \"num\" = 2 both say how to split"));
}

}  // namespace
}  // namespace scopeflow
