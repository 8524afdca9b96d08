// CUDA kernels of the reductions against their CPU kernels: reduce_sum,
// reduce_mean, reduce_max and their gradients over every kind of axis set
// (inner, outer, middle, several runs, all, none, size-1 and empty axes)
// with keep_dim, noop_with_empty_axes and "Axes" as an input; mean and
// mean_grad; argmax with ties, NaN and select_last_index; accuracy;
// softmax_with_cross_entropy and its gradient. Shapes cover each launch
// shape of the kernels: short and long rows, few and many outputs, axes
// split over blocks, and sizes past 65535 * 256 elements.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/cuda_test_util.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/place.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

struct ReduceCase {
  Dims dims;
  std::vector<int64_t> axes;
};

const std::vector<ReduceCase>& ReduceCases() {
  static const auto* cases = new std::vector<ReduceCase>{
      {{5}, {}},
      {{5}, {0}},
      {{1}, {0}},
      {{3, 4}, {0}},
      {{3, 4}, {1}},
      {{3, 4}, {-1}},
      {{2, 3, 4}, {0, 2}},
      {{2, 3, 4}, {1}},
      {{2, 3, 4, 5}, {0, 2}},
      {{2, 3, 4, 5}, {3, 1}},
      {{3, 5, 7, 11, 13}, {0, 2, 4}},
      {{4, 1, 6}, {1}},     // only a size-1 axis: a copy
      {{4, 1, 6}, {0, 1}},  // with it
      {{3, 0}, {1}},        // no elements per output
      {{0, 3}, {0}},
      {{0, 3}, {1}},  // no outputs
      {{1000, 3000}, {1}},
      {{3, 100000}, {1}},  // few long rows: split over blocks
      {{100000, 3}, {0}},  // few long strided slices: split
      {{300000, 2}, {1}},  // short rows, two lanes each
      {{7, 300, 5}, {1}},
      {{2, 5000, 40}, {1}},
      {{16, 32, 28, 28}, {0, 2, 3}},  // a batch norm's axes
      {{70000 * 256 + 3}, {}},
  };
  return *cases;
}

// `attrs { name: "axes" ints { values: [...] } }` and the flags.
std::string ReduceAttrs(const std::vector<int64_t>& axes, bool keep_dim,
                        bool noop = false) {
  return absl::StrCat(
      "attrs { name: \"axes\" ints { values: [", absl::StrJoin(axes, ", "),
      "] } } attrs { name: \"keep_dim\" b: ", keep_dim ? "true" : "false",
      " } attrs { name: \"noop_with_empty_axes\" b: ", noop ? "true" : "false",
      " }");
}

std::string ReduceOp(const std::string& type, const std::string& attrs) {
  return absl::StrCat("type: \"", type,
                      "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
                      "\"Out\" vars: \"y\" } ",
                      attrs);
}

// The forward's output dims.
Dims ReducedDims(const Dims& dims, const std::vector<int64_t>& axes,
                 bool keep_dim, bool noop = false) {
  const int rank = static_cast<int>(dims.size());
  std::vector<bool> reduced(rank, axes.empty() && !noop);
  for (int64_t axis : axes) reduced[axis < 0 ? axis + rank : axis] = true;
  Dims out;
  for (int i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      out.push_back(dims[i]);
    } else if (keep_dim) {
      out.push_back(1);
    }
  }
  return out;
}

// A random tensor whose values repeat, so that maxima tie.
Tensor TiedTensor(DataType dtype, const Dims& dims, uint64_t seed) {
  Tensor x = RandomTensor(dtype, dims, seed, -3, 3);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (dtype == kFloat32) {
      x.data<float>()[i] = std::floor(x.data<float>()[i]);
    } else if (dtype == kFloat64) {
      x.data<double>()[i] = std::floor(x.data<double>()[i]);
    }
  }
  return x;
}

// Whether reduce_max of `c` reduces some element into each output, as its
// inference requires.
bool MaxDefined(const ReduceCase& c) {
  const Dims out = ReducedDims(c.dims, c.axes, false);
  int64_t outputs = 1;
  int64_t numel = 1;
  for (int64_t d : out) outputs *= d;
  for (int64_t d : c.dims) numel *= d;
  return outputs == 0 || numel > 0;
}

