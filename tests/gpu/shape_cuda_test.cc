// CUDA kernels of the shape ops against their CPU kernels.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "framework/cuda_test_util.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/place.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

// Past 65535 blocks of 256 threads: the grid-stride loops wrap.
constexpr int64_t kLarge = 70000 * 256 + 3;

const DataType kAllTypes[] = {kFloat32, kFloat64, kInt32, kInt64, kBool};
const DataType kNumericTypes[] = {kFloat32, kFloat64, kInt32, kInt64};

// Values in [-10, 10): integers of both signs, bools of both values.
Tensor Random(DataType dtype, Dims dims, uint64_t seed) {
  return RandomTensor(dtype, std::move(dims), seed, -10.0, 10.0);
}

std::string Ints(const std::string& name, const std::vector<int64_t>& v) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(v, ", "), "] } } ");
}

std::string Int64s(const std::string& name, const std::vector<int64_t>& v) {
  return absl::StrCat("attrs { name: \"", name, "\" i64s { values: [",
                      absl::StrJoin(v, ", "), "] } } ");
}

std::string Int(const std::string& name, int64_t v) {
  return absl::StrCat("attrs { name: \"", name, "\" i: ", v, " } ");
}

// An op of `type` with slots given as "Slot=var1,var2".
std::string Op(const std::string& type, const std::vector<std::string>& ins,
               const std::vector<std::string>& outs,
               const std::string& attrs = "") {
  std::string text = absl::StrCat("type: \"", type, "\" ");
  auto slots = [&](const char* kind, const std::vector<std::string>& list) {
    for (const std::string& slot : list) {
      const size_t eq = slot.find('=');
      absl::StrAppend(&text, kind, " { slot: \"", slot.substr(0, eq), "\"");
      for (absl::string_view var : absl::StrSplit(slot.substr(eq + 1), ',')) {
        absl::StrAppend(&text, " vars: \"", var, "\"");
      }
      absl::StrAppend(&text, " } ");
    }
  };
  slots("inputs", ins);
  slots("outputs", outs);
  return text + attrs;
}

TEST(ShapeCudaTest, ViewOpsMatchCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kAllTypes) {
    const Tensor x = Random(dtype, {2, 3, 1, 4}, 1);
    EXPECT_TRUE(MatchesOnCuda(
        Op("reshape", {"X=x"}, {"Out=y"}, Int64s("shape", {0, -1, 2})),
        {{"x", x}}, {"y"}));
    EXPECT_TRUE(MatchesOnCuda(Op("flatten", {"X=x"}, {"Out=y"}, Int("axis", 2)),
                              {{"x", x}}, {"y"}));
    EXPECT_TRUE(
        MatchesOnCuda(Op("squeeze", {"X=x"}, {"Out=y"}), {{"x", x}}, {"y"}));
    EXPECT_TRUE(MatchesOnCuda(
        Op("unsqueeze", {"X=x"}, {"Out=y"}, Ints("axes", {0, -1})), {{"x", x}},
        {"y"}));
  }
  // The target shape as a tensor, which reaches the device.
  EXPECT_TRUE(MatchesOnCuda(Op("reshape", {"X=x", "Shape=s"}, {"Out=y"}),
                            {{"x", Random(kFloat32, {6, 4}, 2)},
                             {"s", MakeTensor<int64_t>({2}, {3, -1})}},
                            {"y"}));
  EXPECT_TRUE(MatchesOnCuda(Op("squeeze", {"X=x", "Axes=a"}, {"Out=y"}),
                            {{"x", Random(kFloat32, {1, 5, 1}, 3)},
                             {"a", MakeTensor<int32_t>({1}, {2})}},
                            {"y"}));
  // Empty.
  EXPECT_TRUE(
      MatchesOnCuda(Op("reshape", {"X=x"}, {"Out=y"}, Int64s("shape", {3, -1})),
                    {{"x", Random(kFloat32, {0, 3}, 4)}}, {"y"}));
}

