// deform_conv: 2-D deformable convolution, as ONNX DeformConv (19, 22) and
// torchvision's deform_conv2d define it. X is (N, C, H, W), W (oC, C /
// group, kH, kW), Offset (N, offset_group * kH * kW * 2, oH, oW): for each
// offset group and kernel cell k = i * kW + j, the (row, column) shift of
// that cell's sampling point at each output position. The point, at
// oh * stride - pad_top + i * dilation + row shift (columns likewise), is
// read bilinearly with zeros outside X and scaled by Mask (N, offset_group
// * kH * kW, oH, oW; 1 when absent); the rest is a grouped convolution,
// plus B (oC) when given. Channel c belongs to offset group c / (C /
// offset_group). "pads" are [top, left, bottom, right].
//
// deform_conv_grad: the gradients of X, W, Offset, Mask and B. Out is
// linear in W, B, Mask and X (for fixed offsets); in Offset it is
// piecewise bilinear, differentiable off the cell boundaries.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/gemm.h"
#include "operators/nn/grad_util.h"
#include "operators/spatial/grid_taps.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The sizes of one deformable convolution.
struct Geometry {
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t out_c = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t group = 1, offset_group = 1;
  int64_t stride[2] = {1, 1}, dilation[2] = {1, 1}, pad[4] = {0, 0, 0, 0};
  int64_t kernel() const { return kh * kw; }
  int64_t points() const { return oh * ow; }
};

absl::StatusOr<std::vector<int64_t>> PairAttr(const Attributes& attrs,
                                              const char* name, size_t count,
                                              int64_t fill, int64_t least) {
  std::vector<int64_t> v = attrs.Get<std::vector<int64_t>>(name);
  if (v.empty()) v.assign(count, fill);
  SF_CHECK(v.size() == count,
           "attribute \"%s\" = [%s]: expected %d values for 2 spatial axes",
           name, absl::StrJoin(v, ", "), count);
  for (int64_t x : v) {
    SF_CHECK(x >= least, "attribute \"%s\" = [%s]: expected values >= %d", name,
             absl::StrJoin(v, ", "), least);
  }
  return v;
}

