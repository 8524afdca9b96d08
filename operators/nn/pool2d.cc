// pool1d, pool2d, pool3d: max or average pooling over the spatial axes of
// [N, C, W], [N, C, H, W] and [N, C, D, H, W] tensors, with strides,
// paddings, dilations and ceil_mode. Max pooling may also write the
// positions of the maxima ("Indices").
// pool1d_grad, pool2d_grad, pool3d_grad: their gradients, to each window's
// maximum (max) or spread over the cells its average counted (avg).
//
// One kernel serves the three: pooling over fewer than three spatial axes
// runs as 3-D pooling whose leading axes have size 1. pool2d and
// pool2d_grad also take [N, H, W, C] tensors (data_format "NHWC"), pooled
// with the channels innermost, and channel-blocked [N, C / B, H, W, B] ones
// (data_format "NCHW8c" or "NCHW16c", B = 8 or 16), pooled as
// [N * C / B, H, W, B] channels last.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "framework/op_spec.h"
#include "operators/channel_blocks.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "operators/nn/pool_rows.h"
#include "operators/nn/pool_window.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"
#include "platform/vector_clones.h"

namespace scopeflow {
namespace {

using pool::Layout;
using pool::Taps;

// Checks X and the attributes of the pool op over `kRank` spatial axes and
// sets Out and, if bound, Indices.
template <int kRank>
absl::Status InferPool(InferContext& context) {
  const Layout layout = pool::LayoutOf(context.attrs());
  SF_ASSIGN_OR_RETURN(const VarInfo out,
                      pool::InferOut(context, kRank, layout));
  context.SetOutput("Out", out);
  if (context.HasOutput("Indices")) {
    const std::string& type = context.attrs().Get<std::string>("pooling_type");
    SF_CHECK(type == "max",
             "output \"Indices\" (variable \"%s\") holds the positions of the "
             "maxima: expected pooling_type \"max\", got \"%s\"",
             context.OutputName("Indices"), type);
    // Its offsets count over [N, C, spatial...], a layout neither NHWC nor
    // blocked tensors have.
    SF_CHECK(layout == Layout::kChannelsFirst,
             "output \"Indices\" (variable \"%s\") holds offsets into NCHW "
             "tensors: expected data_format \"NCHW\", got \"%s\"",
             context.OutputName("Indices"),
             context.attrs().Get<std::string>("data_format"));
    context.SetOutput("Indices", 0, kInt64, out.dims);
  }
  return absl::OkStatus();
}

template <int kRank>
absl::Status InferPoolGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(
      const VarInfo out,
      pool::InferOut(context, kRank, pool::LayoutOf(context.attrs())));
  SF_RETURN_IF_ERROR(nn::CheckGradInput(context, "Out@GRAD", out, "Out"));
  return GradsLikeInputs({"X"})(context);
}

// A pool op's windows seen in 3-D, axes [depth, height, width]: pooling
// over fewer spatial axes gets leading axes of size 1 with one-cell
// windows. Per axis, the taps of each output index. Channels first, a
// plane is one sample's channel (a cell one value); channels last, it is
// one sample (a cell `channels` contiguous values); channel-blocked, one
// block of a sample (a cell B contiguous values, B = 8 or 16).
struct Geometry {
  int64_t planes = 0;    // N * C, N with the channels last, N * C / B blocked
  int64_t channels = 1;  // C with the channels last, B blocked, else 1
  std::array<int64_t, 3> in = {1, 1, 1};
  std::array<int64_t, 3> out = {1, 1, 1};
  std::array<int64_t, 3> step = {1, 1, 1};
  std::array<std::vector<Taps>, 3> taps;
  // Along the last axis: the windows' stride, whether they overlap, and
  // [full_begin, full_end), the windows whose taps all lie on the input,
  // which the row loops of channels-first pooling take together
  // (pool_rows.h); empty where they are fewer than kFewestFullWindows.
  int64_t last_stride = 1;
  bool last_overlap = false;
  int64_t full_begin = 0;
  int64_t full_end = 0;
  // Whether a window's taps can be numbered in 32 bits, as the gradient's
  // search for maxima numbers them (pool::ArgMaxTapInto); else its windows
  // go one at a time, a channel at a time.
  bool numbered_taps = true;

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

// The fewest full windows in a row worth taking together (pool_rows.h):
// a vector's worth.
constexpr int64_t kFewestFullWindows = 8;

// The most taps a window may have for Geometry::numbered_taps.
constexpr int64_t kMaxNumberedTaps = std::numeric_limits<int32_t>::max();

Geometry GeometryOf(const Attributes& attrs, absl::Span<const int64_t> x,
                    absl::Span<const int64_t> out) {
  const pool::Planes p = pool::PlanesOf(pool::LayoutOf(attrs), x);
  const pool::Window w =
      pool::WindowOf(attrs, x.subspan(p.first_spatial, p.rank));
  Geometry g;
  g.planes = p.planes;
  g.channels = p.channels;
  for (int axis = 0; axis < 3; ++axis) {
    const int a = axis - (3 - p.rank);  // The op's spatial axis, if any.
    if (a < 0) {
      g.taps[axis] = {Taps{0, 1, 1}};
      continue;
    }
    g.in[axis] = x[p.first_spatial + a];
    g.out[axis] = out[p.first_spatial + a];
    g.step[axis] = w.dilations[a];
    for (int64_t o = 0; o < g.out[axis]; ++o) {
      g.taps[axis].push_back(pool::TapsOf(w, a, g.in[axis], o));
    }
  }
  // A window starts further on than the last, so those whose taps all lie
  // on the input are consecutive.
  const int last = p.rank - 1;
  const std::vector<Taps>& row = g.taps[2];
  const auto full = [&](const Taps& t) { return t.count == w.ksize[last]; };
  int64_t taps = 1;
  for (int64_t size : w.ksize) {
    g.numbered_taps = g.numbered_taps && size <= kMaxNumberedTaps / taps;
    taps *= g.numbered_taps ? size : 1;
  }
  g.last_stride = w.strides[last];
  g.last_overlap = w.strides[last] < w.Extent(last);
  g.full_begin = std::find_if(row.begin(), row.end(), full) - row.begin();
  g.full_end = row.rend() - std::find_if(row.rbegin(), row.rend(), full);
  // Too few full windows take longer together than one at a time: a loop
  // per tap over a window or two (global pooling's one window per plane).
  if (g.full_end - g.full_begin < kFewestFullWindows) g.full_end = g.full_begin;
  return g;
}

// Calls cell(offset) for every input cell of the window with taps `t`, in
// row-major order; offsets are within one plane.
template <typename Cell>
void ForEachCell(const Geometry& g, const std::array<const Taps*, 3>& t,
                 Cell cell) {
  for (int64_t i = 0; i < t[0]->count; ++i) {
    const int64_t d = t[0]->first + i * g.step[0];
    for (int64_t j = 0; j < t[1]->count; ++j) {
      const int64_t row = (d * g.in[1] + t[1]->first + j * g.step[1]) * g.in[2];
      for (int64_t k = 0; k < t[2]->count; ++k) {
        cell(row + t[2]->first + k * g.step[2]);
      }
    }
  }
}

// Calls window(out_offset, taps) for the windows of row `row` of a plane:
// those that share their depth and height taps, in order.
template <typename Fn>
void ForEachWindowOfRow(const Geometry& g, int64_t row, Fn window) {
  const Taps& d = g.taps[0][row / g.out[1]];
  const Taps& h = g.taps[1][row % g.out[1]];
  int64_t offset = row * g.out[2];
  for (const Taps& w : g.taps[2]) {
    window(offset++, std::array<const Taps*, 3>{&d, &h, &w});
  }
}

// Calls window(out_offset, taps) for every window of a plane, in row-major
// order.
template <typename Fn>
void ForEachWindow(const Geometry& g, Fn window) {
  for (int64_t row = 0; row < g.out[0] * g.out[1]; ++row) {
    ForEachWindowOfRow(g, row, window);
  }
}

// The fewest input cells (values, with the channels last) worth pooling on
// a thread of their own.
constexpr int64_t kCellsWorthAThread = int64_t{1} << 15;

// Calls row_fn(plane, row) for every row of windows of every plane (the
// windows of a plane that share their depth and height taps), spread over
// threads: rows write disjoint outputs, so they run in any order. A thread
// takes at least about kCellsWorthAThread input cells.
template <typename Fn>
void ForEachRowInParallel(const Geometry& g, Fn row_fn) {
  const int64_t rows_per_plane = g.out[0] * g.out[1];
  const int64_t cells_per_row =
      std::max<int64_t>(1, g.in_size() * g.channels / rows_per_plane);
  const int64_t grain =
      (kCellsWorthAThread + cells_per_row - 1) / cells_per_row;
  ParallelFor(g.planes * rows_per_plane, grain,
              [&](int64_t begin, int64_t end) {
                for (int64_t row = begin; row < end; ++row) {
                  row_fn(row / rows_per_plane, row % rows_per_plane);
                }
              });
}

// Calls window(plane, out_offset, taps) for every window of every plane,
// spread over threads by rows as ForEachRowInParallel.
template <typename Fn>
void ForEachWindowInParallel(const Geometry& g, Fn window) {
  ForEachRowInParallel(g, [&](int64_t plane, int64_t row) {
    ForEachWindowOfRow(g, row,
                       [&](int64_t w, const std::array<const Taps*, 3>& t) {
                         window(plane, w, t);
                       });
  });
}

// The cell (offset in the plane) whose value max pooling keeps: the first
// maximum, or the last NaN. Cell c's value is in[c * stride] (a channel's
// with the channels last). Inference leaves no window without cells.
template <typename T>
int64_t MaxCell(const T* in, const Geometry& g,
                const std::array<const Taps*, 3>& t, int64_t stride = 1) {
  int64_t best = -1;
  ForEachCell(g, t, [&](int64_t cell) {
    const T v = in[cell * stride];
    if (best < 0 || v > in[best * stride] || std::isnan(v)) best = cell;
  });
  return best;
}

// MaxCell's value, where its position is not needed. MaxCell's branches
// mispredict on unordered data; this loop's compare and select compile
// without branches (x86's max instruction). It drops NaNs, so a window
// holding one takes MaxCell's way. -inf changes no maximum.
template <typename T>
T MaxValue(const T* in, const Geometry& g,
           const std::array<const Taps*, 3>& t) {
  // Integers (quantized images) have no infinity: their lowest value
  // changes no maximum either.
  T best = std::numeric_limits<T>::has_infinity
               ? -std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::lowest();
  bool nan = false;
  ForEachCell(g, t, [&](int64_t cell) {
    const T v = in[cell];
    best = v > best ? v : best;
    nan |= v != v;
  });
  return nan ? in[MaxCell(in, g, t)] : best;
}

// What average pooling divides a window's sum by: its input cells
// (exclusive), or its cells counting padding.
int64_t AverageCount(const std::array<const Taps*, 3>& t, bool exclusive) {
  return exclusive ? t[0]->count * t[1]->count * t[2]->count
                   : t[0]->padded * t[1]->padded * t[2]->padded;
}

// The average of the window with taps `t`, summed in row-major order.
template <typename T>
T AverageValue(const T* in, const Geometry& g,
               const std::array<const Taps*, 3>& t, bool exclusive) {
  T sum = 0;
  ForEachCell(g, t, [&](int64_t cell) { sum += in[cell]; });
  return sum / static_cast<T>(AverageCount(t, exclusive));
}

// Calls tap(cell) with the plane offset of the first tap of window
// g.full_begin for each of its taps, in row-major order, the windows of a
// row with depth and height taps `d` and `h`: the same tap of window
// full_begin + o is o * g.last_stride cells on (pool_rows.h).
template <typename Fn>
void ForEachTapOfFullWindows(const Geometry& g, const Taps& d, const Taps& h,
                             Fn tap) {
  const std::array<const Taps*, 3> t = {&d, &h, &g.taps[2][g.full_begin]};
  ForEachCell(g, t, tap);
}

// Channels-first max (without Indices) or average pooling of the windows
// of row `row` of plane `in` into `out_row`: the full windows take their
// taps together (pool_rows.h), those at the edges one at a time.
template <typename T>
void PoolRowChannelsFirst(const Geometry& g, int64_t row, bool is_max,
                          bool exclusive, const T* in, T* out_row) {
  const Taps& d = g.taps[0][row / g.out[1]];
  const Taps& h = g.taps[1][row % g.out[1]];
  const auto window = [&](int64_t o) {
    const std::array<const Taps*, 3> t = {&d, &h, &g.taps[2][o]};
    out_row[o] =
        is_max ? MaxValue(in, g, t) : AverageValue(in, g, t, exclusive);
  };
  for (int64_t o = 0; o < g.full_begin; ++o) window(o);
  const int64_t n = g.full_end - g.full_begin;
  if (n > 0) {
    T* dst = out_row + g.full_begin;
    if (!is_max) std::fill(dst, dst + n, T{0});
    const int64_t s = g.last_stride;
    pool::WithStride(s, [&](auto stride) {
      constexpr int64_t kStride = decltype(stride)::value;
      bool first = true;
      ForEachTapOfFullWindows(g, d, h, [&](int64_t cell) {
        if (!is_max) {
          pool::AddTapInto<kStride>(in + cell, s, n, dst);
        } else if (first) {
          pool::CopyTap<kStride>(in + cell, s, n, dst);
        } else {
          pool::MaxTapInto<kStride>(in + cell, s, n, dst);
        }
        first = false;
      });
    });
    if (!is_max) {
      // Full windows all count their ksize taps along the row.
      const std::array<const Taps*, 3> t = {&d, &h, &g.taps[2][g.full_begin]};
      const T count = static_cast<T>(AverageCount(t, exclusive));
      for (int64_t o = 0; o < n; ++o) dst[o] /= count;
    }
  }
  for (int64_t o = g.full_end; o < g.out[2]; ++o) window(o);
}

// Per thread, the scratch rows of gradients.
template <typename T>
struct GradRowScratch {
  std::vector<T> values;
  std::vector<int64_t> cells;
  std::vector<int32_t> taps;
};

// Channels-first: the gradient of the windows of row `row` (of plane `in`,
// gradients `grad_row`) added into the plane's `dx`, in the order the
// windows come. Max: the full windows find their maxima together and then
// add in window order. Average: windows that do not overlap along the row
// spread their shares together (each cell then takes at most one share of
// the row, so the order is the same); overlapping ones go one at a time.
template <typename T>
void PoolGradRowChannelsFirst(const Geometry& g, int64_t row, bool is_max,
                              bool exclusive, const T* in, const T* grad_row,
                              T* dx, GradRowScratch<T>& scratch) {
  const Taps& d = g.taps[0][row / g.out[1]];
  const Taps& h = g.taps[1][row % g.out[1]];
  const auto window = [&](int64_t o) {
    const std::array<const Taps*, 3> t = {&d, &h, &g.taps[2][o]};
    if (is_max) {
      dx[MaxCell(in, g, t)] += grad_row[o];
      return;
    }
    const T share = grad_row[o] / static_cast<T>(AverageCount(t, exclusive));
    ForEachCell(g, t, [&](int64_t cell) { dx[cell] += share; });
  };
  for (int64_t o = 0; o < g.full_begin; ++o) window(o);
  const int64_t n = g.full_end - g.full_begin;
  if (is_max ? !g.numbered_taps : g.last_overlap) {
    for (int64_t o = g.full_begin; o < g.full_end; ++o) window(o);
  } else if (n > 0) {
    scratch.values.resize(n);
    scratch.taps.resize(n);
    T* values = scratch.values.data();
    int32_t* taps = scratch.taps.data();
    const int64_t s = g.last_stride;
    pool::WithStride(s, [&](auto stride) {
      constexpr int64_t kStride = decltype(stride)::value;
      if (is_max) {
        // The first full window's taps: window o's are `o * s` further on.
        std::vector<int64_t>& cells = scratch.cells;
        cells.clear();
        ForEachTapOfFullWindows(g, d, h, [&](int64_t cell) {
          if (cells.empty()) {
            pool::CopyTap<kStride>(in + cell, s, n, values);
            std::fill(taps, taps + n, 0);
          } else {
            pool::ArgMaxTapInto<kStride>(in + cell, s, n,
                                         static_cast<int32_t>(cells.size()),
                                         values, taps);
          }
          cells.push_back(cell);
        });
        const T* grad = grad_row + g.full_begin;
        for (int64_t o = 0; o < n; ++o) dx[cells[taps[o]] + o * s] += grad[o];
        return;
      }
      const std::array<const Taps*, 3> t = {&d, &h, &g.taps[2][g.full_begin]};
      const T count = static_cast<T>(AverageCount(t, exclusive));
      for (int64_t o = 0; o < n; ++o) {
        values[o] = grad_row[g.full_begin + o] / count;
      }
      ForEachTapOfFullWindows(g, d, h, [&](int64_t cell) {
        pool::SpreadTap<kStride>(values, s, n, dx + cell);
      });
    });
  }
  for (int64_t o = g.full_end; o < g.out[2]; ++o) window(o);
}

// A cell's offset in the plane with the spatial axes in column-major order
// (the first fastest), as ONNX's storage_order = 1 numbers them.
int64_t ColumnMajor(const Geometry& g, int64_t cell) {
  const int64_t w = cell % g.in[2];
  const int64_t h = cell / g.in[2] % g.in[1];
  const int64_t d = cell / (g.in[2] * g.in[1]);
  return d + g.in[0] * (h + g.in[1] * w);
}

// Combines one further tap's `n` channels into a window's outputs `dst`:
// plain loops over contiguous channels, so that they vectorise. The select
// keeps MaxCell's rule that a NaN wins (v != v: v is NaN).
template <typename T>
void MaxInto(const T* __restrict src, T* __restrict dst, int64_t n) {
  for (int64_t c = 0; c < n; ++c) {
    const T v = src[c];
    const T b = dst[c];
    dst[c] = v > b || v != v ? v : b;
  }
}

template <typename T>
void AddInto(const T* __restrict src, T* __restrict dst, int64_t n) {
  for (int64_t c = 0; c < n; ++c) dst[c] += src[c];
}

// AddInto for floats on the widest vectors the CPU has: average pooling
// with the channels last adds a cell's channels at a time (a global pool
// of 1152 channels: 72 AVX-512 additions a cell, against 288 SSE2 ones).
SF_WIDEST_VECTORS void AddFloatsInto(const float* __restrict src,
                                     float* __restrict dst, int64_t n) {
  AddInto(src, dst, n);
}

// The maxima of `n` float channels over the cells of `windows` windows,
// into `dst` one window after the other, by MaxInto: window o's cells lie
// at value offsets `cells` from in + o * window_stride. With the channels
// last (or blocked), a window's channels go on the widest vectors there
// are (a 2x2 window of 32 channels takes 2 AVX-512 vectors a cell, against
// 8 SSE2 ones), and a row's full windows go in one call, without a call
// per window to gather its cells (pool2d_benchmark's max pooling: 1.6-2.6x
// on NCHW16c, 1.3-1.8x on NHWC). GCC inlines MaxInto's loop into each version,
// which compiles it for that version's vectors.
SF_WIDEST_VECTORS
void MaxOfWindows(const float* in, const int64_t* cells, int64_t num_cells,
                  int64_t window_stride, int64_t windows, int64_t n,
                  float* __restrict dst) {
  for (int64_t o = 0; o < windows; ++o, in += window_stride, dst += n) {
    std::copy(in + cells[0], in + cells[0] + n, dst);
    for (int64_t i = 1; i < num_cells; ++i) MaxInto(in + cells[i], dst, n);
  }
}

// Float max pooling with the channels last (or blocked), a row of windows
// at a time: the full windows of a row (Geometry::full_begin to full_end)
// share their cells' pattern, moved by the stride, and go together; the
// others one at a time.
void MaxPoolChannelsLast(const Geometry& g, const float* x, float* out) {
  const int64_t channels = g.channels;
  ForEachRowInParallel(g, [&](int64_t plane, int64_t row) {
    const float* in = x + plane * g.in_size() * channels;
    float* dst = out + (plane * g.out_size() + row * g.out[2]) * channels;
    const Taps& d = g.taps[0][row / g.out[1]];
    const Taps& h = g.taps[1][row % g.out[1]];
    // The cells of a window as value offsets: a window holds a few.
    thread_local std::vector<int64_t> cells;
    const auto windows = [&](int64_t first, int64_t count) {
      cells.clear();
      ForEachCell(g, {&d, &h, &g.taps[2][first]},
                  [&](int64_t cell) { cells.push_back(cell * channels); });
      MaxOfWindows(in, cells.data(), static_cast<int64_t>(cells.size()),
                   g.last_stride * channels, count, channels,
                   dst + first * channels);
    };
    for (int64_t o = 0; o < g.full_begin; ++o) windows(o, 1);
    if (g.full_end > g.full_begin) {
      windows(g.full_begin, g.full_end - g.full_begin);
    }
    for (int64_t o = std::max(g.full_begin, g.full_end); o < g.out[2]; ++o) {
      windows(o, 1);
    }
  });
}

// Pooling with the channels last (or blocked): each window's C outputs
// take in each of its cells' C values, max starting from the first cell's.
// Average pooling sums from zero in the order the channels-first path
// does, so both agree exactly (a window of -0.0 alone averages to +0.0 in
// both). kChannels, where not 0, is g.channels known at compile
// time: a block's 8 or 16 channels then take a few vector instructions per
// cell instead of a loop whose length is read at run time. Float max
// pooling takes MaxPoolChannelsLast instead but for blocks of 8: 16
// channels fill one AVX-512 vector there, against four SSE2 ones compiled
// here.
template <typename T, int64_t kChannels = 0>
void PoolChannelsLast(const Geometry& g, bool is_max, bool exclusive,
                      const T* x, T* out) {
  const int64_t channels = kChannels > 0 ? kChannels : g.channels;
  if constexpr (std::is_same_v<T, float> && kChannels != 8) {
    if (is_max) {
      MaxPoolChannelsLast(g, x, out);
      return;
    }
  }
  ForEachWindowInParallel(
      g, [&](int64_t plane, int64_t w, const std::array<const Taps*, 3>& t) {
        const T* in = x + plane * g.in_size() * channels;
        T* dst = out + (plane * g.out_size() + w) * channels;
        bool first = is_max;
        if (!is_max) std::fill(dst, dst + channels, T{0});
        ForEachCell(g, t, [&](int64_t cell) {
          const T* src = in + cell * channels;
          if (first) {
            std::copy(src, src + channels, dst);
            first = false;
          } else if (is_max) {
            MaxInto(src, dst, channels);
          } else if constexpr (std::is_same_v<T, float>) {
            AddFloatsInto(src, dst, channels);
          } else {
            AddInto(src, dst, channels);
          }
        });
        if (is_max) return;
        const T count = static_cast<T>(AverageCount(t, exclusive));
        for (int64_t c = 0; c < channels; ++c) dst[c] /= count;
      });
}

template <typename T>
absl::Status PoolKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& out = *context.Output("Out");
  const Geometry g = GeometryOf(context.attrs(), x.dims(), out.dims());
  const bool is_max = context.attrs().Get<std::string>("pooling_type") == "max";
  const bool exclusive = context.attrs().Get<bool>("exclusive");
  if constexpr (std::is_integral_v<T>) {
    // A sum of int8 values overflows int8, and ONNX averages no integers.
    SF_CHECK(is_max,
             "input \"X\" (variable \"%s\") is %s: average pooling takes "
             "float32 or float64; %s images pool with \"max\" only",
             context.InputName("X"), DataTypeName(x.dtype()),
             DataTypeName(x.dtype()));
  }
  if (pool::LayoutOf(context.attrs()) != Layout::kChannelsFirst) {
    // The blocks' sizes (NHWC tensors of 8 or 16 channels take them too).
    if (g.channels == 8) {
      PoolChannelsLast<T, 8>(g, is_max, exclusive, x.data<T>(), out.data<T>());
    } else if (g.channels == 16) {
      PoolChannelsLast<T, 16>(g, is_max, exclusive, x.data<T>(), out.data<T>());
    } else {
      PoolChannelsLast<T>(g, is_max, exclusive, x.data<T>(), out.data<T>());
    }
    return absl::OkStatus();
  }
  int64_t* indices = context.HasOutput("Indices")
                         ? context.Output("Indices")->data<int64_t>()
                         : nullptr;
  const bool column_major =
      context.attrs().Get<std::string>("storage_order") == "column_major";
  if (indices == nullptr) {
    ForEachRowInParallel(g, [&](int64_t plane, int64_t row) {
      PoolRowChannelsFirst(
          g, row, is_max, exclusive, x.data<T>() + plane * g.in_size(),
          out.data<T>() + plane * g.out_size() + row * g.out[2]);
    });
    return absl::OkStatus();
  }
  ForEachWindowInParallel(
      g, [&](int64_t plane, int64_t w, const std::array<const Taps*, 3>& t) {
        const T* in = x.data<T>() + plane * g.in_size();
        const int64_t best = MaxCell(in, g, t);
        out.data<T>()[plane * g.out_size() + w] = in[best];
        indices[plane * g.out_size() + w] =
            plane * g.in_size() + (column_major ? ColumnMajor(g, best) : best);
      });
  return absl::OkStatus();
}

// Channels last or blocked: the gradient of one plane's windows added into
// the plane's `dx`, in window order. Max: each window finds its channels'
// maxima together, a tap at a time (as a row's windows do channels first,
// pool_rows.h), and adds each channel's gradient to the cell of its
// maximum.
template <typename T>
void PoolGradChannelsLast(const Geometry& g, bool is_max, bool exclusive,
                          const T* in, const T* grad, T* dx,
                          GradRowScratch<T>& scratch) {
  const int64_t n = g.channels;
  scratch.values.resize(n);
  scratch.taps.resize(n);
  T* values = scratch.values.data();
  int32_t* taps = scratch.taps.data();
  ForEachWindow(g, [&](int64_t w, const std::array<const Taps*, 3>& t) {
    const T* grad_w = grad + w * n;
    if (is_max && !g.numbered_taps) {
      for (int64_t c = 0; c < n; ++c) {
        dx[MaxCell(in + c, g, t, n) * n + c] += grad_w[c];
      }
      return;
    }
    if (is_max) {
      scratch.cells.clear();
      ForEachCell(g, t, [&](int64_t cell) {
        const T* src = in + cell * n;
        if (scratch.cells.empty()) {
          std::copy(src, src + n, values);
          std::fill(taps, taps + n, 0);
        } else {
          pool::ArgMaxTapInto<1>(src, 1, n,
                                 static_cast<int32_t>(scratch.cells.size()),
                                 values, taps);
        }
        scratch.cells.push_back(cell * n);
      });
      const int64_t* cells = scratch.cells.data();
      for (int64_t c = 0; c < n; ++c) dx[cells[taps[c]] + c] += grad_w[c];
      return;
    }
    const T count = static_cast<T>(AverageCount(t, exclusive));
    for (int64_t c = 0; c < n; ++c) values[c] = grad_w[c] / count;
    ForEachCell(g, t, [&](int64_t cell) { AddInto(values, dx + cell * n, n); });
  });
}

// Max: each window's gradient goes to its maximum (found again from X).
// Avg: spread evenly over the window's input cells, divided by the count
// the forward divided by (so padding cells take their share, dropped, when
// not exclusive).
template <typename T>
absl::Status PoolGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  const Tensor& d_out = context.Input("Out@GRAD");
  Tensor& d_x = *context.Output("X@GRAD");
  const Geometry g = GeometryOf(context.attrs(), x.dims(), d_out.dims());
  const bool is_max = context.attrs().Get<std::string>("pooling_type") == "max";
  const bool exclusive = context.attrs().Get<bool>("exclusive");
  // Channels last or blocked, a cell holds `channels` values: per channel,
  // the same as channels first.
  const int64_t channels = g.channels;
  // Windows of one plane may overlap, so a plane's gradient adds up on one
  // thread; planes go to threads, kCellsWorthAThread cells or more each.
  // (Splitting a sample's channels between threads, for NHWC batches of
  // one, measured slower: the threads' start outweighed the halved work.)
  const int64_t plane_cells = std::max<int64_t>(1, g.in_size() * channels);
  const int64_t grain = (kCellsWorthAThread + plane_cells - 1) / plane_cells;
  ParallelFor(g.planes, grain, [&](int64_t begin, int64_t end) {
    GradRowScratch<T> scratch;
    for (int64_t plane = begin; plane < end; ++plane) {
      const T* in = x.data<T>() + plane * g.in_size() * channels;
      const T* grad = d_out.data<T>() + plane * g.out_size() * channels;
      T* dx = d_x.data<T>() + plane * g.in_size() * channels;
      // Zeroed here rather than all at once before: on the plane's thread,
      // while the plane is about to be written anyway.
      std::fill(dx, dx + g.in_size() * channels, T{0});
      if (channels == 1) {
        for (int64_t row = 0; row < g.out[0] * g.out[1]; ++row) {
          PoolGradRowChannelsFirst(g, row, is_max, exclusive, in,
                                   grad + row * g.out[2], dx, scratch);
        }
      } else {
        PoolGradChannelsLast(g, is_max, exclusive, in, grad, dx, scratch);
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace

// The three ops and their gradient ops declare the same attributes, with
// one value per spatial axis. "paddings" holds one value per axis (both
// ends alike) or [before, after] per axis. ceil_mode rounds the output
// size up, so the last window may hang over the trailing padding; no
// window starts inside it. Average pooling divides by the window's input
// cells (exclusive) or by its cells counting padding (not exclusive; cells
// past the padding never count). "Indices" (max only, int64) holds each
// maximum's offset in X, counted over N and C too, with the spatial axes
// row-major or, with storage_order "column_major", the first fastest.
// pool2d and pool2d_grad take "data_format": "NCHW" ([N, C, H, W] in and
// out), "NHWC" ([N, H, W, C] in and out), "NCHW8c" ([N, C / 8, H, W, 8]
// in and out) or "NCHW16c" ([N, C / 16, H, W, 16] in and out,
// operators/channel_blocks.h), the other attributes alike in all four;
// Indices is available in NCHW only.
SF_REGISTER_OP(pool1d)
    .Input("X")
    .Output("Out")
    .Output("Indices", /*optional=*/true)
    .Attr("pooling_type", AttrType::kString, OneOf({"max", "avg"}))
    .Attr("ksize", AttrType::kInts, pool::PositivePerAxis(1))
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1}),
          pool::PositivePerAxis(1))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0}),
          pool::PaddingsPerAxis(1))
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{1}),
          pool::PositivePerAxis(1))
    .Attr("global_pooling", AttrType::kBool, AttrValue(false))
    .Attr("exclusive", AttrType::kBool, AttrValue(true))
    .Attr("ceil_mode", AttrType::kBool, AttrValue(false))
    .Attr("storage_order", AttrType::kString,
          AttrValue(std::string("row_major")),
          OneOf({"row_major", "column_major"}))
    .Infer(InferPool<1>)
    .Grad(GradSpec("pool1d_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &PoolKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PoolKernel<double>);

SF_REGISTER_OP(pool2d)
    .Input("X")
    .Output("Out")
    .Output("Indices", /*optional=*/true)
    .Layout(LayoutRole::kDataFormat)
    .Attr("pooling_type", AttrType::kString, OneOf({"max", "avg"}))
    .Attr("ksize", AttrType::kInts, pool::PositivePerAxis(2))
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          pool::PositivePerAxis(2))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0}),
          pool::PaddingsPerAxis(2))
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          pool::PositivePerAxis(2))
    .Attr("global_pooling", AttrType::kBool, AttrValue(false))
    .Attr("exclusive", AttrType::kBool, AttrValue(true))
    .Attr("ceil_mode", AttrType::kBool, AttrValue(false))
    .Attr("storage_order", AttrType::kString,
          AttrValue(std::string("row_major")),
          OneOf({"row_major", "column_major"}))
    .Attr("data_format", AttrType::kString, AttrValue(std::string("NCHW")),
          OneOf(ImageFormatNames()))
    .Infer(InferPool<2>)
    .Grad(GradSpec("pool2d_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &PoolKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PoolKernel<double>)
    .Kernel(DeviceType::kCPU, kInt8, &PoolKernel<int8_t>)
    .Kernel(DeviceType::kCPU, kUInt8, &PoolKernel<uint8_t>);

SF_REGISTER_OP(pool3d)
    .Input("X")
    .Output("Out")
    .Output("Indices", /*optional=*/true)
    .Attr("pooling_type", AttrType::kString, OneOf({"max", "avg"}))
    .Attr("ksize", AttrType::kInts, pool::PositivePerAxis(3))
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1, 1}),
          pool::PositivePerAxis(3))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0, 0}),
          pool::PaddingsPerAxis(3))
    .Attr("dilations", AttrType::kInts,
          AttrValue(std::vector<int32_t>{1, 1, 1}), pool::PositivePerAxis(3))
    .Attr("global_pooling", AttrType::kBool, AttrValue(false))
    .Attr("exclusive", AttrType::kBool, AttrValue(true))
    .Attr("ceil_mode", AttrType::kBool, AttrValue(false))
    .Attr("storage_order", AttrType::kString,
          AttrValue(std::string("row_major")),
          OneOf({"row_major", "column_major"}))
    .Infer(InferPool<3>)
    .Grad(GradSpec("pool3d_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &PoolKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PoolKernel<double>);

// Max pooling finds each window's maximum again from X rather than reading
// Out, so the gradient goes to one cell even where several tie.
SF_REGISTER_OP(pool1d_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("pooling_type", AttrType::kString, OneOf({"max", "avg"}))
    .Attr("ksize", AttrType::kInts, pool::PositivePerAxis(1))
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1}),
          pool::PositivePerAxis(1))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0}),
          pool::PaddingsPerAxis(1))
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{1}),
          pool::PositivePerAxis(1))
    .Attr("global_pooling", AttrType::kBool, AttrValue(false))
    .Attr("exclusive", AttrType::kBool, AttrValue(true))
    .Attr("ceil_mode", AttrType::kBool, AttrValue(false))
    .Attr("storage_order", AttrType::kString,
          AttrValue(std::string("row_major")),
          OneOf({"row_major", "column_major"}))
    .Infer(InferPoolGrad<1>)
    .Kernel(DeviceType::kCPU, kFloat32, &PoolGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PoolGradKernel<double>);