TEST(ShapeCudaTest, ReshapeGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kNumericTypes) {
    EXPECT_TRUE(MatchesOnCuda(
        Op("reshape_grad", {"X=x", "Out@GRAD=g"}, {"X@GRAD=dx"}),
        {{"x", Random(dtype, {2, 6}, 1)}, {"g", Random(dtype, {3, 4}, 2)}},
        {"dx"}));
  }
}

TEST(ShapeCudaTest, ShapeMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kAllTypes) {
    for (const Dims& dims : {Dims{2, 3, 4}, Dims{0, 5}, Dims{7}, Dims{}}) {
      EXPECT_TRUE(MatchesOnCuda(Op("shape", {"X=x"}, {"Out=y"}),
                                {{"x", Random(dtype, dims, 1)}}, {"y"}));
    }
  }
}

TEST(ShapeCudaTest, TransposeMatchesCpu) {
  SF_REQUIRE_CUDA();
  struct Case {
    Dims dims;
    std::vector<int64_t> perm;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {1, 0}},
      {{5, 7, 9}, {2, 0, 1}},
      // NCHW to NHWC and back: tiled, with partial tiles.
      {{3, 40, 17, 19}, {0, 2, 3, 1}},
      {{3, 17, 19, 40}, {0, 3, 1, 2}},
      // Inner dims kept: rows move whole (widened).
      {{6, 5, 8}, {1, 0, 2}},
      {{4, 1, 3}, {2, 1, 0}},
      {{}, {}},
      {{0, 4}, {1, 0}},
      // More dims than one launch walks.
      {{2, 3, 2, 3, 2, 3, 2, 3, 2}, {8, 7, 6, 5, 4, 3, 2, 1, 0}},
  };
  for (DataType dtype : kAllTypes) {
    for (const Case& c : cases) {
      EXPECT_TRUE(MatchesOnCuda(
          Op("transpose", {"X=x"}, {"Out=y"}, Ints("perm", c.perm)),
          {{"x", Random(dtype, c.dims, 1)}}, {"y"}))
          << DimsToString(c.dims);
    }
  }
  // Past the grid's cap, tiled and not.
  EXPECT_TRUE(
      MatchesOnCuda(Op("transpose", {"X=x"}, {"Out=y"}, Ints("perm", {1, 0})),
                    {{"x", Random(kFloat32, {4097, 4099}, 2)}}, {"y"}));
  EXPECT_TRUE(
      MatchesOnCuda(Op("transpose", {"X=x"}, {"Out=y"}, Ints("perm", {1, 0})),
                    {{"x", Random(kFloat32, {kLarge / 3, 3}, 3)}}, {"y"}));
}

TEST(ShapeCudaTest, ExpandMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kAllTypes) {
    EXPECT_TRUE(MatchesOnCuda(
        Op("expand", {"X=x"}, {"Out=y"}, Int64s("shape", {2, 3, 4})),
        {{"x", Random(dtype, {3, 1}, 1)}}, {"y"}));
    EXPECT_TRUE(MatchesOnCuda(
        Op("expand", {"X=x"}, {"Out=y"}, Int64s("shape", {5, 1, 7})),
        {{"x", Random(dtype, {1, 6, 1}, 2)}}, {"y"}));
  }
  EXPECT_TRUE(
      MatchesOnCuda(Op("expand", {"X=x"}, {"Out=y"}, Int64s("shape", {kLarge})),
                    {{"x", Random(kFloat32, {1}, 3)}}, {"y"}));
  EXPECT_TRUE(MatchesOnCuda(Op("expand", {"X=x", "Shape=s"}, {"Out=y"}),
                            {{"x", Random(kInt64, {4, 1}, 4)},
                             {"s", MakeTensor<int32_t>({2}, {4, 300})}},
                            {"y"}));
  EXPECT_TRUE(
      MatchesOnCuda(Op("expand", {"X=x"}, {"Out=y"}, Int64s("shape", {0, 3})),
                    {{"x", Random(kFloat32, {1, 3}, 5)}}, {"y"}));
}