// Checks what inference knows and returns Out's info; `g` gets the sizes
// where every dim is known.
absl::StatusOr<VarInfo> InferOutput(InferContext& context, Geometry* g) {
  for (const char* slot : {"X", "W", "Offset"}) {
    SF_RETURN_IF_ERROR(CheckFloatInput(context, slot));
    SF_RETURN_IF_ERROR(CheckRank(context, slot, 4, 4));
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", slot));
  }
  if (context.HasInput("B")) {
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "B"));
    SF_RETURN_IF_ERROR(CheckRank(context, "B", 1, 1));
  }
  if (context.HasInput("Mask")) {
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Mask"));
    SF_RETURN_IF_ERROR(CheckRank(context, "Mask", 4, 4));
  }
  const Attributes& attrs = context.attrs();
  SF_ASSIGN_OR_RETURN(const auto strides, PairAttr(attrs, "strides", 2, 1, 1));
  SF_ASSIGN_OR_RETURN(const auto dilations,
                      PairAttr(attrs, "dilations", 2, 1, 1));
  SF_ASSIGN_OR_RETURN(const auto pads, PairAttr(attrs, "pads", 4, 0, 0));
  const VarInfo& x = context.Input("X");
  const VarInfo& w = context.Input("W");
  const VarInfo& offset = context.Input("Offset");
  const auto known = [](const VarInfo& v) {
    if (!v.has_dims) return false;
    for (int64_t d : v.dims) {
      if (d < 0) return false;
    }
    return true;
  };
  const bool all_known =
      known(x) && known(w) && known(offset) &&
      (!context.HasInput("Mask") || known(context.Input("Mask"))) &&
      (!context.HasInput("B") || known(context.Input("B")));
  if (!all_known) {
    Dims out = {x.has_dims ? x.dims[0] : -1, w.has_dims ? w.dims[0] : -1, -1,
                -1};
    if (offset.has_dims) {
      out[2] = offset.dims[2];
      out[3] = offset.dims[3];
    }
    return VarInfo{x.dtype, out, true};
  }
  g->n = x.dims[0];
  g->c = x.dims[1];
  g->h = x.dims[2];
  g->w = x.dims[3];
  g->out_c = w.dims[0];
  g->kh = w.dims[2];
  g->kw = w.dims[3];
  g->group = attrs.Get<int64_t>("group");
  g->offset_group = attrs.Get<int64_t>("offset_group");
  for (int a = 0; a < 2; ++a) {
    g->stride[a] = strides[a];
    g->dilation[a] = dilations[a];
  }
  for (int a = 0; a < 4; ++a) g->pad[a] = pads[a];
  const auto& kernel = attrs.Get<std::vector<int64_t>>("kernel_shape");
  SF_CHECK(kernel.empty() || kernel == std::vector<int64_t>({g->kh, g->kw}),
           "attribute \"kernel_shape\" = [%s]: expected the kernel of %s",
           absl::StrJoin(kernel, ", "), DescribeInputShape(context, "W"));
  SF_CHECK(g->c % g->group == 0 && g->out_c % g->group == 0 &&
               w.dims[1] * g->group == g->c,
           "%s with group %d: expected (oC, C / group, kH, kW) for %s, both "
           "channel counts divisible by the group",
           DescribeInputShape(context, "W"), g->group,
           DescribeInputShape(context, "X"));
  SF_CHECK(g->c % g->offset_group == 0,
           "offset_group %d does not divide the %d channels of %s",
           g->offset_group, g->c, DescribeInputShape(context, "X"));
  for (int a = 0; a < 2; ++a) {
    const int64_t size = a == 0 ? g->h : g->w;
    const int64_t k = a == 0 ? g->kh : g->kw;
    const int64_t span = g->dilation[a] * (k - 1) + 1;
    const int64_t padded = size + g->pad[a] + g->pad[a + 2];
    SF_CHECK(padded >= span,
             "%s: the kernel spans %d cells on spatial axis %d, more than the "
             "%d of the padded input",
             DescribeInputShape(context, "X"), span, a, padded);
    (a == 0 ? g->oh : g->ow) = (padded - span) / g->stride[a] + 1;
  }
  const Dims offset_dims = {g->n, g->offset_group * g->kernel() * 2, g->oh,
                            g->ow};
  SF_CHECK(offset.dims == offset_dims,
           "%s: expected %s (N, offset_group * kH * kW * 2, oH, oW)",
           DescribeInputShape(context, "Offset"), DimsToString(offset_dims));
  if (context.HasInput("Mask")) {
    const Dims mask_dims = {g->n, g->offset_group * g->kernel(), g->oh, g->ow};
    SF_CHECK(context.Input("Mask").dims == mask_dims,
             "%s: expected %s (N, offset_group * kH * kW, oH, oW)",
             DescribeInputShape(context, "Mask"), DimsToString(mask_dims));
  }
  if (context.HasInput("B")) {
    SF_CHECK(context.Input("B").dims == Dims({g->out_c}),
             "%s: expected one bias per output channel, [%d]",
             DescribeInputShape(context, "B"), g->out_c);
  }
  return VarInfo{x.dtype, Dims{g->n, g->out_c, g->oh, g->ow}, true};
}

absl::Status InferDeformConv(InferContext& context) {
  Geometry g;
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context, &g));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status InferDeformConvGrad(InferContext& context) {
  Geometry g;
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context, &g));
  SF_RETURN_IF_ERROR(nn::CheckGradInput(context, "Out@GRAD", out, "Out"));
  return GradsLikeInputs({"X", "W", "Offset", "Mask", "B"})(context);
}

