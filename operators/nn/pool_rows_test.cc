// pool2d and pool3d and their gradients against a plain window-at-a-time
// loop over a sweep of windows, strides, dilations, paddings and
// ceil_mode, on values with ties, signed zeros and NaNs. Channels first,
// the kernels take the full windows of a row together (pool_rows.h);
// channels last or blocked, a window's channels together. Either way they
// promise the same results to the bit as one window at a time, so the
// comparisons are exact.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_test_util.h"
#include "gtest/gtest.h"
#include "operators/channel_blocks_testing.h"

namespace scopeflow {
namespace {

// One axis of a window: size, stride, dilation, padding before and after.
struct Axis {
  int64_t ksize = 1, stride = 1, dilation = 1, pad_before = 0, pad_after = 0;
};

struct Config {
  std::string type;  // "max" or "avg"
  bool exclusive = true;
  bool ceil_mode = false;
  std::vector<Axis> axes;  // One per spatial axis.

  std::string Attrs() const {
    std::vector<int64_t> ksize, strides, dilations, paddings;
    for (const Axis& a : axes) {
      ksize.push_back(a.ksize);
      strides.push_back(a.stride);
      dilations.push_back(a.dilation);
      paddings.push_back(a.pad_before);
      paddings.push_back(a.pad_after);
    }
    const auto ints = [](const std::string& name,
                         const std::vector<int64_t>& values) {
      return absl::StrCat(" attrs { name: '", name, "' ints { values: [",
                          absl::StrJoin(values, ", "), "] } }");
    };
    return absl::StrCat(
        " attrs { name: 'pooling_type' s: '", type, "' }",
        " attrs { name: 'exclusive' b: ", exclusive ? "true" : "false", " }",
        " attrs { name: 'ceil_mode' b: ", ceil_mode ? "true" : "false", " }",
        ints("ksize", ksize), ints("strides", strides),
        ints("dilations", dilations), ints("paddings", paddings));
  }

  std::string Name() const {
    std::string name = absl::StrCat(type, exclusive ? " exclusive" : "",
                                    ceil_mode ? " ceil" : "");
    for (const Axis& a : axes) {
      absl::StrAppend(&name, " [k", a.ksize, " s", a.stride, " d", a.dilation,
                      " p", a.pad_before, ",", a.pad_after, "]");
    }
    return name;
  }
};

// Values with ties, both zeros and a few NaNs among others.
Tensor Awkward(const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  const float pool[] = {-1.0f, -0.0f, 0.0f, 0.5f, 2.0f, std::nanf("")};
  std::vector<float> values(NumElements(dims));
  for (float& v : values) {
    const uint32_t r = rng() % 64;
    v = r < 5 ? pool[r]
        : r == 5 && rng() % 4 == 0
            ? pool[5]
            : static_cast<float>(rng() % 2001) / 1000 - 1;
  }
  return MakeTensor<float>(dims, values);
}

// Values in [-1, 1).
Tensor Uniform(const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> values(NumElements(dims));
  for (float& v : values) v = value(rng);
  return MakeTensor<float>(dims, values);
}

// Where one window lies along an axis of `in` cells: its taps on the input
// (cells first + k * dilation for k < count) and its taps counting the
// padding, not beyond the trailing padding.
struct Span1 {
  int64_t first = 0, count = 0, padded = 0;
};

Span1 SpanOf(const Axis& a, int64_t in, int64_t o) {
  Span1 span;
  const int64_t start = o * a.stride - a.pad_before;
  bool found = false;
  for (int64_t k = 0; k < a.ksize; ++k) {
    const int64_t at = start + k * a.dilation;
    span.padded += at < in + a.pad_after;
    if (at < 0 || at >= in) continue;
    if (!found) span.first = at;
    found = true;
    ++span.count;
  }
  return span;
}

// The plain loop: pooled values (out) and, given dy, the gradient of X, for
// X of dims [N, C, spatial...] and output spatial dims `out_spatial`.
struct Expected {
  std::vector<float> out, dx;
};

Expected PlainPool(const Config& c, const Tensor& x, const Dims& out_dims,
                   const Tensor& dy) {
  const int rank = static_cast<int>(c.axes.size());
  // Spatial axes padded to three: [D, H, W].
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  Axis axes[3];
  for (int i = 0; i < rank; ++i) {
    in[3 - rank + i] = x.dim(2 + i);
    out[3 - rank + i] = out_dims[2 + i];
    axes[3 - rank + i] = c.axes[i];
  }
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t in_size = in[0] * in[1] * in[2];
  const int64_t out_size = out[0] * out[1] * out[2];
  Expected e;
  e.out.resize(planes * out_size);
  e.dx.assign(x.numel(), 0.0f);
  const float* xs = x.data<float>();
  const float* g = dy.data<float>();
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t o = 0; o < out_size; ++o) {
      const int64_t oi[3] = {o / (out[1] * out[2]), o / out[2] % out[1],
                             o % out[2]};
      Span1 s[3];
      for (int i = 0; i < 3; ++i) s[i] = SpanOf(axes[i], in[i], oi[i]);
      std::vector<int64_t> cells;
      for (int64_t i = 0; i < s[0].count; ++i) {
        for (int64_t j = 0; j < s[1].count; ++j) {
          for (int64_t k = 0; k < s[2].count; ++k) {
            cells.push_back(p * in_size +
                            ((s[0].first + i * axes[0].dilation) * in[1] +
                             s[1].first + j * axes[1].dilation) *
                                in[2] +
                            s[2].first + k * axes[2].dilation);
          }
        }
      }
      const float grad = g[p * out_size + o];
      if (c.type == "max") {
        int64_t best = cells[0];
        for (int64_t cell : cells) {
          if (xs[cell] > xs[best] || std::isnan(xs[cell])) best = cell;
        }
        e.out[p * out_size + o] = xs[best];
        e.dx[best] += grad;
        continue;
      }
      const float count = static_cast<float>(
          c.exclusive ? s[0].count * s[1].count * s[2].count
                      : s[0].padded * s[1].padded * s[2].padded);
      float sum = 0;
      for (int64_t cell : cells) sum += xs[cell];
      e.out[p * out_size + o] = sum / count;
      const float share = grad / count;
      for (int64_t cell : cells) e.dx[cell] += share;
    }
  }
  return e;
}

