// CUDA kernels of pool1d/2d/3d, batch_norm, layer_norm, dropout and their
// gradients against their CPU kernels.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/cuda_test_util.h"
#include "framework/op_test_util.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

constexpr DataType kFloatTypes[] = {kFloat32, kFloat64};

std::string Ints(const std::string& name, const std::vector<int>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

std::string Str(const std::string& name, const std::string& value) {
  return absl::StrCat("attrs { name: \"", name, "\" s: \"", value, "\" } ");
}

std::string Bool(const std::string& name, bool value) {
  return absl::StrCat("attrs { name: \"", name,
                      "\" b: ", value ? "true" : "false", " } ");
}

std::string Float(const std::string& name, float value) {
  return absl::StrCat("attrs { name: \"", name, "\" f: ", value, " } ");
}

std::string Int(const std::string& name, int value) {
  return absl::StrCat("attrs { name: \"", name, "\" i: ", value, " } ");
}

std::string In(const std::string& slot, const std::string& var) {
  return absl::StrCat("inputs { slot: \"", slot, "\" vars: \"", var, "\" } ");
}

std::string Out(const std::string& slot, const std::string& var) {
  return absl::StrCat("outputs { slot: \"", slot, "\" vars: \"", var, "\" } ");
}

std::string Type(const std::string& type) {
  return absl::StrCat("type: \"", type, "\" ");
}

// `dims` with every element as given by `fill(i, random value)`.
template <typename T, typename Fill>
Tensor Refill(DataType dtype, const Dims& dims, uint64_t seed, Fill fill) {
  Tensor t = RandomTensor(dtype, dims, seed, -2.0, 2.0);
  T* data = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) data[i] = fill(i, data[i]);
  return t;
}

// Values in steps of 0.25, so windows hold ties, and a NaN every
// `nan_every`-th element (none for 0): max pooling's first-maximum and
// last-NaN rules.
Tensor TiedTensor(DataType dtype, const Dims& dims, uint64_t seed,
                  int nan_every) {
  const auto fill = [nan_every](int64_t i, auto v) {
    using T = decltype(v);
    if (nan_every > 0 && i % nan_every == 0) {
      return std::numeric_limits<T>::quiet_NaN();
    }
    return static_cast<T>(std::round(v * 4) / 4);
  };
  return dtype == kFloat32 ? Refill<float>(dtype, dims, seed, fill)
                           : Refill<double>(dtype, dims, seed, fill);
}

// ---- pool1d, pool2d, pool3d ----

std::string PoolOp(const std::string& type, const std::string& attrs,
                   bool indices = false) {
  return absl::StrCat(Type(type), In("X", "x"), Out("Out", "y"),
                      indices ? Out("Indices", "idx") : "", attrs);
}

std::string PoolGradOp(const std::string& type, const std::string& attrs) {
  return absl::StrCat(Type(type + "_grad"), In("X", "x"), In("Out@GRAD", "dy"),
                      Out("X@GRAD", "dx"), attrs);
}

struct PoolCase {
  std::string type;
  Dims x;
  std::string attrs;  // all but pooling_type and exclusive
};

