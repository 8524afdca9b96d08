// grid_sample: samples X (N, C, D1..Dr; r = 1 to 3 spatial axes) at the
// points a grid gives, as ONNX GridSample (16, 20, 22) and PyTorch's
// grid_sample define it. Grid is (N, O1..Or, r), its last axis the
// normalized coordinates of a point, x first (grid[..., 0] indexes Dr, the
// last spatial axis of X); -1 and 1 are the image's borders (cell centres of
// the corners with align_corners, their outer edges without). Out is
// (N, C, O1..Or). Modes nearest (half to even), linear (bi-/trilinear) and
// cubic (bicubic, a = -0.75); padding_mode zeros, border or reflection says
// what lies outside the image (see grid_taps.h).
//
// grid_sample_grad: the gradients of X and Grid. Out is linear in X for a
// fixed grid, so X@GRAD scatters Out@GRAD with the sampling weights, in
// every mode. Grid@GRAD is the slope of the weights in the grid: linear
// and cubic have one wherever the coordinate is not on a tap boundary (or
// clamped by padding "border", where it is 0); nearest is piecewise
// constant, so its grid gradient is 0 (almost everywhere, as PyTorch's).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "operators/spatial/grid_taps.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using grid_sample::AxisTaps;
using grid_sample::Mode;
using grid_sample::Padding;

constexpr int kMaxAxes = 3;

absl::StatusOr<VarInfo> InferOutput(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Grid"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Grid"));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 3, 2 + kMaxAxes));
  const VarInfo& x = context.Input("X");
  const VarInfo& grid = context.Input("Grid");
  if (!x.has_dims) return VarInfo{x.dtype, Dims(), false};
  const int rank = static_cast<int>(x.dims.size());
  SF_RETURN_IF_ERROR(CheckRank(context, "Grid", rank, rank));
  if (!grid.has_dims) return VarInfo{x.dtype, Dims(rank, -1), true};
  const int64_t axes = rank - 2;
  SF_CHECK(grid.dims[rank - 1] < 0 || grid.dims[rank - 1] == axes,
           "%s: expected its last axis to hold %d coordinates, one per "
           "spatial axis of %s",
           DescribeInputShape(context, "Grid"), axes,
           DescribeInputShape(context, "X"));
  SF_CHECK(x.dims[0] < 0 || grid.dims[0] < 0 || x.dims[0] == grid.dims[0],
           "%s: expected the batch of %s", DescribeInputShape(context, "Grid"),
           DescribeInputShape(context, "X"));
  Dims out = {x.dims[0] >= 0 ? x.dims[0] : grid.dims[0], x.dims[1]};
  for (int a = 1; a <= axes; ++a) out.push_back(grid.dims[a]);
  const bool no_points = std::count(out.begin(), out.end(), 0) > 0;
  for (int a = 2; a < rank; ++a) {
    SF_CHECK(x.dims[a] != 0 || no_points,
             "%s has an empty spatial axis %d: no cell to sample",
             DescribeInputShape(context, "X"), a);
  }
  return VarInfo{x.dtype, out, true};
}

absl::Status InferGridSample(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status InferGridSampleGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  SF_RETURN_IF_ERROR(nn::CheckGradInput(context, "Out@GRAD", out, "Out"));
  return GradsLikeInputs({"X", "Grid"})(context);
}

// One combination of taps, one per axis: the offset it reads in a channel
// of X, its weight, and the weight's partial derivative in each grid
// coordinate (indexed by spatial axis).
struct Tap {
  int64_t offset;
  double weight;
  double partial[kMaxAxes];
};