Geometry GeometryOf(const KernelContext& context) {
  const Dims& x = context.Input("X").dims();
  const Dims& w = context.Input("W").dims();
  const Dims& offset = context.Input("Offset").dims();
  const Attributes& attrs = context.attrs();
  Geometry g;
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.out_c = w[0];
  g.kh = w[2];
  g.kw = w[3];
  g.oh = offset[2];
  g.ow = offset[3];
  g.group = attrs.Get<int64_t>("group");
  g.offset_group = attrs.Get<int64_t>("offset_group");
  const auto& strides = attrs.Get<std::vector<int64_t>>("strides");
  const auto& dilations = attrs.Get<std::vector<int64_t>>("dilations");
  const auto& pads = attrs.Get<std::vector<int64_t>>("pads");
  for (int a = 0; a < 2; ++a) {
    if (!strides.empty()) g.stride[a] = strides[a];
    if (!dilations.empty()) g.dilation[a] = dilations[a];
  }
  for (int a = 0; a < 4 && !pads.empty(); ++a) g.pad[a] = pads[a];
  return g;
}

// The bilinear taps of one sampling point: up to 4 (offset in a channel
// of X, weight, d weight / d row, d weight / d column).
struct PointTaps {
  int count = 0;
  int64_t offset[4];
  double weight[4];
  double d_row[4];
  double d_col[4];
};

// The taps of kernel cell (i, j) of offset group `og` at output (y, x) of
// image n.
template <typename T>
PointTaps TapsOf(const Geometry& g, const T* offset, int64_t n, int64_t og,
                 int64_t i, int64_t j, int64_t y, int64_t x) {
  const int64_t k = i * g.kw + j;
  const int64_t plane = g.points();
  const T* shift =
      offset + ((n * g.offset_group + og) * g.kernel() * 2 + 2 * k) * plane +
      y * g.ow + x;
  const double row =
      static_cast<double>(y * g.stride[0] - g.pad[0] + i * g.dilation[0]) +
      static_cast<double>(shift[0]);
  const double col =
      static_cast<double>(x * g.stride[1] - g.pad[1] + j * g.dilation[1]) +
      static_cast<double>(shift[plane]);
  using grid_sample::Mode;
  using grid_sample::Padding;
  const grid_sample::AxisTaps r = grid_sample::PixelTaps(
      row, 1.0, g.h, Mode::kLinear, Padding::kZeros, false);
  const grid_sample::AxisTaps c = grid_sample::PixelTaps(
      col, 1.0, g.w, Mode::kLinear, Padding::kZeros, false);
  PointTaps taps;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 2; ++b) {
      if (r.index[a] < 0 || c.index[b] < 0) continue;
      taps.offset[taps.count] = r.index[a] * g.w + c.index[b];
      taps.weight[taps.count] = r.weight[a] * c.weight[b];
      taps.d_row[taps.count] = r.slope[a] * c.weight[b];
      taps.d_col[taps.count] = r.weight[a] * c.slope[b];
      ++taps.count;
    }
  }
  return taps;
}

// Calls visit(channel, k, point, taps, mask) for every channel, kernel
// cell and output point of image n.
template <typename T, typename Visit>
void ForEachSample(const Geometry& g, const T* offset, const T* mask, int64_t n,
                   Visit visit) {
  const int64_t per_group = g.c / g.offset_group;
  for (int64_t og = 0; og < g.offset_group; ++og) {
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t k = i * g.kw + j;
        for (int64_t y = 0; y < g.oh; ++y) {
          for (int64_t x = 0; x < g.ow; ++x) {
            const PointTaps taps = TapsOf(g, offset, n, og, i, j, y, x);
            const int64_t p = y * g.ow + x;
            const double m =
                mask == nullptr
                    ? 1.0
                    : static_cast<double>(
                          mask[((n * g.offset_group + og) * g.kernel() + k) *
                                   g.points() +
                               p]);
            for (int64_t c = og * per_group; c < (og + 1) * per_group; ++c) {
              visit(c, k, p, taps, m);
            }
          }
        }
      }
    }
  }
}

const Tensor* Optional(const KernelContext& context, const char* slot) {
  return context.HasInput(slot) ? &context.Input(slot) : nullptr;
}