TEST(ShapeCudaTest, TileMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kAllTypes) {
    EXPECT_TRUE(MatchesOnCuda(
        Op("tile", {"X=x"}, {"Out=y"}, Ints("repeat_times", {2, 1, 3})),
        {{"x", Random(dtype, {2, 3}, 1)}}, {"y"}));
    EXPECT_TRUE(
        MatchesOnCuda(Op("tile", {"X=x"}, {"Out=y"}, Ints("repeat_times", {3})),
                      {{"x", Random(dtype, {4, 5}, 2)}}, {"y"}));
    EXPECT_TRUE(MatchesOnCuda(
        Op("tile", {"X=x"}, {"Out=y"}, Ints("repeat_times", {0, 2})),
        {{"x", Random(dtype, {4, 5}, 3)}}, {"y"}));
  }
  EXPECT_TRUE(MatchesOnCuda(Op("tile", {"X=x", "RepeatTimes=r"}, {"Out=y"}),
                            {{"x", Random(kFloat32, {3, 7}, 4)},
                             {"r", MakeTensor<int64_t>({2}, {kLarge / 21, 1})}},
                            {"y"}));
}

// Sums in another order than the CPU's: tolerances for small sums.
constexpr double kSumRtol = 1e-4;
constexpr double kSumAtol = 1e-4;

// Whole numbers in [-2, 2] of any dtype: long float sums of them are exact
// in any order, so they compare whatever order the kernel adds in.
Tensor SmallIntegers(DataType dtype, Dims dims, uint64_t seed) {
  Tensor t = RandomTensor(dtype, std::move(dims), seed, -2.4, 2.4);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == kFloat32) t.data<float>()[i] = std::round(t.data<float>()[i]);
    if (dtype == kFloat64) {
      t.data<double>()[i] = std::round(t.data<double>()[i]);
    }
  }
  return t;
}

TEST(ShapeCudaTest, ExpandGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  struct Case {
    Dims x, out;
  };
  const std::vector<Case> cases = {
      {{3, 1}, {2, 3, 4}},
      {{1, 6, 1}, {5, 6, 7}},
      // A bias: columns, and split over many rows.
      {{1, 300}, {5000, 300}},
      {{64}, {100000, 64}},
      // A row sum: a warp per output, and a block.
      {{3000, 1}, {3000, 500}},
      {{2, 1}, {2, 100000}},
      {{1}, {kLarge}},
      {{4, 5}, {4, 5}},
      {{3, 1}, {0, 3, 4}},
      {{0, 1}, {0, 4}},
  };
  for (DataType dtype : kNumericTypes) {
    for (const Case& c : cases) {
      if (dtype != kFloat32 && NumElements(c.out) > 1000000) continue;
      EXPECT_TRUE(MatchesOnCuda(
          Op("expand_grad", {"X=x", "Out@GRAD=g"}, {"X@GRAD=dx"},
             Int64s("shape", std::vector<int64_t>(c.out.begin(), c.out.end()))),
          {{"x", Random(dtype, c.x, 1)}, {"g", SmallIntegers(dtype, c.out, 2)}},
          {"dx"}, 0, 0))
          << DimsToString(c.x) << " " << DimsToString(c.out);
    }
  }
}

TEST(ShapeCudaTest, TileGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  struct Case {
    Dims x;
    std::vector<int64_t> repeats;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {2, 1, 3}},  {{4, 5}, {3}},       {{300}, {1000}},
      {{1000, 3}, {20, 1}}, {{7}, {kLarge / 7}}, {{2, 3}, {0, 1}},
  };
  for (DataType dtype : kNumericTypes) {
    for (const Case& c : cases) {
      Dims out = c.x;
      while (out.size() < c.repeats.size()) out.insert(out.begin(), 1);
      const size_t offset = out.size() - c.repeats.size();
      for (size_t i = 0; i < c.repeats.size(); ++i) {
        out[offset + i] *= c.repeats[i];
      }
      if (dtype != kFloat32 && NumElements(out) > 1000000) continue;
      EXPECT_TRUE(MatchesOnCuda(
          Op("tile_grad", {"X=x", "Out@GRAD=g"}, {"X@GRAD=dx"},
             Ints("repeat_times", c.repeats)),
          {{"x", Random(dtype, c.x, 1)}, {"g", SmallIntegers(dtype, out, 2)}},
          {"dx"}, 0, 0))
          << DimsToString(c.x);
    }
  }
}

