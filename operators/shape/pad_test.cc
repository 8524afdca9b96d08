// pad's edge, reflect and wrap modes (values against numpy's np.pad) and
// its tensor inputs Paddings and PadValue: values, gradients (hand-computed
// and numeric) and errors. Constant mode from attributes is tested in
// slice_pad_test.cc.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Attrs(const std::string& mode,
                  const std::vector<int32_t>& paddings) {
  return absl::StrCat("attrs { name: \"mode\" s: \"", mode,
                      "\" } attrs { name: \"paddings\" ints { values: [",
                      absl::StrJoin(paddings, ", "), "] } }");
}

std::string PadOp(const std::string& mode,
                  const std::vector<int32_t>& paddings) {
  return absl::StrCat(
      "type: \"pad\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"y\" } ",
      Attrs(mode, paddings));
}

std::string PadGradOp(const std::string& mode,
                      const std::vector<int32_t>& paddings) {
  return absl::StrCat(
      "type: \"pad_grad\" inputs { slot: \"Out@GRAD\" vars: \"g\" } outputs "
      "{ slot: \"X@GRAD\" vars: \"dx\" } ",
      Attrs(mode, paddings));
}

template <typename T>
absl::StatusOr<Tensor> Pad(const std::string& mode,
                           const std::vector<int32_t>& paddings, Dims dims,
                           const std::vector<T>& values) {
  auto out = RunOp(PadOp(mode, paddings),
                   {{"x", MakeTensor<T>(std::move(dims), values)}}, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(PadModeTest, EdgeRepeatsTheOuterElements) {
  // np.pad([[1, 2, 3], [4, 5, 6]], ((1, 0), (2, 1)), "edge").
  auto out = Pad<float>("edge", {1, 0, 2, 1}, {2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(3, 6));
  EXPECT_THAT(Values<float>(*out), ElementsAre(1, 1, 1, 2, 3, 3,  //
                                               1, 1, 1, 2, 3, 3,  //
                                               4, 4, 4, 5, 6, 6));
  // Every dtype of the op, bool included.
  auto flags = Pad<bool>("edge", {2, 1}, {2}, {true, false});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_THAT(Values<bool>(*flags),
              ElementsAre(true, true, true, false, false));
  auto ints = Pad<int64_t>("edge", {0, 2}, {1}, {-7});
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values<int64_t>(*ints), ElementsAre(-7, -7, -7));
}

TEST(PadModeTest, ReflectMirrorsWithoutTheEdge) {
  // np.pad([1, 2, 3], (2, 3), "reflect").
  auto out = Pad<double>("reflect", {2, 3}, {3}, {1, 2, 3});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>(*out), ElementsAre(3, 2, 1, 2, 3, 2, 1, 2));
  // Pads longer than the dim keep reflecting: np.pad([1, 2, 3], (5, 0),
  // "reflect").
  auto long_pad = Pad<int32_t>("reflect", {5, 0}, {3}, {1, 2, 3});
  ASSERT_TRUE(long_pad.ok()) << long_pad.status();
  EXPECT_THAT(Values<int32_t>(*long_pad), ElementsAre(2, 1, 2, 3, 2, 1, 2, 3));
  // A single element reflects onto itself.
  auto single = Pad<float>("reflect", {2, 1}, {1}, {7});
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_THAT(Values<float>(*single), ElementsAre(7, 7, 7, 7));
  // Two dims: rows, then columns, reflected.
  auto grid = Pad<float>("reflect", {1, 1, 1, 0}, {2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_THAT(grid->dims(), ElementsAre(4, 3));
  EXPECT_THAT(Values<float>(*grid),
              ElementsAre(4, 3, 4, 2, 1, 2, 4, 3, 4, 2, 1, 2));
}

TEST(PadModeTest, WrapContinuesFromTheOtherEnd) {
  // np.pad([1, 2, 3], (4, 2), "wrap").
  auto out = Pad<float>("wrap", {4, 2}, {3}, {1, 2, 3});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>(*out), ElementsAre(3, 1, 2, 3, 1, 2, 3, 1, 2));
  // Unpadded dims of size 0 give an empty output.
  auto empty = Pad<float>("wrap", {0, 0, 1, 1}, {0, 2}, {});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT(empty->dims(), ElementsAre(0, 4));
}

TEST(PadModeTest, ConstantIsTheDefaultMode) {
  auto out = RunOp(
      "type: \"pad\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"y\" } attrs { name: \"paddings\" ints { values: [1, "
      "1] } } attrs { name: \"pad_value\" f: 5 }",
      {{"x", MakeTensor<float>({1}, {2})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(5, 2, 5));
}

// Out@GRAD adds into each element of X once per copy of it in Out.
TEST(PadModeGradTest, BorderGradientsAccumulateIntoTheirSources) {
  const Tensor g = MakeTensor<float>({6}, {1, 2, 3, 4, 5, 6});
  // edge, (2, 1): Out = [a, a, a, b, c, c].
  auto edge = RunOp(PadGradOp("edge", {2, 1}), {{"g", g}}, {"dx"});
  ASSERT_TRUE(edge.ok()) << edge.status();
  EXPECT_THAT((*edge)[0].dims(), ElementsAre(3));
  EXPECT_THAT(Values<float>((*edge)[0]), ElementsAre(1 + 2 + 3, 4, 5 + 6));
  // reflect, (2, 1): Out = [c, b, a, b, c, b].
  auto reflect = RunOp(PadGradOp("reflect", {2, 1}), {{"g", g}}, {"dx"});
  ASSERT_TRUE(reflect.ok()) << reflect.status();
  EXPECT_THAT(Values<float>((*reflect)[0]), ElementsAre(3, 2 + 4 + 6, 1 + 5));
  // wrap, (1, 2): Out = [c, a, b, c, a, b].
  auto wrap = RunOp(PadGradOp("wrap", {1, 2}), {{"g", g}}, {"dx"});
  ASSERT_TRUE(wrap.ok()) << wrap.status();
  EXPECT_THAT(Values<float>((*wrap)[0]), ElementsAre(2 + 5, 3 + 6, 1 + 4));
  // Integers accumulate too: edge over [2, 1] padded (0, 1) and (1, 1).
  auto ints =
      RunOp(PadGradOp("edge", {0, 1, 1, 1}),
            {{"g", MakeTensor<int32_t>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}},
            {"dx"});
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT((*ints)[0].dims(), ElementsAre(2, 1));
  EXPECT_THAT(Values<int32_t>((*ints)[0]), ElementsAre(6, 15 + 24));
}

Tensor Random(const Dims& dims, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> values(NumElements(dims));
  for (double& v : values) v = dist(gen);
  return MakeTensor<double>(dims, values);
}

TEST(PadModeGradTest, MatchesCentralDifferences) {
  struct Case {
    std::string mode;
    std::vector<int32_t> paddings;
    Dims x;
  };
  const std::vector<Case> cases = {
      {"edge", {1, 2, 0, 3}, {2, 3}},
      {"reflect", {2, 1, 1, 2}, {3, 3}},
      {"reflect", {4, 0, 0, 0, 1, 1}, {2, 1, 2}},
      {"wrap", {3, 1, 0, 2}, {2, 2}},
      {"edge", {0, 0, 1, 1, 2, 0}, {2, 1, 3}},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.mode, " [", absl::StrJoin(c.paddings, ", "),
                              "] of ", DimsToString(c.x)));
    const absl::Status status =
        CheckGradient(PadOp(c.mode, c.paddings), {{"x", Random(c.x, ++seed)}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(PadModeErrorTest, ModesCopyingElementsNeedSome) {
  absl::Status empty = PrepareOp(PadOp("edge", {1, 0, 0, 0}),
                                 {{"x", MakeTensor<float>({0, 2}, {})}});
  EXPECT_THAT(empty.message(),
              HasSubstr("op 0 (pad): attribute \"mode\" = \"edge\" fills the "
                        "border from X's elements, but attribute \"paddings\" "
                        "= [1, 0, 0, 0] pads dim 0 of input \"X\" (variable "
                        "\"x\") of shape [0, 2], which is empty"));
  absl::Status grad = PrepareOp(PadGradOp("reflect", {0, 0, 2, 0}),
                                {{"g", MakeTensor<float>({3, 2}, {})}});
  EXPECT_THAT(grad.message(),
              HasSubstr("op 0 (pad_grad): attribute \"mode\" = \"reflect\" "
                        "fills the border from X's elements, but attribute "
                        "\"paddings\" = [0, 0, 2, 0] pads dim 1 of X (shape "
                        "[3, 0]: input \"Out@GRAD\" (variable \"g\") of shape "
                        "[3, 2] less the paddings), which is empty"));
  absl::Status mode = PrepareOp(PadOp("symmetric", {1, 1}),
                                {{"x", MakeTensor<float>({2}, {1, 2})}});
  EXPECT_THAT(mode.message(),
              HasSubstr("op 0 (pad): attribute \"mode\" must be one of "
                        "constant, edge, reflect, wrap, got \"symmetric\""));
}

// A pad reading "x", its paddings from "p" and, with `value`, its pad value
// from "v".
std::string PadInputsOp(bool value, const std::string& attrs = "") {
  return absl::StrCat(
      "type: \"pad\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Paddings\" vars: \"p\" } ",
      value ? "inputs { slot: \"PadValue\" vars: \"v\" } " : "",
      "outputs { slot: \"Out\" vars: \"y\" } ", attrs);
}

TEST(PadInputsTest, PaddingsAndValueFromTensors) {
  // As ConstantBorder in slice_pad_test.cc, from tensors.
  auto out = RunOp(PadInputsOp(true),
                   {{"x", MakeTensor<float>({2, 2}, {1, 2, 3, 4})},
                    {"p", MakeTensor<int64_t>({4}, {1, 0, 0, 2})},
                    {"v", MakeTensor<float>({}, {9})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(3, 4));
  EXPECT_THAT(Values<float>((*out)[0]),
              ElementsAre(9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9));
  // int32 paddings with the attributes' pad value; a mode.
  auto edge = RunOp(PadInputsOp(false, "attrs { name: \"mode\" s: \"edge\" }"),
                    {{"x", MakeTensor<int32_t>({3}, {1, 2, 3})},
                     {"p", MakeTensor<int32_t>({2}, {0, 2})}},
                    {"y"});
  ASSERT_TRUE(edge.ok()) << edge.status();
  EXPECT_THAT(Values<int32_t>((*edge)[0]), ElementsAre(1, 2, 3, 3, 3));
  // A tensor pad value of an integer dtype, taken as it is.
  auto ints = RunOp(PadInputsOp(true),
                    {{"x", MakeTensor<int64_t>({1}, {7})},
                     {"p", MakeTensor<int64_t>({2}, {1, 1})},
                     {"v", MakeTensor<int64_t>({1}, {int64_t{1} << 40})}},
                    {"y"});
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(Values<int64_t>((*ints)[0]),
              ElementsAre(int64_t{1} << 40, 7, int64_t{1} << 40));
}

TEST(PadInputsTest, FedPaddingsLeaveTheDimsToRunTime) {
  const std::string op = PadInputsOp(false);
  auto known_rank =
      InferAtPrepare(op, {{"x", kFloat32, {2, 3}}, {"p", kInt64, {-1}}}, "y");
  ASSERT_TRUE(known_rank.ok()) << known_rank.status();
  EXPECT_THAT(known_rank->dims, ElementsAre(-1, -1));
  // The paddings' length gives the rank.
  auto from_length =
      InferAtPrepare(op, {{"x", kFloat32, {}}, {"p", kInt32, {6}}}, "y");
  ASSERT_TRUE(from_length.ok()) << from_length.status();
  EXPECT_THAT(from_length->dims, ElementsAre(-1, -1, -1));
  auto mismatch =
      InferAtPrepare(op, {{"x", kFloat32, {2, 3}}, {"p", kInt64, {2}}}, "y");
  EXPECT_THAT(mismatch.status().message(),
              HasSubstr("op 0 (pad): input \"Paddings\" (variable \"p\") "
                        "holds 2 values, but input \"X\" (variable \"x\") of "
                        "shape [2, 3] has rank 2: expected 2 * rank = 4"));
}

TEST(PadInputsTest, Errors) {
  const Tensor x = MakeTensor<float>({2}, {1, 2});
  auto negative =
      RunOp(PadInputsOp(false),
            {{"x", x}, {"p", MakeTensor<int64_t>({2}, {1, -1})}}, {"y"});
  EXPECT_THAT(negative.status().message(),
              HasSubstr("op 0 (pad): input \"Paddings\" (variable \"p\") = "
                        "[1, -1] holds a negative value (expected "
                        "non-negative), for input \"X\" (variable \"x\") of "
                        "shape [2]"));
  // A length Prepare cannot see (p declared of unknown size) is checked
  // once the values come.
  auto length = RunDeclared(
      PadInputsOp(false), {{"x", kFloat32, {2}}, {"p", kInt32, {-1}}},
      {{"x", x}, {"p", MakeTensor<int32_t>({4}, {1, 1, 1, 1})}}, {"y"});
  EXPECT_THAT(std::string(length.status().message()),
              HasSubstr("op 0 (pad): input \"Paddings\" (variable \"p\") = "
                        "[1, 1, 1, 1] pads 2 dims, but input \"X\" (variable "
                        "\"x\") of shape [2] has rank 1: expected 2 * rank = "
                        "2 entries"));
  absl::Status known_length =
      PrepareOp(PadInputsOp(false),
                {{"x", x}, {"p", MakeTensor<int32_t>({4}, {1, 1, 1, 1})}});
  EXPECT_THAT(std::string(known_length.message()),
              HasSubstr("op 0 (pad): input \"Paddings\" (variable \"p\") "
                        "holds 4 values, but input \"X\" (variable \"x\") of "
                        "shape [2] has rank 1: expected 2 * rank = 2"));
  absl::Status dtype = PrepareOp(
      PadInputsOp(false), {{"x", x}, {"p", MakeTensor<float>({2}, {1, 1})}});
  EXPECT_THAT(dtype.message(),
              HasSubstr("op 0 (pad): input \"Paddings\" (variable \"p\") "
                        "has dtype float32: expected int32 or int64"));
  absl::Status value =
      PrepareOp(PadInputsOp(true), {{"x", x},
                                    {"p", MakeTensor<int64_t>({2}, {1, 1})},
                                    {"v", MakeTensor<double>({}, {0})}});
  EXPECT_THAT(std::string(value.message()),
              HasSubstr("op 0 (pad): input \"PadValue\" (variable \"v\") is "
                        "float64"));
  EXPECT_THAT(std::string(value.message()),
              HasSubstr("expected one float32 element (a scalar)"));
  absl::Status missing = PrepareOp(
      "type: \"pad_grad\" inputs { slot: \"Out@GRAD\" vars: \"g\" } outputs "
      "{ slot: \"PadValue@GRAD\" vars: \"dv\" } attrs { name: \"paddings\" "
      "ints { values: [1, 1] } }",
      {{"g", MakeTensor<float>({3}, {1, 2, 3})}});
  EXPECT_THAT(missing.message(),
              HasSubstr("op 0 (pad_grad): input \"PadValue\" is not bound: "
                        "output \"PadValue@GRAD\" takes its shape"));
}

TEST(PadInputsGradTest, PadValueGetsTheBorderGradient) {
  const std::string op =
      "type: \"pad_grad\" inputs { slot: \"Out@GRAD\" vars: \"g\" } inputs "
      "{ slot: \"Paddings\" vars: \"p\" } inputs { slot: \"PadValue\" vars: "
      "\"v\" } outputs { slot: \"X@GRAD\" vars: \"dx\" } outputs { slot: "
      "\"PadValue@GRAD\" vars: \"dv\" } ";
  const std::vector<Feed> feeds = {
      {"g", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
      {"p", MakeTensor<int32_t>({4}, {1, 0, 1, 1})},
      {"v", MakeTensor<float>({}, {0})}};
  auto constant = RunOp(op, feeds, {"dx", "dv"});
  ASSERT_TRUE(constant.ok()) << constant.status();
  // X is [1, 1], at (1, 1): the border is everything else.
  EXPECT_THAT(Values<float>((*constant)[0]), ElementsAre(5));
  EXPECT_THAT((*constant)[1].dims(), ElementsAre());
  EXPECT_THAT(Values<float>((*constant)[1]), ElementsAre(21 - 5));
  // Other modes ignore the value.
  auto edge =
      RunOp(op + "attrs { name: \"mode\" s: \"edge\" }", feeds, {"dx", "dv"});
  ASSERT_TRUE(edge.ok()) << edge.status();
  EXPECT_THAT(Values<float>((*edge)[0]), ElementsAre(21));
  EXPECT_THAT(Values<float>((*edge)[1]), ElementsAre(0));
}

TEST(PadInputsGradTest, MatchesCentralDifferences) {
  // The pad value, a float64 feed, is differentiated too.
  for (const char* mode : {"constant", "reflect"}) {
    SCOPED_TRACE(mode);
    const absl::Status status = CheckGradient(
        PadInputsOp(true,
                    absl::StrCat("attrs { name: \"mode\" s: \"", mode, "\" }")),
        {{"x", Random({2, 3}, 11)},
         {"p", MakeTensor<int64_t>({4}, {1, 2, 2, 0})},
         {"v", MakeTensor<double>({}, {0.25})}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

}  // namespace
}  // namespace scopeflow