std::vector<PoolCase> PoolCases() {
  const std::string nhwc = Str("data_format", "NHWC");
  const std::string blocked = Str("data_format", "NCHW8c");
  const std::string blocked16 = Str("data_format", "NCHW16c");
  return {
      {"pool2d", {2, 3, 8, 8}, Ints("ksize", {2, 2}) + Ints("strides", {2, 2})},
      {"pool2d",
       {2, 3, 7, 9},
       Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1})},
      {"pool2d",
       {2, 3, 7, 9},
       Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}) + Bool("ceil_mode", true)},
      // Asymmetric paddings [top, bottom, left, right].
      {"pool2d",
       {1, 2, 10, 11},
       Ints("ksize", {3, 2}) + Ints("strides", {2, 3}) +
           Ints("paddings", {1, 2, 0, 1}) + Bool("ceil_mode", true)},
      {"pool2d",
       {1, 2, 9, 9},
       Ints("ksize", {3, 3}) + Ints("strides", {1, 2}) +
           Ints("paddings", {2, 2}) + Ints("dilations", {2, 2})},
      {"pool2d",
       {2, 2, 5, 7},
       Ints("ksize", {1, 1}) + Bool("global_pooling", true)},
      // Windows of 64 cells or more: a warp per window.
      {"pool2d",
       {1, 3, 100, 100},
       Ints("ksize", {1, 1}) + Bool("global_pooling", true)},
      {"pool2d",
       {1, 2, 20, 20},
       Ints("ksize", {9, 9}) + Ints("strides", {3, 3}) +
           Ints("paddings", {4, 4}) + Bool("ceil_mode", true)},
      {"pool2d", {1, 1, 300, 1}, Ints("ksize", {300, 1})},
      // Channels last.
      {"pool2d",
       {2, 7, 9, 5},
       Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}) + Bool("ceil_mode", true) + nhwc},
      {"pool2d",
       {1, 20, 20, 4},
       Ints("ksize", {9, 9}) + Ints("strides", {3, 3}) +
           Ints("paddings", {4, 4, 0, 3}) + Ints("dilations", {1, 2}) + nhwc},
      {"pool2d",
       {2, 5, 6, 3},
       Ints("ksize", {1, 1}) + Bool("global_pooling", true) + nhwc},
      // Channel-blocked, [N, C / 8, H, W, 8].
      {"pool2d",
       {2, 2, 9, 7, 8},
       Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}) + Bool("ceil_mode", true) + blocked},
      {"pool2d",
       {1, 1, 12, 12, 8},
       Ints("ksize", {3, 2}) + Ints("strides", {2, 3}) +
           Ints("paddings", {1, 2, 0, 1}) + Ints("dilations", {2, 1}) +
           blocked},
      {"pool2d",
       {2, 3, 5, 6, 8},
       Ints("ksize", {1, 1}) + Bool("global_pooling", true) + blocked},
      // [N, C / 16, H, W, 16].
      {"pool2d",
       {2, 2, 9, 7, 16},
       Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}) + Bool("ceil_mode", true) + blocked16},
      {"pool2d",
       {2, 3, 5, 6, 16},
       Ints("ksize", {1, 1}) + Bool("global_pooling", true) + blocked16},
      {"pool1d",
       {2, 3, 20},
       Ints("ksize", {3}) + Ints("strides", {2}) + Ints("paddings", {1}) +
           Bool("ceil_mode", true)},
      {"pool1d",
       {2, 3, 20},
       Ints("ksize", {4}) + Ints("paddings", {0, 3}) + Ints("dilations", {2})},
      {"pool3d",
       {1, 2, 5, 6, 7},
       Ints("ksize", {2, 3, 2}) + Ints("strides", {2, 1, 2}) +
           Ints("paddings", {0, 1, 1}) + Ints("dilations", {1, 2, 1}) +
           Bool("ceil_mode", true)},
      {"pool3d",
       {2, 2, 4, 5, 6},
       Ints("ksize", {1, 1, 1}) + Bool("global_pooling", true)},
  };
}

// The pooling_type / exclusive variants.
std::vector<std::string> PoolVariants() {
  return {Str("pooling_type", "max"),
          Str("pooling_type", "avg") + Bool("exclusive", true),
          Str("pooling_type", "avg") + Bool("exclusive", false)};
}

// Out's dims for `x`, from the CPU kernel.
Dims PoolOutDims(const std::string& type, const std::string& attrs,
                 const Tensor& x) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOpOnPlace(CPUPlace(), PoolOp(type, attrs), {{"x", x}}, {"y"});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].dims() : Dims{};
}

TEST(NnCudaTest, PoolMatchesCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 1;
  for (DataType dtype : kFloatTypes) {
    for (const PoolCase& c : PoolCases()) {
      for (const std::string& variant : PoolVariants()) {
        const std::string attrs = c.attrs + variant;
        SCOPED_TRACE(absl::StrCat(c.type, " ", DimsToString(c.x), " ", attrs));
        EXPECT_TRUE(MatchesOnCuda(PoolOp(c.type, attrs),
                                  {{"x", RandomTensor(dtype, c.x, ++seed)}},
                                  {"y"}));
        // Ties and NaNs.
        EXPECT_TRUE(MatchesOnCuda(PoolOp(c.type, attrs),
                                  {{"x", TiedTensor(dtype, c.x, ++seed, 7)}},
                                  {"y"}));
      }
    }
  }
}