TEST(ShapeCudaTest, ConcatMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kAllTypes) {
    EXPECT_TRUE(
        MatchesOnCuda(Op("concat", {"X=a,b,c"}, {"Out=y"}, Int("axis", 1)),
                      {{"a", Random(dtype, {2, 3, 4}, 1)},
                       {"b", Random(dtype, {2, 1, 4}, 2)},
                       {"c", Random(dtype, {2, 5, 4}, 3)}},
                      {"y"}));
    EXPECT_TRUE(MatchesOnCuda(
        Op("concat", {"X=a,b"}, {"Out=y"}, Int("axis", -1)),
        {{"a", Random(dtype, {3, 3}, 4)}, {"b", Random(dtype, {3, 0}, 5)}},
        {"y"}));
    EXPECT_TRUE(MatchesOnCuda(
        Op("concat", {"X=a,b"}, {"Out=y"}, Int("axis", 0)),
        {{"a", Random(dtype, {3, 7}, 6)}, {"b", Random(dtype, {1, 7}, 7)}},
        {"y"}));
  }
  EXPECT_TRUE(MatchesOnCuda(Op("concat", {"X=a,b"}, {"Out=y"}, Int("axis", 1)),
                            {{"a", Random(kFloat32, {kLarge / 8, 5}, 8)},
                             {"b", Random(kFloat32, {kLarge / 8, 3}, 9)}},
                            {"y"}));
}

TEST(ShapeCudaTest, SplitMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kAllTypes) {
    EXPECT_TRUE(MatchesOnCuda(Op("split", {"X=x"}, {"Out=a,b,c"},
                                 Int("axis", 1) + Ints("sections", {2, -1, 0})),
                              {{"x", Random(dtype, {3, 7, 2}, 1)}},
                              {"a", "b", "c"}));
    EXPECT_TRUE(MatchesOnCuda(
        Op("split", {"X=x"}, {"Out=a,b"}, Int("axis", -1) + Int("num", 2)),
        {{"x", Random(dtype, {5, 6}, 2)}}, {"a", "b"}));
  }
}

TEST(ShapeCudaTest, ConcatGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kNumericTypes) {
    const std::vector<Feed> feeds = {{"a", Random(dtype, {2, 3, 4}, 1)},
                                     {"b", Random(dtype, {2, 1, 4}, 2)},
                                     {"c", Random(dtype, {2, 5, 4}, 3)},
                                     {"g", Random(dtype, {2, 9, 4}, 4)}};
    EXPECT_TRUE(MatchesOnCuda(Op("concat_grad", {"X=a,b,c", "Out@GRAD=g"},
                                 {"X@GRAD=da,db,dc"}, Int("axis", 1)),
                              feeds, {"da", "db", "dc"}));
    EXPECT_TRUE(MatchesOnCuda(
        Op("concat_grad", {"X=a,b,c", "Out@GRAD=g"}, {"X@GRAD=da,dc"},
           Int("axis", -2) + Ints("grad_inputs", {0, 2})),
        feeds, {"da", "dc"}));
  }
}

std::string SliceAttrs(const std::vector<int64_t>& axes,
                       const std::vector<int64_t>& starts,
                       const std::vector<int64_t>& ends,
                       const std::vector<int64_t>& steps) {
  return Ints("axes", axes) + Ints("starts", starts) + Ints("ends", ends) +
         Ints("steps", steps);
}

