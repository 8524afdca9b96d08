// pool2d: max or average pooling over the spatial axes of NCHW tensors.
// pool2d_grad: its gradient, to each window's maximum (max) or spread over
// the cells its average counted (avg).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "operators/nn/window.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

struct Pool2dWindow {
  std::array<int64_t, 2> ksize;
  std::array<int64_t, 2> strides;
  Padding2d padding;
  bool ceil_mode;
};

// The window over an input of spatial size [height, width] (-1: unknown):
// the attributes', or with global_pooling the whole plane.
Pool2dWindow WindowOf(const Attributes& attrs, int64_t height, int64_t width) {
  if (attrs.Get<bool>("global_pooling")) {
    return {{height, width}, {1, 1}, Padding2d{}, false};
  }
  return {PairOf(attrs.Get<std::vector<int32_t>>("ksize")),
          PairOf(attrs.Get<std::vector<int32_t>>("strides")),
          PaddingOf(attrs.Get<std::vector<int32_t>>("paddings")),
          attrs.Get<bool>("ceil_mode")};
}

// Checks X and the attributes (for pool2d and its gradient op alike) and
// returns what pool2d writes to "Out".
absl::StatusOr<VarInfo> InferOut(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 4, 4));
  const VarInfo& info = context.Input("X");
  const Dims x = Rank4DimsOf(info);
  const std::string& name = context.InputName("X");
  SF_CHECK(x[2] != 0 && x[3] != 0,
           "input \"X\" (variable \"%s\") has shape %s: expected a positive "
           "height and width",
           name, DimsToString(x));
  if (context.attrs().Get<bool>("global_pooling")) {
    return VarInfo{info.dtype, Dims{x[0], x[1], 1, 1}, /*has_dims=*/true};
  }
  const Pool2dWindow w = WindowOf(context.attrs(), x[2], x[3]);
  const Padding2d& p = w.padding;
  SF_CHECK(p.top < w.ksize[0] && p.bottom < w.ksize[0] && p.left < w.ksize[1] &&
               p.right < w.ksize[1],
           "attribute \"paddings\" = %s must be smaller than \"ksize\" = "
           "[%d, %d]: a window would see only padding",
           PaddingToString(p), w.ksize[0], w.ksize[1]);
  const Dims out = {WindowOutputSize(x[2], w.ksize[0], p.top, p.bottom,
                                     w.strides[0], w.ceil_mode),
                    WindowOutputSize(x[3], w.ksize[1], p.left, p.right,
                                     w.strides[1], w.ceil_mode)};
  SF_CHECK(out[0] != 0 && out[1] != 0,
           "input \"X\" (variable \"%s\") has shape %s: too small for "
           "\"ksize\" = [%d, %d] with paddings %s and strides [%d, %d]; "
           "expected a positive output height and width, got %s",
           name, DimsToString(x), w.ksize[0], w.ksize[1], PaddingToString(p),
           w.strides[0], w.strides[1], DimsToString(out));
  return VarInfo{info.dtype, Dims{x[0], x[1], out[0], out[1]},
                 /*has_dims=*/true};
}

absl::Status InferPool2d(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOut(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status InferPool2dGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOut(context));
  SF_RETURN_IF_ERROR(nn::CheckGradInput(context, "Out@GRAD", out, "Out"));
  return GradsLikeInputs({"X"})(context);
}

// One window's cells: [h_begin, h_end) x [w_begin, w_end) of the input, and
// `padded_cells`, the window's size counting padding but not what lies
// beyond it (ceil_mode's last windows).
struct Cells {
  int64_t h_begin, h_end, w_begin, w_end, padded_cells;
};

Cells CellsOf(const Pool2dWindow& w, int64_t height, int64_t width,
              int64_t out_h, int64_t out_w) {
  const int64_t h0 = out_h * w.strides[0] - w.padding.top;
  const int64_t w0 = out_w * w.strides[1] - w.padding.left;
  const int64_t h1 = std::min(h0 + w.ksize[0], height + w.padding.bottom);
  const int64_t w1 = std::min(w0 + w.ksize[1], width + w.padding.right);
  return {std::max<int64_t>(h0, 0), std::min(h1, height),
          std::max<int64_t>(w0, 0), std::min(w1, width), (h1 - h0) * (w1 - w0)};
}