TEST(NnCudaTest, PoolIndicesMatchCpu) {
  SF_REQUIRE_CUDA();
  const std::vector<PoolCase> cases = {
      {"pool2d",
       {2, 3, 7, 9},
       Ints("ksize", {3, 3}) + Ints("strides", {2, 2}) +
           Ints("paddings", {1, 1}) + Bool("ceil_mode", true)},
      {"pool2d",
       {1, 3, 100, 100},
       Ints("ksize", {1, 1}) + Bool("global_pooling", true)},
      {"pool1d", {2, 3, 20}, Ints("ksize", {3}) + Ints("paddings", {1})},
      {"pool3d",
       {1, 2, 5, 6, 7},
       Ints("ksize", {2, 3, 2}) + Ints("strides", {2, 1, 2}) +
           Ints("paddings", {0, 1, 1}) + Ints("dilations", {1, 2, 1})},
  };
  uint64_t seed = 100;
  for (DataType dtype : kFloatTypes) {
    for (const PoolCase& c : cases) {
      for (const char* order : {"row_major", "column_major"}) {
        const std::string attrs =
            c.attrs + Str("pooling_type", "max") + Str("storage_order", order);
        SCOPED_TRACE(absl::StrCat(c.type, " ", DimsToString(c.x), " ", attrs));
        for (int nan_every : {0, 13}) {
          EXPECT_TRUE(
              MatchesOnCuda(PoolOp(c.type, attrs, /*indices=*/true),
                            {{"x", TiedTensor(dtype, c.x, ++seed, nan_every)}},
                            {"y", "idx"}));
        }
      }
    }
  }
}

TEST(NnCudaTest, PoolGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 200;
  for (DataType dtype : kFloatTypes) {
    for (const PoolCase& c : PoolCases()) {
      for (const std::string& variant : PoolVariants()) {
        const std::string attrs = c.attrs + variant;
        SCOPED_TRACE(absl::StrCat(c.type, " ", DimsToString(c.x), " ", attrs));
        for (int nan_every : {0, 11}) {
          const Tensor x = TiedTensor(dtype, c.x, ++seed, nan_every);
          const Dims out = PoolOutDims(c.type, attrs, x);
          EXPECT_TRUE(MatchesOnCuda(
              PoolGradOp(c.type, attrs),
              {{"x", x}, {"dy", RandomTensor(dtype, out, ++seed)}}, {"dx"}));
        }
      }
    }
  }
}

// More windows than one launch's threads, and past the int32 indexing of
// the kernels (more than 2^25 windows).
TEST(NnCudaTest, PoolLargeMatchesCpu) {
  SF_REQUIRE_CUDA();
  const std::string window = Ints("ksize", {2, 2});
  for (int64_t side : {4100, 5801}) {
    const Tensor x = RandomTensor(kFloat32, {1, 1, side, side}, side);
    for (const std::string& variant : PoolVariants()) {
      const std::string attrs = window + variant;
      SCOPED_TRACE(absl::StrCat(side, " ", attrs));
      EXPECT_TRUE(MatchesOnCuda(PoolOp("pool2d", attrs), {{"x", x}}, {"y"}));
      const Dims out = PoolOutDims("pool2d", attrs, x);
      EXPECT_TRUE(MatchesOnCuda(
          PoolGradOp("pool2d", attrs),
          {{"x", x}, {"dy", RandomTensor(kFloat32, out, side + 1)}}, {"dx"}));
    }
  }
}

// ---- batch_norm ----

std::string BatchNormOp(const std::string& attrs, bool in_place = false) {
  return absl::StrCat(
      Type("batch_norm"), In("X", "x"), In("Scale", "scale"),
      In("Bias", "bias"), In("Mean", "mean"), In("Variance", "var"),
      Out("Y", "y"), Out("MeanOut", in_place ? "mean" : "mean_out"),
      Out("VarianceOut", in_place ? "var" : "var_out"),
      Out("SavedMean", "saved_mean"), Out("SavedVariance", "saved_var"), attrs);
}