TEST(ShapeCudaTest, SliceMatchesCpu) {
  SF_REQUIRE_CUDA();
  const std::vector<std::string> attrs = {
      SliceAttrs({0, 1}, {1, -3}, {3, 100}, {}),
      SliceAttrs({1}, {-1}, {-100}, {-2}),
      SliceAttrs({}, {1, 0}, {2, 5}, {1, 3}),
      SliceAttrs({2}, {5}, {10}, {}),
      SliceAttrs({0, 2}, {3, 1}, {0, 5}, {-1, 2}),
  };
  for (DataType dtype : kAllTypes) {
    for (const std::string& a : attrs) {
      EXPECT_TRUE(MatchesOnCuda(Op("slice", {"X=x"}, {"Out=y"}, a),
                                {{"x", Random(dtype, {4, 6, 7}, 1)}}, {"y"}))
          << a;
    }
  }
  for (DataType dtype : kNumericTypes) {
    for (const std::string& a : attrs) {
      // Out@GRAD of the slice's shape: run the slice on the CPU for it.
      auto y = RunOp(Op("slice", {"X=x"}, {"Out=y"}, a),
                     {{"x", Random(dtype, {4, 6, 7}, 1)}}, {"y"});
      ASSERT_TRUE(y.ok()) << y.status();
      EXPECT_TRUE(MatchesOnCuda(
          Op("slice_grad", {"X=x", "Out@GRAD=g"}, {"X@GRAD=dx"}, a),
          {{"x", Random(dtype, {4, 6, 7}, 1)},
           {"g", Random(dtype, (*y)[0].dims(), 2)}},
          {"dx"}))
          << a;
    }
  }
  // Bounds as tensors, and a large slice.
  EXPECT_TRUE(MatchesOnCuda(
      Op("slice", {"X=x", "Starts=s", "Ends=e", "Axes=a"}, {"Out=y"}),
      {{"x", Random(kFloat32, {kLarge / 4 + 2, 4}, 3)},
       {"s", MakeTensor<int64_t>({2}, {1, 1})},
       {"e", MakeTensor<int64_t>({2}, {-1, 4})},
       {"a", MakeTensor<int32_t>({2}, {0, 1})}},
      {"y"}));
}

std::string PadAttrs(const std::string& mode,
                     const std::vector<int64_t>& paddings,
                     float pad_value = 0) {
  return absl::StrCat(Ints("paddings", paddings),
                      "attrs { name: \"mode\" s: \"", mode,
                      "\" } attrs { name: \"pad_value\" f: ", pad_value, " } ");
}

TEST(ShapeCudaTest, PadMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kAllTypes) {
    for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
      EXPECT_TRUE(MatchesOnCuda(
          Op("pad", {"X=x"}, {"Out=y"}, PadAttrs(mode, {1, 2, 0, 0, 3, 5}, 7)),
          {{"x", Random(dtype, {3, 4, 5}, 1)}}, {"y"}))
          << mode;
      // Padding beyond the dim: reflection and wrapping go round again.
      EXPECT_TRUE(MatchesOnCuda(
          Op("pad", {"X=x"}, {"Out=y"}, PadAttrs(mode, {0, 0, 9, 11})),
          {{"x", Random(dtype, {2, 4}, 2)}}, {"y"}))
          << mode;
      EXPECT_TRUE(
          MatchesOnCuda(Op("pad", {"X=x"}, {"Out=y"}, PadAttrs(mode, {2, 3})),
                        {{"x", Random(dtype, {1}, 3)}}, {"y"}))
          << mode;
    }
    // The pad value as a tensor on the device.
    EXPECT_TRUE(MatchesOnCuda(
        Op("pad", {"X=x", "PadValue=v"}, {"Out=y"},
           PadAttrs("constant", {1, 1, 2, 0})),
        {{"x", Random(dtype, {3, 4}, 4)}, {"v", Random(dtype, {1}, 5)}},
        {"y"}));
  }
  EXPECT_TRUE(MatchesOnCuda(
      Op("pad", {"X=x", "Paddings=p"}, {"Out=y"}, PadAttrs("reflect", {})),
      {{"x", Random(kFloat32, {kLarge / 16, 8}, 6)},
       {"p", MakeTensor<int64_t>({4}, {0, 0, 4, 4})}},
      {"y"}));
  EXPECT_TRUE(MatchesOnCuda(
      Op("pad", {"X=x"}, {"Out=y"}, PadAttrs("constant", {1, 1, 0, 0}, -2)),
      {{"x", Random(kFloat32, {0, 3}, 7)}}, {"y"}));
}