TEST(ReduceCudaTest, ForwardMatchesCpu) {
  SF_REQUIRE_CUDA();
  const std::vector<std::pair<std::string, std::vector<DataType>>> ops = {
      {"reduce_sum", {kFloat32, kFloat64, kInt32, kInt64}},
      {"reduce_mean", {kFloat32, kFloat64}},
      {"reduce_max", {kFloat32, kFloat64, kInt32, kInt64}},
  };
  for (const auto& [type, dtypes] : ops) {
    for (DataType dtype : dtypes) {
      for (const ReduceCase& c : ReduceCases()) {
        if (type == "reduce_max" && !MaxDefined(c)) continue;
        for (bool keep_dim : {false, true}) {
          EXPECT_TRUE(MatchesOnCuda(
              ReduceOp(type, ReduceAttrs(c.axes, keep_dim)),
              {{"x", RandomTensor(dtype, c.dims, 1, -1000, 1000)}}, {"y"}))
              << type << " " << DataTypeName(dtype) << " dims "
              << absl::StrJoin(c.dims, ",") << " axes "
              << absl::StrJoin(c.axes, ",") << " keep_dim " << keep_dim;
        }
      }
    }
  }
}

// noop_with_empty_axes with no axes copies X; with axes it changes nothing.
TEST(ReduceCudaTest, NoopWithEmptyAxesMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (const char* type : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    for (const std::vector<int64_t>& axes :
         std::vector<std::vector<int64_t>>{{}, {1}}) {
      EXPECT_TRUE(MatchesOnCuda(ReduceOp(type, ReduceAttrs(axes, false, true)),
                                {{"x", RandomTensor(kFloat32, {3, 4, 5}, 2)}},
                                {"y"}))
          << type;
    }
  }
}

// Integer sums wrap around as the CPU's do.
TEST(ReduceCudaTest, IntegerSumsWrapAsOnCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kInt32, kInt64}) {
    const double bound = dtype == kInt32 ? 2e9 : 9e18;
    EXPECT_TRUE(MatchesOnCuda(
        ReduceOp("reduce_sum", ReduceAttrs({}, false)),
        {{"x", RandomTensor(dtype, {100000}, 3, -bound, bound)}}, {"y"}));
    EXPECT_TRUE(MatchesOnCuda(
        ReduceOp("reduce_sum", ReduceAttrs({0}, false)),
        {{"x", RandomTensor(dtype, {1000, 30}, 4, -bound, bound)}}, {"y"}));
  }
}

// reduce_max propagates NaN; infinities stay.
TEST(ReduceCudaTest, MaxSpecialValuesMatchCpu) {
  SF_REQUIRE_CUDA();
  for (const Dims& dims : std::vector<Dims>{{6, 50}, {6, 5000}, {50, 6}}) {
    Tensor x = RandomTensor(kFloat32, dims, 5);
    float* data = x.data<float>();
    data[3] = std::numeric_limits<float>::quiet_NaN();
    data[x.numel() / 2] = std::numeric_limits<float>::infinity();
    data[x.numel() - 1] = -std::numeric_limits<float>::infinity();
    for (int64_t axis : {0, 1}) {
      EXPECT_TRUE(
          MatchesOnCuda(ReduceOp("reduce_max", ReduceAttrs({axis}, false)),
                        {{"x", x}}, {"y"}));
    }
  }
}

// The axes as input "Axes" (int32 or int64), which wins over the attribute.
TEST(ReduceCudaTest, AxesInputMatchesCpu) {
  SF_REQUIRE_CUDA();
  const std::string op = R"pb(type: "reduce_sum"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Axes" vars: "a" }
                              outputs { slot: "Out" vars: "y" }
                              attrs {
                                name: "axes"
                                ints { values: [ 0 ] }
                              })pb";
  const Tensor x = RandomTensor(kFloat32, {4, 5, 6}, 6);
  EXPECT_TRUE(MatchesOnCuda(
      op, {{"x", x}, {"a", MakeTensor<int64_t>({2}, {2, 1})}}, {"y"}));
  EXPECT_TRUE(MatchesOnCuda(
      op, {{"x", x}, {"a", MakeTensor<int32_t>({1}, {-1})}}, {"y"}));
}

std::string ReduceGradOp(const std::string& type, const std::string& attrs,
                         bool reads_out) {
  return absl::StrCat(
      "type: \"", type, "\" inputs { slot: \"X\" vars: \"x\" } ",
      reads_out ? "inputs { slot: \"Out\" vars: \"y\" } " : "",
      "inputs { slot: \"Out@GRAD\" vars: \"g\" } outputs { slot: "
      "\"X@GRAD\" vars: \"dx\" } ",
      attrs);
}