// X (values in [lo, hi)) and the per-channel inputs of a batch_norm op.
std::vector<Feed> BatchNormFeeds(DataType dtype, const Dims& x, uint64_t seed,
                                 double lo = -1, double hi = 1) {
  const Dims c = {x[1]};
  return {{"x", RandomTensor(dtype, x, seed, lo, hi)},
          {"scale", RandomTensor(dtype, c, seed + 1, -2, 2)},
          {"bias", RandomTensor(dtype, c, seed + 2)},
          {"mean", RandomTensor(dtype, c, seed + 3)},
          {"var", RandomTensor(dtype, c, seed + 4, 0.1, 2)}};
}

// inner = 20 (by columns), 36 (by rows), 1, 5, 1000 and 2500 (several
// segments per row).
std::vector<Dims> BatchNormShapes() {
  return {{2, 3, 4, 5}, {8, 4, 6, 6}, {16, 5},
          {3, 7, 5},    {2, 3, 1000}, {1, 2, 2500}};
}

TEST(NnCudaTest, BatchNormInferenceMatchesCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 300;
  std::vector<Dims> shapes = BatchNormShapes();
  shapes.push_back({0, 3, 4});
  shapes.push_back({4, 0});
  for (DataType dtype : kFloatTypes) {
    for (const Dims& x : shapes) {
      SCOPED_TRACE(DimsToString(x));
      EXPECT_TRUE(MatchesOnCuda(
          BatchNormOp(Bool("is_test", true) + Float("epsilon", 1e-3f)),
          BatchNormFeeds(dtype, x, seed += 10),
          {"y", "mean_out", "var_out", "saved_mean", "saved_var"}));
    }
  }
}

TEST(NnCudaTest, BatchNormTrainingMatchesCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 400;
  for (DataType dtype : kFloatTypes) {
    for (const Dims& x : BatchNormShapes()) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(
            absl::StrCat(DimsToString(x), in_place ? " in place" : ""));
        const std::string op = BatchNormOp(
            Bool("is_test", false) + Float("momentum", 0.8f), in_place);
        const std::vector<std::string> fetches = {
            "y", in_place ? "mean" : "mean_out", in_place ? "var" : "var_out",
            "saved_mean", "saved_var"};
        EXPECT_TRUE(
            MatchesOnCuda(op, BatchNormFeeds(dtype, x, seed += 10), fetches));
        // Values far from 0, relative to their spread.
        EXPECT_TRUE(MatchesOnCuda(
            op, BatchNormFeeds(dtype, x, seed += 10, 100, 101), fetches));
      }
    }
  }
}

TEST(NnCudaTest, BatchNormLargeMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (const Dims& x : std::vector<Dims>{{4, 3, 1500000}, {2000000, 10}}) {
    SCOPED_TRACE(DimsToString(x));
    for (bool is_test : {true, false}) {
      EXPECT_TRUE(MatchesOnCuda(
          BatchNormOp(Bool("is_test", is_test)),
          BatchNormFeeds(kFloat32, x, 500),
          {"y", "mean_out", "var_out", "saved_mean", "saved_var"}));
    }
  }
}

TEST(NnCudaTest, BatchNormTrainingNeedsValues) {
  SF_REQUIRE_CUDA();
  const std::string op = BatchNormOp(Bool("is_test", false));
  const std::vector<Feed> feeds = BatchNormFeeds(kFloat32, {0, 3, 4}, 1);
  const absl::StatusOr<DeviceType> device = KernelDeviceOnCuda(op, feeds);
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_EQ(*device, DeviceType::kCUDA);
  const absl::StatusOr<std::vector<Tensor>> cpu =
      RunOpOnPlace(CPUPlace(), op, feeds, {"y"});
  const absl::StatusOr<std::vector<Tensor>> gpu =
      RunOpOnPlace(CUDAPlace(0), op, feeds, {"y"});
  ASSERT_FALSE(cpu.ok());
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().message(), cpu.status().message());
}