// The sizes and options every sample shares.
struct Sampling {
  int axes = 0;
  Dims in;  // spatial dims of X
  int64_t in_size = 1;
  int64_t out_size = 1;  // points per batch item
  int64_t batch = 0;
  int64_t channels = 0;
  Mode mode = Mode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

Sampling SamplingOf(const KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& grid = context.Input("Grid");
  Sampling s;
  s.axes = static_cast<int>(x.dims().size()) - 2;
  s.batch = x.dims()[0];
  s.channels = x.dims()[1];
  s.in.assign(x.dims().begin() + 2, x.dims().end());
  s.in_size = NumElements(s.in);
  for (int a = 1; a <= s.axes; ++a) s.out_size *= grid.dims()[a];
  s.mode = grid_sample::ModeOf(context.attrs().Get<std::string>("mode"));
  s.padding =
      grid_sample::PaddingOf(context.attrs().Get<std::string>("padding_mode"));
  s.align_corners = context.attrs().Get<bool>("align_corners");
  return s;
}

// The taps of the point whose coordinates are `g` (x first), into `taps`;
// only those reading inside X.
template <typename T>
void TapsAt(const Sampling& s, const T* g, std::vector<Tap>& taps) {
  AxisTaps axis[kMaxAxes];
  int64_t stride[kMaxAxes];
  int64_t step = 1;
  for (int a = s.axes - 1; a >= 0; --a) {
    axis[a] = grid_sample::TapsOf(static_cast<double>(g[s.axes - 1 - a]),
                                  s.in[a], s.mode, s.padding, s.align_corners);
    stride[a] = step;
    step *= s.in[a];
  }
  taps.clear();
  int k[kMaxAxes] = {0, 0, 0};
  while (true) {
    Tap tap{0, 1.0, {1.0, 1.0, 1.0}};
    bool inside = true;
    for (int a = 0; a < s.axes; ++a) {
      const int64_t index = axis[a].index[k[a]];
      inside = inside && index >= 0;
      tap.offset += index * stride[a];
      tap.weight *= axis[a].weight[k[a]];
      for (int b = 0; b < s.axes; ++b) {
        tap.partial[b] *= b == a ? axis[a].slope[k[a]] : axis[a].weight[k[a]];
      }
    }
    if (inside) taps.push_back(tap);
    int a = s.axes - 1;
    while (a >= 0 && ++k[a] == axis[a].count) k[a--] = 0;
    if (a < 0) break;
  }
}

template <typename T>
absl::Status GridSampleKernel(KernelContext& context) {
  const Sampling s = SamplingOf(context);
  const T* x = context.Input("X").data<T>();
  const T* grid = context.Input("Grid").data<T>();
  T* out = context.Output("Out")->data<T>();
  const int64_t points = s.batch * s.out_size;
  // Points on separate threads write separate outputs; a thread's share
  // should hold some 4096 samples (points times channels) to pay for it.
  ParallelFor(
      points, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, s.channels)),
      [&](int64_t begin, int64_t end) {
        std::vector<Tap> taps;
        for (int64_t i = begin; i < end; ++i) {
          const int64_t b = i / s.out_size;
          const int64_t p = i % s.out_size;
          TapsAt(s, grid + i * s.axes, taps);
          for (int64_t c = 0; c < s.channels; ++c) {
            const T* image = x + (b * s.channels + c) * s.in_size;
            double sum = 0;
            for (const Tap& tap : taps) {
              sum += tap.weight * static_cast<double>(image[tap.offset]);
            }
            out[(b * s.channels + c) * s.out_size + p] = static_cast<T>(sum);
          }
        }
      });
  return absl::OkStatus();
}

template <typename T>
absl::Status GridSampleGradKernel(KernelContext& context) {
  const Sampling s = SamplingOf(context);
  const T* x = context.Input("X").data<T>();
  const T* grid = context.Input("Grid").data<T>();
  const T* d_out = context.Input("Out@GRAD").data<T>();
  T* d_x = context.HasOutput("X@GRAD") ? context.Output("X@GRAD")->data<T>()
                                       : nullptr;
  T* d_grid = context.HasOutput("Grid@GRAD")
                  ? context.Output("Grid@GRAD")->data<T>()
                  : nullptr;
  if (d_x != nullptr) {
    std::fill(d_x, d_x + s.batch * s.channels * s.in_size, T(0));
  }
  std::vector<Tap> taps;
  for (int64_t i = 0; i < s.batch * s.out_size; ++i) {
    const int64_t b = i / s.out_size;
    const int64_t p = i % s.out_size;
    TapsAt(s, grid + i * s.axes, taps);
    double slope[kMaxAxes] = {0, 0, 0};
    for (int64_t c = 0; c < s.channels; ++c) {
      const int64_t plane = (b * s.channels + c) * s.in_size;
      const double g =
          static_cast<double>(d_out[(b * s.channels + c) * s.out_size + p]);
      for (const Tap& tap : taps) {
        if (d_x != nullptr)
          d_x[plane + tap.offset] += static_cast<T>(g * tap.weight);
        const double v = g * static_cast<double>(x[plane + tap.offset]);
        for (int a = 0; a < s.axes; ++a) slope[a] += v * tap.partial[a];
      }
    }
    if (d_grid != nullptr) {
      for (int a = 0; a < s.axes; ++a) {
        d_grid[i * s.axes + s.axes - 1 - a] = static_cast<T>(slope[a]);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(grid_sample)
    .Input("X")
    .Input("Grid")
    .Output("Out")
    .Attr("mode", AttrType::kString, AttrValue(std::string("linear")),
          OneOf({"nearest", "linear", "cubic"}))
    .Attr("padding_mode", AttrType::kString, AttrValue(std::string("zeros")),
          OneOf({"zeros", "border", "reflection"}))
    .Attr("align_corners", AttrType::kBool, AttrValue(false))
    .Infer(InferGridSample)
    .Grad(GradSpec("grid_sample_grad")
              .ReadInput("X")
              .ReadInput("Grid")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("Grid"))
    .Kernel(DeviceType::kCPU, kFloat32, &GridSampleKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &GridSampleKernel<double>);

SF_REGISTER_OP(grid_sample_grad)
    .Input("X")
    .Input("Grid")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Grid@GRAD", /*optional=*/true)
    .Attr("mode", AttrType::kString, AttrValue(std::string("linear")),
          OneOf({"nearest", "linear", "cubic"}))
    .Attr("padding_mode", AttrType::kString, AttrValue(std::string("zeros")),
          OneOf({"zeros", "border", "reflection"}))
    .Attr("align_corners", AttrType::kBool, AttrValue(false))
    .Infer(InferGridSampleGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &GridSampleGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &GridSampleGradKernel<double>);

}  // namespace scopeflow