TEST(ReduceCudaTest, SumAndMeanGradMatchCpu) {
  SF_REQUIRE_CUDA();
  for (const char* type : {"reduce_sum_grad", "reduce_mean_grad"}) {
    for (DataType dtype : {kFloat32, kFloat64}) {
      for (const ReduceCase& c : ReduceCases()) {
        for (bool keep_dim : {false, true}) {
          const Dims out = ReducedDims(c.dims, c.axes, keep_dim);
          EXPECT_TRUE(MatchesOnCuda(
              ReduceGradOp(type, ReduceAttrs(c.axes, keep_dim), false),
              {{"x", RandomTensor(dtype, c.dims, 7)},
               {"g", RandomTensor(dtype, out, 8)}},
              {"dx"}))
              << type << " " << DataTypeName(dtype) << " dims "
              << absl::StrJoin(c.dims, ",") << " axes "
              << absl::StrJoin(c.axes, ",") << " keep_dim " << keep_dim;
        }
      }
    }
    EXPECT_TRUE(
        MatchesOnCuda(ReduceGradOp(type, ReduceAttrs({}, false, true), false),
                      {{"x", RandomTensor(kFloat32, {3, 4}, 9)},
                       {"g", RandomTensor(kFloat32, {3, 4}, 10)}},
                      {"dx"}))
        << type << " noop";
  }
}

// Out is the forward's maximum of X, whose values repeat (and hold NaN in
// one case): the gradient goes to the first maximal element of each output.
TEST(ReduceCudaTest, MaxGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const ReduceCase& c : ReduceCases()) {
      if (!MaxDefined(c)) continue;
      for (bool keep_dim : {false, true}) {
        const std::string attrs = ReduceAttrs(c.axes, keep_dim);
        Tensor x = TiedTensor(dtype, c.dims, 11);
        if (x.numel() > 10 && dtype == kFloat32) {
          x.data<float>()[7] = std::numeric_limits<float>::quiet_NaN();
        }
        absl::StatusOr<std::vector<Tensor>> max =
            RunOp(ReduceOp("reduce_max", attrs), {{"x", x}}, {"y"});
        ASSERT_TRUE(max.ok()) << max.status();
        EXPECT_TRUE(
            MatchesOnCuda(ReduceGradOp("reduce_max_grad", attrs, true),
                          {{"x", x},
                           {"y", (*max)[0]},
                           {"g", RandomTensor(dtype, (*max)[0].dims(), 12)}},
                          {"dx"}))
            << DataTypeName(dtype) << " dims " << absl::StrJoin(c.dims, ",")
            << " axes " << absl::StrJoin(c.axes, ",") << " keep_dim "
            << keep_dim;
      }
    }
  }
}

TEST(MeanCudaTest, MeanAndGradMatchCpu) {
  SF_REQUIRE_CUDA();
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const Dims& dims :
         std::vector<Dims>{{0}, {1}, {7, 9}, {2, 0, 3}, {70000 * 256 + 3}}) {
      EXPECT_TRUE(MatchesOnCuda(ReduceOp("mean", ""),
                                {{"x", RandomTensor(dtype, dims, 13)}}, {"y"}))
          << DataTypeName(dtype) << " " << absl::StrJoin(dims, ",");
      for (const Dims& g_dims : std::vector<Dims>{{}, {1}}) {
        EXPECT_TRUE(MatchesOnCuda(
            R"pb(type: "mean_grad"
                 inputs { slot: "X" vars: "x" }
                 inputs { slot: "Out@GRAD" vars: "g" }
                 outputs { slot: "X@GRAD" vars: "dx" })pb",
            {{"x", RandomTensor(dtype, dims, 14)},
             {"g", RandomTensor(dtype, g_dims, 15)}},
            {"dx"}))
            << DataTypeName(dtype) << " " << absl::StrJoin(dims, ",");
      }
    }
  }
}

struct ArgMaxCase {
  Dims dims;
  int64_t axis;
};