// Elements whose bits differ, all NaNs counting as equal.
int64_t BitMismatches(const std::vector<float>& got,
                      const std::vector<float>& want) {
  if (got.size() != want.size()) return -1;
  int64_t mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;
    mismatches += std::memcmp(&got[i], &want[i], sizeof(float)) != 0;
  }
  return mismatches;
}

// `nchw` in `format`; NCHW as it is, of any rank (pool3d's too).
Tensor LaidOut(const Tensor& nchw, const std::string& format) {
  return format == "NCHW" ? nchw : InFormat<float>(nchw, format);
}

// Runs the op and its gradient for `c` on X of `dims` (NCHW; pool2d's X,
// Out and their gradients laid out in `format`) and checks both.
void Check(const std::string& op, const Config& c, const Dims& dims,
           uint32_t seed, const std::string& format = "NCHW") {
  SCOPED_TRACE(absl::StrCat(c.Name(), " ", format));
  const std::string attrs =
      op == "pool2d"
          ? absl::StrCat(c.Attrs(), " attrs { name: 'data_format' s: '", format,
                         "' }")
          : c.Attrs();
  const Tensor x = Awkward(dims, seed);
  auto pooled =
      RunOp(absl::StrCat("type: '", op,
                         "' inputs { slot: 'X' vars: 'x' } outputs { slot: "
                         "'Out' vars: 'y' }",
                         attrs),
            {{"x", LaidOut(x, format)}}, {"y"});
  ASSERT_TRUE(pooled.ok()) << pooled.status();
  const Tensor& y = (*pooled)[0];
  Dims out_dims = dims;
  for (size_t axis = 2; axis < dims.size(); ++axis) {
    out_dims[axis] = format == "NHWC" ? y.dim(axis - 1) : y.dim(axis);
  }
  const Tensor dy = Uniform(out_dims, seed + 1);
  auto grad = RunOp(
      absl::StrCat("type: '", op,
                   "_grad' inputs { slot: 'X' vars: 'x' } inputs { slot: "
                   "'Out@GRAD' vars: 'dy' } outputs { slot: 'X@GRAD' vars: "
                   "'dx' }",
                   attrs),
      {{"x", LaidOut(x, format)}, {"dy", LaidOut(dy, format)}}, {"dx"});
  ASSERT_TRUE(grad.ok()) << grad.status();
  const Expected e = PlainPool(c, x, out_dims, dy);
  const auto in_format = [&](const Dims& nchw_dims,
                             const std::vector<float>& values) {
    return Values<float>(LaidOut(MakeTensor<float>(nchw_dims, values), format));
  };
  EXPECT_EQ(BitMismatches(Values<float>(y), in_format(out_dims, e.out)), 0);
  EXPECT_EQ(BitMismatches(Values<float>((*grad)[0]), in_format(dims, e.dx)), 0);
}