template <typename T>
absl::Status DeformConvKernel(KernelContext& context) {
  const Geometry g = GeometryOf(context);
  const T* x = context.Input("X").data<T>();
  const T* w = context.Input("W").data<T>();
  const T* offset = context.Input("Offset").data<T>();
  const Tensor* mask = Optional(context, "Mask");
  const Tensor* bias = Optional(context, "B");
  T* out = context.Output("Out")->data<T>();
  const int64_t rows = g.c * g.kernel();  // of the column matrix
  std::vector<T> columns(rows * g.points());
  const int64_t in_c = g.c / g.group;
  const int64_t out_c = g.out_c / g.group;
  for (int64_t n = 0; n < g.n; ++n) {
    ForEachSample(
        g, offset, mask ? mask->data<T>() : nullptr, n,
        [&](int64_t c, int64_t k, int64_t p, const PointTaps& taps, double m) {
          const T* image = x + (n * g.c + c) * g.h * g.w;
          double v = 0;
          for (int t = 0; t < taps.count; ++t) {
            v += taps.weight[t] * static_cast<double>(image[taps.offset[t]]);
          }
          columns[(c * g.kernel() + k) * g.points() + p] =
              static_cast<T>(m * v);
        });
    for (int64_t gr = 0; gr < g.group; ++gr) {
      T* y = out + (n * g.out_c + gr * out_c) * g.points();
      for (int64_t o = 0; o < out_c; ++o) {
        const T b = bias ? bias->data<T>()[gr * out_c + o] : T(0);
        std::fill(y + o * g.points(), y + (o + 1) * g.points(), b);
      }
      SF_RETURN_IF_ERROR(
          Gemm(false, false, out_c, g.points(), in_c * g.kernel(), T(1),
               w + gr * out_c * in_c * g.kernel(), in_c * g.kernel(),
               columns.data() + gr * in_c * g.kernel() * g.points(), g.points(),
               T(1), y, g.points()));
    }
  }
  return absl::OkStatus();
}

template <typename T>
T* GradOut(KernelContext& context, const char* slot) {
  if (!context.HasOutput(slot)) return nullptr;
  Tensor* t = context.Output(slot);
  std::fill(t->data<T>(), t->data<T>() + t->numel(), T(0));
  return t->data<T>();
}