TEST(ArgMaxCudaTest, MatchesCpu) {
  SF_REQUIRE_CUDA();
  const std::vector<ArgMaxCase> cases = {
      {{5}, 0},
      {{3, 4}, 0},
      {{3, 4}, 1},
      {{3, 4}, -1},
      {{2, 3, 4}, 1},
      {{1000, 3000}, 1},
      {{3, 100000}, 1},
      {{100000, 3}, 0},
      {{2, 5000, 40}, 1},
      {{300000, 3}, 1},
      {{0, 3}, 1},
      {{4, 1, 5}, 1},
      {{70000 * 256 + 3}, 0},
  };
  for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64}) {
    for (const ArgMaxCase& c : cases) {
      Tensor x = TiedTensor(dtype, c.dims, 16);
      if (dtype == kFloat32 && x.numel() > 20) {
        x.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
        x.data<float>()[17] = std::numeric_limits<float>::quiet_NaN();
      }
      for (bool keepdims : {true, false}) {
        for (bool last : {false, true}) {
          const std::string op = absl::StrCat(
              "type: \"argmax\" inputs { slot: \"X\" vars: \"x\" } outputs { "
              "slot: \"Out\" vars: \"y\" } attrs { name: \"axis\" i: ",
              c.axis,
              " } attrs { name: \"keepdims\" b: ", keepdims ? "true" : "false",
              " } attrs { name: \"select_last_index\" b: ",
              last ? "true" : "false", " }");
          EXPECT_TRUE(MatchesOnCuda(op, {{"x", x}}, {"y"}))
              << DataTypeName(dtype) << " dims " << absl::StrJoin(c.dims, ",")
              << " axis " << c.axis << " keepdims " << keepdims << " last "
              << last;
        }
      }
    }
  }
}

// Labels in [0, classes) with every other row set to that row's argmax (so
// that the fraction is not near 0), and some outside the range, which
// count as wrong.
Tensor Labels(const Tensor& scores, const Dims& dims, uint64_t seed) {
  const int64_t n = scores.dim(0);
  const int64_t classes = scores.dim(1);
  Tensor labels = RandomTensor(kInt64, dims, seed, 0, classes);
  absl::StatusOr<std::vector<Tensor>> predicted = RunOp(
      R"pb(type: "argmax"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "y" }
           attrs { name: "axis" i: 1 }
           attrs { name: "keepdims" b: false })pb",
      {{"x", scores}}, {"y"});
  if (!predicted.ok()) return labels;
  int64_t* data = labels.data<int64_t>();
  for (int64_t r = 0; r < n; r += 2) {
    data[r] = (*predicted)[0].data<int64_t>()[r];
  }
  if (n > 5) {
    data[1] = -1;
    data[3] = classes;
  }
  return labels;
}

TEST(AccuracyCudaTest, MatchesCpu) {
  SF_REQUIRE_CUDA();
  const std::string op = R"pb(type: "accuracy"
                              inputs { slot: "Out" vars: "x" }
                              inputs { slot: "Label" vars: "l" }
                              outputs { slot: "Accuracy" vars: "a" })pb";
  for (DataType dtype : {kFloat32, kFloat64, kInt32, kInt64}) {
    for (const Dims& dims : std::vector<Dims>{
             {0, 4}, {1, 1}, {7, 3}, {1000, 10}, {5, 2000}, {20000, 7}}) {
      const Tensor scores = TiedTensor(dtype, dims, 17);
      for (const Dims& label_dims :
           std::vector<Dims>{{dims[0]}, {dims[0], 1}}) {
        EXPECT_TRUE(MatchesOnCuda(
            op, {{"x", scores}, {"l", Labels(scores, label_dims, 18)}}, {"a"}))
            << DataTypeName(dtype) << " " << absl::StrJoin(dims, ",");
      }
    }
  }
}

const std::vector<Dims>& CrossEntropyShapes() {
  static const auto* shapes = new std::vector<Dims>{
      {0, 5},    {1, 1},     {4, 10},     {64, 1000},   {8, 1024},
      {8, 1025}, {3, 50000}, {100000, 3}, {300, 32000},
  };
  return *shapes;
}

TEST(SoftmaxWithCrossEntropyCudaTest, MatchesCpu) {
  SF_REQUIRE_CUDA();
  for (int64_t axis : {-1, 1}) {
    const std::string op = absl::StrCat(
        "type: \"softmax_with_cross_entropy\" inputs { slot: \"Logits\" "
        "vars: \"x\" } inputs { slot: \"Label\" vars: \"l\" } outputs { "
        "slot: \"Softmax\" vars: \"s\" } outputs { slot: \"Loss\" vars: "
        "\"loss\" } attrs { name: \"axis\" i: ",
        axis, " }");
    for (DataType dtype : {kFloat32, kFloat64}) {
      for (const Dims& dims : CrossEntropyShapes()) {
        const Tensor logits = RandomTensor(dtype, dims, 19, -20, 20);
        Tensor labels = RandomTensor(kInt64, {dims[0], 1}, 20, 0, dims[1]);
        EXPECT_TRUE(
            MatchesOnCuda(op, {{"x", logits}, {"l", labels}}, {"s", "loss"}))
            << DataTypeName(dtype) << " " << absl::StrJoin(dims, ",");
        ASSERT_TRUE(labels.Reshape({dims[0]}).ok());
        EXPECT_TRUE(
            MatchesOnCuda(op, {{"x", logits}, {"l", labels}}, {"s", "loss"}))
            << DataTypeName(dtype) << " " << absl::StrJoin(dims, ",")
            << " labels [N]";
      }
    }
  }
}