// Padding < ksize (checked by inference) puts at least one input cell in
// every window.
template <typename T>
absl::Status Pool2dKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& out = *context.Output("Out");
  const int64_t height = x.dim(2), width = x.dim(3);
  const int64_t out_height = out.dim(2), out_width = out.dim(3);
  const Pool2dWindow w = WindowOf(context.attrs(), height, width);
  const bool is_max = context.attrs().Get<std::string>("pooling_type") == "max";
  const bool exclusive = context.attrs().Get<bool>("exclusive");
  const int64_t planes = x.dim(0) * x.dim(1);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* in = x.data<T>() + plane * height * width;
    T* o = out.data<T>() + plane * out_height * out_width;
    for (int64_t oh = 0; oh < out_height; ++oh) {
      for (int64_t ow = 0; ow < out_width; ++ow) {
        const Cells c = CellsOf(w, height, width, oh, ow);
        if (is_max) {
          T m = std::numeric_limits<T>::lowest();
          for (int64_t h = c.h_begin; h < c.h_end; ++h) {
            for (int64_t i = c.w_begin; i < c.w_end; ++i) {
              const T v = in[h * width + i];
              if (v > m || std::isnan(v)) m = v;
            }
          }
          o[oh * out_width + ow] = m;
        } else {
          T sum = 0;
          for (int64_t h = c.h_begin; h < c.h_end; ++h) {
            for (int64_t i = c.w_begin; i < c.w_end; ++i) {
              sum += in[h * width + i];
            }
          }
          const int64_t count =
              exclusive ? (c.h_end - c.h_begin) * (c.w_end - c.w_begin)
                        : c.padded_cells;
          o[oh * out_width + ow] = sum / static_cast<T>(count);
        }
      }
    }
  }
  return absl::OkStatus();
}

// The input cell (offset in the plane) whose value max pooling keeps for
// window `c`, by the forward's rule: the first maximum, or the last NaN.
template <typename T>
int64_t ArgMax(const T* in, int64_t width, const Cells& c) {
  int64_t best = c.h_begin * width + c.w_begin;
  for (int64_t h = c.h_begin; h < c.h_end; ++h) {
    for (int64_t i = c.w_begin; i < c.w_end; ++i) {
      const T v = in[h * width + i];
      if (v > in[best] || std::isnan(v)) {
        best = h * width + i;
      }
    }
  }
  return best;
}

// Max: each window's gradient goes to its maximum (found again from X).
// Avg: spread evenly over the window's input cells, divided by the count
// the forward divided by (so padding cells take their share, dropped, when
// not exclusive).
template <typename T>
absl::Status Pool2dGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  const Tensor& d_out = context.Input("Out@GRAD");
  Tensor& d_x = *context.Output("X@GRAD");
  std::fill(d_x.data<T>(), d_x.data<T>() + d_x.numel(), T{0});
  const int64_t height = x.dim(2), width = x.dim(3);
  const int64_t out_height = d_out.dim(2), out_width = d_out.dim(3);
  const Pool2dWindow w = WindowOf(context.attrs(), height, width);
  const bool is_max = context.attrs().Get<std::string>("pooling_type") == "max";
  const bool exclusive = context.attrs().Get<bool>("exclusive");
  const int64_t planes = x.dim(0) * x.dim(1);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* in = x.data<T>() + plane * height * width;
    const T* g = d_out.data<T>() + plane * out_height * out_width;
    T* dx = d_x.data<T>() + plane * height * width;
    for (int64_t oh = 0; oh < out_height; ++oh) {
      for (int64_t ow = 0; ow < out_width; ++ow) {
        const Cells c = CellsOf(w, height, width, oh, ow);
        const T grad = g[oh * out_width + ow];
        if (is_max) {
          dx[ArgMax(in, width, c)] += grad;
          continue;
        }
        const int64_t count =
            exclusive ? (c.h_end - c.h_begin) * (c.w_end - c.w_begin)
                      : c.padded_cells;
        const T share = grad / static_cast<T>(count);
        for (int64_t h = c.h_begin; h < c.h_end; ++h) {
          for (int64_t i = c.w_begin; i < c.w_end; ++i) {
            dx[h * width + i] += share;
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

// ceil_mode rounds the output size up, so the last window may hang over
// the trailing padding; no window starts inside it. Average pooling divides
// by the window's input cells (exclusive) or by its cells counting padding
// (not exclusive; cells past the padding never count).
SF_REGISTER_OP(pool2d)
    .Input("X")
    .Output("Out")
    .Attr("pooling_type", AttrType::kString, OneOf({"max", "avg"}))
    .Attr("ksize", AttrType::kInts, PositivePair())
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PositivePair())
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0}),
          PaddingList())
    .Attr("global_pooling", AttrType::kBool, AttrValue(false))
    .Attr("exclusive", AttrType::kBool, AttrValue(true))
    .Attr("ceil_mode", AttrType::kBool, AttrValue(false))
    .Infer(InferPool2d)
    .Grad(GradSpec("pool2d_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &Pool2dKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Pool2dKernel<double>);

// Max pooling finds each window's maximum again from X rather than reading
// Out, so the gradient goes to one cell even where several tie.
SF_REGISTER_OP(pool2d_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("pooling_type", AttrType::kString, OneOf({"max", "avg"}))
    .Attr("ksize", AttrType::kInts, PositivePair())
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PositivePair())
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0}),
          PaddingList())
    .Attr("global_pooling", AttrType::kBool, AttrValue(false))
    .Attr("exclusive", AttrType::kBool, AttrValue(true))
    .Attr("ceil_mode", AttrType::kBool, AttrValue(false))
    .Infer(InferPool2dGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &Pool2dGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Pool2dGradKernel<double>);

}  // namespace scopeflow