TEST(ShapeCudaTest, PadGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kNumericTypes) {
    for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
      // X [3, 4, 5] padded to [6, 4, 13], and X [2, 4] to [2, 24].
      EXPECT_TRUE(MatchesOnCuda(
          Op("pad_grad", {"Out@GRAD=g", "PadValue=v"},
             {"X@GRAD=dx", "PadValue@GRAD=dv"},
             PadAttrs(mode, {1, 2, 0, 0, 3, 5})),
          {{"g", Random(dtype, {6, 4, 13}, 1)}, {"v", Random(dtype, {1}, 2)}},
          {"dx", "dv"}, kSumRtol, kSumAtol))
          << mode;
      EXPECT_TRUE(MatchesOnCuda(Op("pad_grad", {"Out@GRAD=g"}, {"X@GRAD=dx"},
                                   PadAttrs(mode, {0, 0, 9, 11})),
                                {{"g", Random(dtype, {2, 24}, 3)}}, {"dx"},
                                kSumRtol, kSumAtol))
          << mode;
    }
  }
  // A large border sum.
  EXPECT_TRUE(MatchesOnCuda(
      Op("pad_grad", {"Out@GRAD=g", "PadValue=v"},
         {"X@GRAD=dx", "PadValue@GRAD=dv"}, PadAttrs("constant", {0, 0, 1, 1})),
      {{"g", Random(kFloat64, {kLarge / 8, 8}, 4)},
       {"v", Random(kFloat64, {1}, 5)}},
      {"dx", "dv"}, kSumRtol, kSumAtol));
}

TEST(ShapeCudaTest, GatherMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kAllTypes) {
    EXPECT_TRUE(MatchesOnCuda(
        Op("gather", {"X=x", "Index=i"}, {"Out=y"}, Int("axis", 0)),
        {{"x", Random(dtype, {5, 3}, 1)},
         {"i", MakeTensor<int64_t>({4}, {4, 0, -1, 2})}},
        {"y"}));
    EXPECT_TRUE(MatchesOnCuda(
        Op("gather", {"X=x", "Index=i"}, {"Out=y"}, Int("axis", -2)),
        {{"x", Random(dtype, {2, 6, 3}, 2)},
         {"i", MakeTensor<int32_t>({2, 2}, {5, -6, 1, 1})}},
        {"y"}));
    EXPECT_TRUE(MatchesOnCuda(
        Op("gather", {"X=x", "Index=i"}, {"Out=y"}, Int("axis", 1)),
        {{"x", Random(dtype, {3, 7}, 3)}, {"i", MakeTensor<int64_t>({0}, {})}},
        {"y"}));
  }
  // An embedding lookup: rows of 512 floats, past the grid's cap.
  std::vector<int64_t> ids;
  for (int64_t j = 0; j < 40000; ++j) ids.push_back((j * 7919) % 1000);
  EXPECT_TRUE(MatchesOnCuda(Op("gather", {"X=x", "Index=i"}, {"Out=y"}),
                            {{"x", Random(kFloat32, {1000, 512}, 4)},
                             {"i", MakeTensor<int64_t>({40000}, ids)}},
                            {"y"}));
}