TEST(SoftmaxWithCrossEntropyCudaTest, GradMatchesCpu) {
  SF_REQUIRE_CUDA();
  const std::string op = R"pb(type: "softmax_with_cross_entropy_grad"
                              inputs { slot: "Label" vars: "l" }
                              inputs { slot: "Softmax" vars: "s" }
                              inputs { slot: "Loss@GRAD" vars: "g" }
                              outputs { slot: "Logits@GRAD" vars: "dx" })pb";
  for (DataType dtype : {kFloat32, kFloat64}) {
    for (const Dims& dims : CrossEntropyShapes()) {
      EXPECT_TRUE(
          MatchesOnCuda(op,
                        {{"l", RandomTensor(kInt64, {dims[0]}, 21, 0, dims[1])},
                         {"s", RandomTensor(dtype, dims, 22, 0, 1)},
                         {"g", RandomTensor(dtype, {dims[0], 1}, 23)}},
                        {"dx"}))
          << DataTypeName(dtype) << " " << absl::StrJoin(dims, ",");
    }
  }
}

// A label the CPU kernel rejects fails the run on the device too, naming
// the op, the variable and the label (as classification_test's CPU check
// does); the next run on the thread reports nothing stale.
TEST(SoftmaxWithCrossEntropyCudaTest, LabelOutOfRangeFailsTheRun) {
  SF_REQUIRE_CUDA();
  const std::string op = R"pb(type: "softmax_with_cross_entropy"
                              inputs { slot: "Logits" vars: "x" }
                              inputs { slot: "Label" vars: "l" }
                              outputs { slot: "Softmax" vars: "s" }
                              outputs { slot: "Loss" vars: "loss" })pb";
  const Tensor logits = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::StatusOr<std::vector<Tensor>> out = RunOpOnPlace(
      CUDAPlace(0), op,
      {{"x", logits}, {"l", MakeTensor<int64_t>({2}, {0, 3})}}, {"s", "loss"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (softmax_with_cross_entropy): input \"Label\" "
                        "(variable \"l\") holds a label out of range "
                        "(expected a class in [0, 3)): 3"));
  out =
      RunOpOnPlace(CUDAPlace(0), op,
                   {{"x", logits}, {"l", MakeTensor<int64_t>({2, 1}, {-1, 0})}},
                   {"s", "loss"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("(expected a class in [0, 3)): -1"));
  EXPECT_TRUE(MatchesOnCuda(
      op, {{"x", logits}, {"l", MakeTensor<int64_t>({2}, {2, 0})}},
      {"s", "loss"}));
}

TEST(SoftmaxWithCrossEntropyCudaTest, GradLabelOutOfRangeFailsTheRun) {
  SF_REQUIRE_CUDA();
  const std::string op = R"pb(type: "softmax_with_cross_entropy_grad"
                              inputs { slot: "Label" vars: "l" }
                              inputs { slot: "Softmax" vars: "s" }
                              inputs { slot: "Loss@GRAD" vars: "g" }
                              outputs { slot: "Logits@GRAD" vars: "dx" })pb";
  const Tensor softmax =
      MakeTensor<double>({2, 3}, {0.2, 0.3, 0.5, 0.6, 0.3, 0.1});
  const Tensor g = MakeTensor<double>({2, 1}, {1, 2});
  absl::StatusOr<std::vector<Tensor>> out = RunOpOnPlace(
      CUDAPlace(0), op,
      {{"l", MakeTensor<int64_t>({2}, {1, 7})}, {"s", softmax}, {"g", g}},
      {"dx"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("op 0 (softmax_with_cross_entropy_grad): input "
                        "\"Label\" (variable \"l\") holds a label out of "
                        "range (expected a class in [0, 3)): 7"));
  EXPECT_TRUE(MatchesOnCuda(
      op, {{"l", MakeTensor<int64_t>({2}, {1, 2})}, {"s", softmax}, {"g", g}},
      {"dx"}));
}

}  // namespace
}  // namespace scopeflow