template <typename T>
absl::Status DeformConvGradKernel(KernelContext& context) {
  const Geometry g = GeometryOf(context);
  const T* x = context.Input("X").data<T>();
  const T* w = context.Input("W").data<T>();
  const T* offset = context.Input("Offset").data<T>();
  const Tensor* mask_tensor = Optional(context, "Mask");
  const T* mask = mask_tensor ? mask_tensor->data<T>() : nullptr;
  const T* d_out = context.Input("Out@GRAD").data<T>();
  T* d_x = GradOut<T>(context, "X@GRAD");
  T* d_w = GradOut<T>(context, "W@GRAD");
  T* d_offset = GradOut<T>(context, "Offset@GRAD");
  T* d_mask = GradOut<T>(context, "Mask@GRAD");
  T* d_b = GradOut<T>(context, "B@GRAD");
  const int64_t rows = g.c * g.kernel();
  const int64_t in_c = g.c / g.group;
  const int64_t out_c = g.out_c / g.group;
  const int64_t ck = in_c * g.kernel();
  std::vector<T> columns(rows * g.points());
  std::vector<T> d_columns(rows * g.points());
  for (int64_t n = 0; n < g.n; ++n) {
    const T* dy = d_out + n * g.out_c * g.points();
    if (d_b != nullptr) {
      for (int64_t o = 0; o < g.out_c; ++o) {
        for (int64_t p = 0; p < g.points(); ++p)
          d_b[o] += dy[o * g.points() + p];
      }
    }
    // Columns (for W's gradient) and their gradient, W^T Out@GRAD.
    ForEachSample(
        g, offset, mask, n,
        [&](int64_t c, int64_t k, int64_t p, const PointTaps& taps, double m) {
          const T* image = x + (n * g.c + c) * g.h * g.w;
          double v = 0;
          for (int t = 0; t < taps.count; ++t) {
            v += taps.weight[t] * static_cast<double>(image[taps.offset[t]]);
          }
          columns[(c * g.kernel() + k) * g.points() + p] =
              static_cast<T>(m * v);
        });
    for (int64_t gr = 0; gr < g.group; ++gr) {
      const T* dy_g = dy + gr * out_c * g.points();
      const T* w_g = w + gr * out_c * ck;
      SF_RETURN_IF_ERROR(Gemm(
          true, false, ck, g.points(), out_c, T(1), w_g, ck, dy_g, g.points(),
          T(0), d_columns.data() + gr * ck * g.points(), g.points()));
      if (d_w != nullptr) {
        SF_RETURN_IF_ERROR(Gemm(false, true, out_c, ck, g.points(), T(1), dy_g,
                                g.points(),
                                columns.data() + gr * ck * g.points(),
                                g.points(), T(1), d_w + gr * out_c * ck, ck));
      }
    }
    if (d_x == nullptr && d_offset == nullptr && d_mask == nullptr) continue;
    ForEachSample(
        g, offset, mask, n,
        [&](int64_t c, int64_t k, int64_t p, const PointTaps& taps, double m) {
          const double dc = static_cast<double>(
              d_columns[(c * g.kernel() + k) * g.points() + p]);
          if (dc == 0) return;
          const int64_t plane = (n * g.c + c) * g.h * g.w;
          const int64_t og = c / (g.c / g.offset_group);
          double v = 0, d_row = 0, d_col = 0;
          for (int t = 0; t < taps.count; ++t) {
            const double pixel = static_cast<double>(x[plane + taps.offset[t]]);
            v += taps.weight[t] * pixel;
            d_row += taps.d_row[t] * pixel;
            d_col += taps.d_col[t] * pixel;
            if (d_x != nullptr) {
              d_x[plane + taps.offset[t]] +=
                  static_cast<T>(dc * m * taps.weight[t]);
            }
          }
          const int64_t base = (n * g.offset_group + og) * g.kernel();
          if (d_offset != nullptr) {
            T* shift = d_offset + ((base + k) * 2) * g.points() + p;
            shift[0] += static_cast<T>(dc * m * d_row);
            shift[g.points()] += static_cast<T>(dc * m * d_col);
          }
          if (d_mask != nullptr) {
            d_mask[(base + k) * g.points() + p] += static_cast<T>(dc * v);
          }
        });
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(deform_conv)
    .Input("X")
    .Input("W")
    .Input("Offset")
    .Input("B", /*optional=*/true)
    .Input("Mask", /*optional=*/true)
    .Output("Out")
    .Attr("kernel_shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("strides", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("dilations", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("pads", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("group", AttrType::kInt64, AttrValue(int64_t{1}), Positive())
    .Attr("offset_group", AttrType::kInt64, AttrValue(int64_t{1}), Positive())
    .Infer(InferDeformConv)
    .Grad(GradSpec("deform_conv_grad")
              .ReadInput("X")
              .ReadInput("W")
              .ReadInput("Offset")
              .ReadInput("B")
              .ReadInput("Mask")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("W")
              .WriteInputGrad("Offset")
              .WriteInputGrad("B")
              .WriteInputGrad("Mask"))
    .Kernel(DeviceType::kCPU, kFloat32, &DeformConvKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DeformConvKernel<double>);

SF_REGISTER_OP(deform_conv_grad)
    .Input("X")
    .Input("W")
    .Input("Offset")
    .Input("B", /*optional=*/true)
    .Input("Mask", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("W@GRAD", /*optional=*/true)
    .Output("Offset@GRAD", /*optional=*/true)
    .Output("B@GRAD", /*optional=*/true)
    .Output("Mask@GRAD", /*optional=*/true)
    .Attr("kernel_shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("strides", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("dilations", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("pads", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("group", AttrType::kInt64, AttrValue(int64_t{1}), Positive())
    .Attr("offset_group", AttrType::kInt64, AttrValue(int64_t{1}), Positive())
    .Infer(InferDeformConvGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &DeformConvGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DeformConvGradKernel<double>);

}  // namespace scopeflow