// The padding pairs smaller than a window's extent (as pool ops require).
std::vector<std::pair<int64_t, int64_t>> Paddings(int64_t extent) {
  std::vector<std::pair<int64_t, int64_t>> pads = {{0, 0}};
  if (extent > 1) pads.insert(pads.end(), {{1, 0}, {0, 1}, {1, 1}});
  if (extent > 2) pads.push_back({2, 1});
  return pads;
}

TEST(PoolRowsTest, Pool2dMatchesWindowAtATimeToTheBit) {
  int64_t configs = 0;
  for (const std::string type : {"max", "avg"}) {
    for (const bool exclusive : {true, false}) {
      for (const bool ceil_mode : {false, true}) {
        for (int64_t kw = 1; kw <= 3; ++kw) {
          for (int64_t sw = 1; sw <= 3; ++sw) {
            for (int64_t dw = 1; dw <= 2; ++dw) {
              for (const auto& [pb, pa] : Paddings((kw - 1) * dw + 1)) {
                if (type == "max" && !exclusive) continue;
                Config c{type, exclusive, ceil_mode, {}};
                // Rows vary most; the height takes a 2x2-ish window with
                // padding, so rows start in the padding too.
                c.axes = {{2, 2, 1, 1, 0}, {kw, sw, dw, pb, pa}};
                Check("pool2d", c, {2, 2, 5, 37}, ++configs);
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(configs, 200);
}

TEST(PoolRowsTest, CommonWindowsOnWideRows) {
  // The CNN's 2x2 windows of stride 2 and 3x3 ones of stride 1 and 2, on
  // rows long enough for several vectors, odd widths included.
  for (const std::string type : {"max", "avg"}) {
    for (const Axis& a :
         {Axis{2, 2, 1, 0, 0}, Axis{3, 1, 1, 1, 1}, Axis{3, 2, 1, 1, 1}}) {
      Check("pool2d", Config{type, true, false, {a, a}}, {2, 3, 33, 67}, 7);
      Check("pool2d", Config{type, false, true, {a, a}}, {1, 2, 64, 64}, 8);
    }
  }
}

TEST(PoolRowsTest, GlobalAndWholeRowWindows) {
  for (const std::string type : {"max", "avg"}) {
    // One window per row spanning all of it, and windows wider than half a
    // row (a single full window among partial ones).
    Check("pool2d", Config{type, true, false, {{1, 1}, {40, 1}}}, {2, 2, 3, 40},
          9);
    Check("pool2d", Config{type, true, true, {{1, 1}, {7, 5, 1, 2, 2}}},
          {2, 2, 3, 11}, 10);
  }
}

TEST(PoolRowsTest, Pool3dMatchesWindowAtATimeToTheBit) {
  for (const std::string type : {"max", "avg"}) {
    for (const bool ceil_mode : {false, true}) {
      const Config c{type,
                     true,
                     ceil_mode,
                     {{2, 1, 1, 1, 0}, {3, 2, 1, 1, 1}, {3, 2, 2, 2, 0}}};
      Check("pool3d", c, {2, 2, 4, 6, 29}, 11);
    }
  }
}

// Channels last and blocked, pool2d and its gradient take all of a
// window's channels together, a tap at a time; each channel still follows
// the window-at-a-time rules (first maximum, last NaN, the same order of
// sums), so these too agree with the plain loop to the bit. 19 and 48
// channels: vector loops with a remainder, and six blocks of 8 (NCHW8c) or
// three of 16 (NCHW16c).
TEST(PoolRowsTest, ChannelsLastAndBlockedMatchTheLoopToTheBit) {
  uint32_t seed = 100;
  for (const std::string type : {"max", "avg"}) {
    for (const bool exclusive : {true, false}) {
      if (type == "max" && !exclusive) continue;
      for (const Axis& a : {Axis{2, 2, 1, 0, 0}, Axis{3, 1, 1, 1, 1},
                            Axis{3, 2, 2, 2, 1}, Axis{2, 3, 1, 1, 0}}) {
        for (const bool ceil_mode : {false, true}) {
          const Config c{type, exclusive, ceil_mode, {{2, 1, 1, 1, 0}, a}};
          Check("pool2d", c, {2, 19, 6, 13}, ++seed, "NHWC");
          for (const char* format : kBlockedFormats) {
            Check("pool2d", c, {2, 48, 6, 13}, ++seed, format);
          }
        }
      }
    }
  }
  // Global pooling: one window of all cells.
  for (const std::string type : {"max", "avg"}) {
    const Config c{type, true, false, {{5, 1}, {9, 1}}};
    Check("pool2d", c, {3, 19, 5, 9}, ++seed, "NHWC");
    for (const char* format : kBlockedFormats) {
      Check("pool2d", c, {3, 32, 5, 9}, ++seed, format);
    }
  }
}

}  // namespace
}  // namespace scopeflow