// batch_norm_grad reading the running statistics (is_test) or the saved
// batch statistics, with the outputs in `outputs` bound.
std::string BatchNormGradOp(bool is_test,
                            const std::vector<std::string>& outputs) {
  std::string op = absl::StrCat(
      Type("batch_norm_grad"), In("X", "x"), In("Scale", "scale"),
      is_test
          ? In("Mean", "mean") + In("Variance", "var")
          : In("SavedMean", "saved_mean") + In("SavedVariance", "saved_var"),
      In("Y@GRAD", "dy"), Bool("is_test", is_test), Float("epsilon", 1e-4f));
  for (const std::string& slot : outputs) {
    absl::StrAppend(&op, Out(slot + "@GRAD", "d" + slot));
  }
  return op;
}

TEST(NnCudaTest, BatchNormGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  const std::vector<std::vector<std::string>> output_sets = {
      {"X", "Scale", "Bias"}, {"X"}, {"Scale"}, {"Bias"}};
  std::vector<Dims> shapes = BatchNormShapes();
  shapes.push_back({0, 3, 4});
  shapes.push_back({4, 3, 1500000});
  uint64_t seed = 600;
  for (DataType dtype : kFloatTypes) {
    for (const Dims& x : shapes) {
      if (dtype == kFloat64 && x.size() > 2 && x[2] == 1500000) continue;
      const Dims c = {x[1]};
      for (bool is_test : {true, false}) {
        for (const std::vector<std::string>& outputs : output_sets) {
          SCOPED_TRACE(absl::StrCat(DimsToString(x), " is_test ", is_test, " ",
                                    absl::StrJoin(outputs, ",")));
          std::vector<Feed> feeds = {
              {"x", RandomTensor(dtype, x, ++seed)},
              {"scale", RandomTensor(dtype, c, ++seed, -2, 2)},
              {"dy", RandomTensor(dtype, x, ++seed)}};
          if (is_test) {
            feeds.push_back({"mean", RandomTensor(dtype, c, ++seed)});
            feeds.push_back({"var", RandomTensor(dtype, c, ++seed, 0.1, 2)});
          } else {
            feeds.push_back({"saved_mean", RandomTensor(dtype, c, ++seed)});
            // An inverse standard deviation.
            feeds.push_back(
                {"saved_var", RandomTensor(dtype, c, ++seed, 0.5, 2)});
          }
          std::vector<std::string> fetches;
          for (const std::string& slot : outputs) fetches.push_back("d" + slot);
          EXPECT_TRUE(
              MatchesOnCuda(BatchNormGradOp(is_test, outputs), feeds, fetches));
        }
      }
    }
  }
}

// ---- layer_norm ----

struct LayerNormCase {
  Dims x;
  int axis;
};

// Rows of a warp (up to 1024 elements) and of a block, more rows than a
// launch's warps, and empty rows or no rows.
std::vector<LayerNormCase> LayerNormCases() {
  return {{{4, 10}, 1},   {{2, 3, 50}, 1}, {{2, 3, 50}, 2}, {{2, 3, 50}, -1},
          {{3, 2000}, 1}, {{5, 1024}, 1},  {{5, 1025}, 1},  {{7}, 0},
          {{3, 0}, 1},    {{0, 5}, 1}};
}

// The statistics' dims: X's with the normalized axes reduced to 1.
Dims StatisticsDims(const LayerNormCase& c) {
  Dims dims = c.x;
  const int axis = c.axis < 0 ? c.axis + static_cast<int>(dims.size()) : c.axis;
  for (size_t i = axis; i < dims.size(); ++i) dims[i] = 1;
  return dims;
}

// The number of elements each normalization covers.
int64_t Normalized(const LayerNormCase& c) {
  const int rank = static_cast<int>(c.x.size());
  int64_t n = 1;
  for (int i = c.axis < 0 ? c.axis + rank : c.axis; i < rank; ++i) n *= c.x[i];
  return n;
}