TEST(ShapeCudaTest, GatherGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : kNumericTypes) {
    // Index 2 picked three times: its gradient sums them.
    EXPECT_TRUE(
        MatchesOnCuda(Op("gather_grad", {"X=x", "Index=i", "Out@GRAD=g"},
                         {"X@GRAD=dx"}, Int("axis", 1)),
                      {{"x", Random(dtype, {3, 5, 2}, 1)},
                       {"i", MakeTensor<int32_t>({4}, {2, -3, 0, 2})},
                       {"g", Random(dtype, {3, 4, 2}, 2)}},
                      {"dx"}, kSumRtol, kSumAtol));
  }
  std::vector<int64_t> ids;
  for (int64_t j = 0; j < 40000; ++j) ids.push_back((j * 7919) % 1000);
  EXPECT_TRUE(MatchesOnCuda(
      Op("gather_grad", {"X=x", "Index=i", "Out@GRAD=g"}, {"X@GRAD=dx"}),
      {{"x", Random(kFloat32, {1000, 512}, 3)},
       {"i", MakeTensor<int64_t>({40000}, ids)},
       {"g", Random(kFloat32, {40000, 512}, 4)}},
      {"dx"}, kSumRtol, kSumAtol));
}

// An index the CPU kernel rejects fails the run on the device too, naming
// the op, the variable and the index (as gather_test's CPU check does); the
// next run on the thread reports nothing stale.
TEST(ShapeCudaTest, GatherIndexOutOfRangeFailsTheRun) {
  SF_REQUIRE_CUDA();
  const Tensor x = MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  absl::StatusOr<std::vector<Tensor>> out = RunOpOnPlace(
      CUDAPlace(0), Op("gather", {"X=x", "Index=i"}, {"Out=y"}),
      {{"x", x}, {"i", MakeTensor<int64_t>({2, 2}, {0, 1, 3, 0})}}, {"y"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (gather): input \"Index\" (variable \"i\") "
                        "holds an index out of range for axis 0 of input "
                        "\"X\" (shape [3, 2]) (expected [-3, 3)): 3"));
  out =
      RunOpOnPlace(CUDAPlace(0),
                   Op("gather", {"X=x", "Index=i"}, {"Out=y"}, Int("axis", -1)),
                   {{"x", x}, {"i", MakeTensor<int32_t>({1}, {-3})}}, {"y"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("holds an index out of range for axis 1 of input "
                        "\"X\" (shape [3, 2]) (expected [-2, 2)): -3"));
  // No rows to copy (X has none before the axis): checked all the same.
  out = RunOpOnPlace(
      CUDAPlace(0), Op("gather", {"X=x", "Index=i"}, {"Out=y"}, Int("axis", 1)),
      {{"x", MakeTensor<float>({0, 2}, {})},
       {"i", MakeTensor<int64_t>({2}, {1, 2})}},
      {"y"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("(shape [0, 2]) (expected [-2, 2)): 2"));
  // The same thread's next run is clean.
  out =
      RunOpOnPlace(CUDAPlace(0), Op("gather", {"X=x", "Index=i"}, {"Out=y"}),
                   {{"x", x}, {"i", MakeTensor<int64_t>({2}, {2, -3})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({5, 6, 1, 2}));
}

TEST(ShapeCudaTest, GatherGradIndexOutOfRangeFailsTheRun) {
  SF_REQUIRE_CUDA();
  const std::string op =
      Op("gather_grad", {"X=x", "Index=i", "Out@GRAD=g"}, {"X@GRAD=dx"});
  const Tensor x = MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor g = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  absl::StatusOr<std::vector<Tensor>> out = RunOpOnPlace(
      CUDAPlace(0), op,
      {{"x", x}, {"i", MakeTensor<int64_t>({2}, {0, -4})}, {"g", g}}, {"dx"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (gather_grad): input \"Index\" (variable "
                        "\"i\") holds an index out of range for axis 0 of "
                        "input \"X\" (shape [3, 2]) (expected [-3, 3)): -4"));
  out = RunOpOnPlace(
      CUDAPlace(0), op,
      {{"x", x}, {"i", MakeTensor<int32_t>({2}, {2, -1})}, {"g", g}}, {"dx"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({0, 0, 0, 0, 4, 6}));
}

}  // namespace
}  // namespace scopeflow