SF_REGISTER_OP(pool2d_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("pooling_type", AttrType::kString, OneOf({"max", "avg"}))
    .Attr("ksize", AttrType::kInts, pool::PositivePerAxis(2))
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          pool::PositivePerAxis(2))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0}),
          pool::PaddingsPerAxis(2))
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          pool::PositivePerAxis(2))
    .Attr("global_pooling", AttrType::kBool, AttrValue(false))
    .Attr("exclusive", AttrType::kBool, AttrValue(true))
    .Attr("ceil_mode", AttrType::kBool, AttrValue(false))
    .Attr("storage_order", AttrType::kString,
          AttrValue(std::string("row_major")),
          OneOf({"row_major", "column_major"}))
    .Attr("data_format", AttrType::kString, AttrValue(std::string("NCHW")),
          OneOf(ImageFormatNames()))
    .Infer(InferPoolGrad<2>)
    .Kernel(DeviceType::kCPU, kFloat32, &PoolGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PoolGradKernel<double>);

SF_REGISTER_OP(pool3d_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("pooling_type", AttrType::kString, OneOf({"max", "avg"}))
    .Attr("ksize", AttrType::kInts, pool::PositivePerAxis(3))
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1, 1}),
          pool::PositivePerAxis(3))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0, 0}),
          pool::PaddingsPerAxis(3))
    .Attr("dilations", AttrType::kInts,
          AttrValue(std::vector<int32_t>{1, 1, 1}), pool::PositivePerAxis(3))
    .Attr("global_pooling", AttrType::kBool, AttrValue(false))
    .Attr("exclusive", AttrType::kBool, AttrValue(true))
    .Attr("ceil_mode", AttrType::kBool, AttrValue(false))
    .Attr("storage_order", AttrType::kString,
          AttrValue(std::string("row_major")),
          OneOf({"row_major", "column_major"}))
    .Infer(InferPoolGrad<3>)
    .Kernel(DeviceType::kCPU, kFloat32, &PoolGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PoolGradKernel<double>);

}  // namespace scopeflow