TEST(NnCudaTest, LayerNormMatchesCpu) {
  SF_REQUIRE_CUDA();
  std::vector<LayerNormCase> cases = LayerNormCases();
  cases.push_back({{600000, 32}, 1});
  cases.push_back({{2, 3000000}, 1});
  uint64_t seed = 700;
  for (DataType dtype : kFloatTypes) {
    for (const LayerNormCase& c : cases) {
      const Dims n = {Normalized(c)};
      for (int affine = 0; affine < 3; ++affine) {
        SCOPED_TRACE(absl::StrCat(DimsToString(c.x), " axis ", c.axis,
                                  " affine ", affine));
        std::string op =
            absl::StrCat(Type("layer_norm"), In("X", "x"), Out("Y", "y"),
                         Out("Mean", "mean"), Out("InvStdDev", "inv_std"),
                         Int("begin_norm_axis", c.axis));
        std::vector<Feed> feeds = {{"x", RandomTensor(dtype, c.x, ++seed)}};
        if (affine >= 1) {
          absl::StrAppend(&op, In("Scale", "scale"));
          feeds.push_back({"scale", RandomTensor(dtype, n, ++seed)});
        }
        if (affine == 2) {
          absl::StrAppend(&op, In("Bias", "bias"), Float("epsilon", 0));
          feeds.push_back({"bias", RandomTensor(dtype, n, ++seed)});
        }
        EXPECT_TRUE(MatchesOnCuda(op, feeds, {"y", "mean", "inv_std"}));
      }
    }
  }
}

// Which optional inputs (Scale and Bias; the statistics' gradients) and
// outputs (X@GRAD; Scale@GRAD and Bias@GRAD) a layer_norm_grad binds.
struct LayerNormGradVariant {
  bool affine, statistics, x, params;
};

std::vector<LayerNormGradVariant> LayerNormGradVariants() {
  return {{true, true, true, true},
          {true, false, true, false},
          {true, false, false, true},
          {false, true, true, false}};
}

TEST(NnCudaTest, LayerNormGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  std::vector<LayerNormCase> cases = LayerNormCases();
  cases.push_back({{600000, 32}, 1});
  uint64_t seed = 800;
  for (DataType dtype : kFloatTypes) {
    for (const LayerNormCase& c : cases) {
      const Dims n = {Normalized(c)};
      for (const LayerNormGradVariant& v : LayerNormGradVariants()) {
        SCOPED_TRACE(absl::StrCat(
            DimsToString(c.x), " axis ", c.axis, " affine ", v.affine,
            " statistics ", v.statistics, " x ", v.x, " params ", v.params));
        std::string op =
            absl::StrCat(Type("layer_norm_grad"), In("X", "x"),
                         In("Y@GRAD", "dy"), Int("begin_norm_axis", c.axis));
        std::vector<Feed> feeds = {{"x", RandomTensor(dtype, c.x, ++seed)},
                                   {"dy", RandomTensor(dtype, c.x, ++seed)}};
        std::vector<std::string> fetches;
        if (v.affine) {
          absl::StrAppend(&op, In("Scale", "scale"), In("Bias", "bias"));
          feeds.push_back({"scale", RandomTensor(dtype, n, ++seed)});
          feeds.push_back({"bias", RandomTensor(dtype, n, ++seed)});
        }
        if (v.statistics) {
          absl::StrAppend(&op, In("Mean@GRAD", "dmean"),
                          In("InvStdDev@GRAD", "dinv_std"));
          feeds.push_back(
              {"dmean", RandomTensor(dtype, StatisticsDims(c), ++seed)});
          feeds.push_back(
              {"dinv_std", RandomTensor(dtype, StatisticsDims(c), ++seed)});
        }
        if (v.x) {
          absl::StrAppend(&op, Out("X@GRAD", "dx"));
          fetches.push_back("dx");
        }
        if (v.params) {
          absl::StrAppend(&op, Out("Scale@GRAD", "dscale"),
                          Out("Bias@GRAD", "dbias"));
          fetches.push_back("dscale");
          fetches.push_back("dbias");
        }
        EXPECT_TRUE(MatchesOnCuda(op, feeds, fetches));
      }
    }
  }
}

// ---- dropout ----

std::string DropoutOp(const std::string& attrs, bool seed_input) {
  return absl::StrCat(Type("dropout"), In("X", "x"),
                      seed_input ? In("Seed", "seed") : "", Out("Out", "y"),
                      Out("Mask", "mask"), attrs);
}

// MatchesOnCuda compares no uint8 fetches: the masks byte by byte.
::testing::AssertionResult SameMask(const std::string& op,
                                    const std::vector<Feed>& feeds) {
  absl::StatusOr<DeviceType> device = KernelDeviceOnCuda(op, feeds);
  if (!device.ok() || *device != DeviceType::kCUDA) {
    return ::testing::AssertionFailure() << "no CUDA kernel: " << op;
  }
  absl::StatusOr<std::vector<Tensor>> cpu =
      RunOpOnPlace(CPUPlace(), op, feeds, {"mask"});
  absl::StatusOr<std::vector<Tensor>> gpu =
      RunOpOnPlace(CUDAPlace(0), op, feeds, {"mask"});
  if (!cpu.ok() || !gpu.ok()) {
    return ::testing::AssertionFailure()
           << "cpu: " << cpu.status() << ", cuda: " << gpu.status();
  }
  if ((*cpu)[0].dims() != (*gpu)[0].dims() ||
      Values<uint8_t>((*cpu)[0]) != Values<uint8_t>((*gpu)[0])) {
    return ::testing::AssertionFailure() << "masks differ: " << op;
  }
  return ::testing::AssertionSuccess();
}

std::vector<Feed> DropoutFeeds(DataType dtype, int64_t n, uint64_t seed,
                               bool seed_input) {
  std::vector<Feed> feeds = {{"x", RandomTensor(dtype, {n}, seed)}};
  if (seed_input) {
    feeds.push_back({"seed", MakeTensor<int64_t>({1}, {int64_t{1} << 40 | 7})});
  }
  return feeds;
}

TEST(NnCudaTest, DropoutMatchesCpu) {
  SF_REQUIRE_CUDA();
  uint64_t seed = 900;
  for (DataType dtype : kFloatTypes) {
    for (int64_t n : {1, 257, 4099}) {
      for (float p : {0.0f, 0.3f, 0.9f}) {
        for (const char* impl : {"upscale_in_train", "downgrade_in_infer"}) {
          for (bool is_test : {false, true}) {
            for (bool seed_input : {false, true}) {
              const std::string op =
                  DropoutOp(Float("dropout_prob", p) +
                                Str("dropout_implementation", impl) +
                                Bool("is_test", is_test) + Int("seed", 1234),
                            seed_input);
              SCOPED_TRACE(absl::StrCat(n, " ", op));
              const std::vector<Feed> feeds =
                  DropoutFeeds(dtype, n, ++seed, seed_input);
              EXPECT_TRUE(MatchesOnCuda(op, feeds, {"y"}));
              EXPECT_TRUE(SameMask(op, feeds));
            }
          }
        }
      }
    }
  }
}

// More elements than one launch's threads.
TEST(NnCudaTest, DropoutLargeMatchesCpu) {
  SF_REQUIRE_CUDA();
  for (bool seed_input : {false, true}) {
    const std::string op =
        DropoutOp(Float("dropout_prob", 0.3f) + Int("seed", 77), seed_input);
    const std::vector<Feed> feeds =
        DropoutFeeds(kFloat32, 17000000, 3, seed_input);
    EXPECT_TRUE(MatchesOnCuda(op, feeds, {"y"}));
    EXPECT_TRUE(SameMask(op, feeds));
  }
}

TEST(NnCudaTest, DropoutGradMatchesCpu) {
  SF_REQUIRE_CUDA();
  std::mt19937 engine(5);
  for (DataType dtype : kFloatTypes) {
    for (int64_t n : {1, 1000, 17000000}) {
      if (dtype == kFloat64 && n > 1000) continue;
      std::vector<uint8_t> mask(n);
      for (uint8_t& m : mask) m = engine() % 2;
      for (const char* impl : {"upscale_in_train", "downgrade_in_infer"}) {
        for (bool is_test : {false, true}) {
          const std::string op = absl::StrCat(
              Type("dropout_grad"), In("Mask", "mask"), In("Out@GRAD", "dy"),
              Out("X@GRAD", "dx"), Float("dropout_prob", 0.25f),
              Str("dropout_implementation", impl), Bool("is_test", is_test));
          SCOPED_TRACE(absl::StrCat(n, " ", op));
          EXPECT_TRUE(MatchesOnCuda(op,
                                    {{"mask", MakeTensor<uint8_t>({n}, mask)},
                                     {"dy", RandomTensor(dtype, {n}, n)}},
                                    {"dx"}));
        }
      }
    }
  }
}

}  // namespace
}  // namespace scopeflow
