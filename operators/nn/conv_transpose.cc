// conv2d_transpose and conv3d_transpose: transposed ("fractionally
// strided") convolution of NCHW / NCDHW tensors, the adjoint of conv2d's
// map from input to output: each input cell scatters its value times the
// filter into the output window it would have been computed from. Filters
// are [C, M / groups, k...] (input channels first, as ONNX ConvTranspose
// and Paddle lay them out), with strides, paddings (cropped from the
// output), dilations, groups, output_padding (extra cells at the end) or
// output_size (the output's spatial size, from which output_padding
// follows).
//
// Both run as a gemm per sample and group followed by col2im: col =
// Filter_g^T x Input_g, then each column element added to the output cell
// it belongs to. The gradients (conv2d_transpose_grad,
// conv3d_transpose_grad) reverse it: Input@GRAD_g = Filter_g x
// im2col(Output@GRAD_g), Filter@GRAD_g = sum over samples of Input_g x
// im2col(Output@GRAD_g)^T, Bias@GRAD the sum of Output@GRAD per channel.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/gemm.h"
#include "operators/nn/grad_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The kernels treat every op as 3-D: a 2-D one is a 3-D one of depth 1.
constexpr int kAxes = 3;
using Triple = std::array<int64_t, kAxes>;

// Attribute checks: `n` values per spatial axis ("strides", "dilations":
// positive; "output_padding", "output_size": non-negative, "output_size"
// may be empty), and `n` or 2n non-negative "paddings".
AttrCheckFn PerAxis(int n, bool positive, bool may_be_empty) {
  return [=](const AttrValue& value) -> absl::Status {
    const auto& values = std::get<std::vector<int32_t>>(value);
    if (may_be_empty && values.empty()) return absl::OkStatus();
    SF_CHECK(static_cast<int>(values.size()) == n,
             "must hold %d values, one per spatial axis, got [%s]", n,
             absl::StrJoin(values, ", "));
    for (int32_t v : values) {
      SF_CHECK(positive ? v > 0 : v >= 0, "must be %s, got [%s]",
               positive ? "positive" : "non-negative",
               absl::StrJoin(values, ", "));
    }
    return absl::OkStatus();
  };
}

AttrCheckFn Paddings(int n) {
  return [=](const AttrValue& value) -> absl::Status {
    const auto& values = std::get<std::vector<int32_t>>(value);
    SF_CHECK(static_cast<int>(values.size()) == n ||
                 static_cast<int>(values.size()) == 2 * n,
             "must hold %d values (each axis padded alike at both ends) or %d "
             "(a begin and an end per axis), got [%s]",
             n, 2 * n, absl::StrJoin(values, ", "));
    for (int32_t v : values) {
      SF_CHECK(v >= 0, "must be non-negative, got [%s]",
               absl::StrJoin(values, ", "));
    }
    return absl::OkStatus();
  };
}

struct Attrs {
  int spatial = 2;  // 2 or 3
  Triple strides{1, 1, 1};
  Triple dilations{1, 1, 1};
  Triple pad_begin{0, 0, 0};
  Triple pad_end{0, 0, 0};
  Triple output_padding{0, 0, 0};
  bool has_output_size = false;
  Triple output_size{1, 1, 1};
  int64_t groups = 1;
};

// The attributes with a 2-D op's axes moved to the last two of three.
Attrs AttrsOf(const Attributes& attrs, int spatial) {
  Attrs a;
  a.spatial = spatial;
  const int skip = kAxes - spatial;
  const auto& strides = attrs.Get<std::vector<int32_t>>("strides");
  const auto& dilations = attrs.Get<std::vector<int32_t>>("dilations");
  const auto& paddings = attrs.Get<std::vector<int32_t>>("paddings");
  const auto& output_padding =
      attrs.Get<std::vector<int32_t>>("output_padding");
  const auto& output_size = attrs.Get<std::vector<int32_t>>("output_size");
  a.has_output_size = !output_size.empty();
  const bool both_ends = static_cast<int>(paddings.size()) == 2 * spatial;
  for (int i = 0; i < spatial; ++i) {
    a.strides[skip + i] = strides[i];
    a.dilations[skip + i] = dilations[i];
    a.pad_begin[skip + i] = both_ends ? paddings[2 * i] : paddings[i];
    a.pad_end[skip + i] = both_ends ? paddings[2 * i + 1] : paddings[i];
    a.output_padding[skip + i] = output_padding[i];
    if (a.has_output_size) a.output_size[skip + i] = output_size[i];
  }
  a.groups = attrs.Get<int32_t>("groups");
  return a;
}

// The spatial dims of a [N, C, spatial...] shape as three (-1 where
// unknown, or all if the rank is).
Triple SpatialOf(const Attrs& a, const VarInfo& info) {
  Triple dims{1, 1, 1};
  for (int i = 0; i < a.spatial; ++i) {
    dims[kAxes - a.spatial + i] = info.has_dims ? info.dims[2 + i] : -1;
  }
  return dims;
}

std::string SpatialString(const Attrs& a, const Triple& dims) {
  return absl::StrCat(
      "[", absl::StrJoin(dims.begin() + (kAxes - a.spatial), dims.end(), ", "),
      "]");
}

// The output size of one axis without output_padding: (in - 1) * stride +
// the dilated kernel, less the paddings (possibly not positive). `in` and
// `kernel` are known.
int64_t NaturalSize(const Attrs& a, int axis, int64_t in, int64_t kernel) {
  return (in - 1) * a.strides[axis] + a.dilations[axis] * (kernel - 1) + 1 -
         a.pad_begin[axis] - a.pad_end[axis];
}

// Checks the inputs of the forward op (which its gradient op reads too)
// and returns what it writes to "Output".
absl::StatusOr<VarInfo> InferOutput(InferContext& context, int spatial) {
  const int rank = spatial + 2;
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Input"));
  SF_RETURN_IF_ERROR(CheckRank(context, "Input", rank, rank));
  SF_RETURN_IF_ERROR(CheckRank(context, "Filter", rank, rank));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "Input", "Filter"));
  const bool has_bias = context.HasInput("Bias");
  if (has_bias) {
    SF_RETURN_IF_ERROR(CheckRank(context, "Bias", 1, 1));
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "Input", "Bias"));
  }
  const Attrs a = AttrsOf(context.attrs(), spatial);
  const VarInfo& input = context.Input("Input");
  const VarInfo& filter = context.Input("Filter");
  const std::string& filter_name = context.InputName("Filter");
  const int64_t channels = input.has_dims ? input.dims[1] : -1;
  const int64_t filter_in = filter.has_dims ? filter.dims[0] : -1;
  const int64_t group_filters = filter.has_dims ? filter.dims[1] : -1;
  const std::string filter_shape =
      filter.has_dims ? DimsToString(filter.dims) : "[?]";
  SF_CHECK(channels < 0 || channels % a.groups == 0,
           "%s: its %d channels are not divisible by groups = %d",
           DescribeInputShape(context, "Input"), channels, a.groups);
  SF_CHECK(channels < 0 || filter_in < 0 || channels == filter_in,
           "%s but \"Filter\" (variable \"%s\") has shape %s: expected the "
           "filter's dimension 0 to be the %d input channels",
           DescribeInputShape(context, "Input"), filter_name, filter_shape,
           channels);
  const Triple kernel = SpatialOf(a, filter);
  for (int64_t k : kernel) {
    SF_CHECK(k != 0,
             "input \"Filter\" (variable \"%s\") has shape %s: expected "
             "positive kernel sizes",
             filter_name, filter_shape);
  }
  const int64_t filters = group_filters < 0 ? -1 : group_filters * a.groups;
  if (has_bias && context.Input("Bias").has_dims) {
    const int64_t bias = context.Input("Bias").dims[0];
    SF_CHECK(bias < 0 || filters < 0 || bias == filters,
             "input \"Bias\" (variable \"%s\") has shape [%d]: expected [%d], "
             "one value per output channel (\"Filter\" (variable \"%s\") has "
             "shape %s and groups = %d)",
             context.InputName("Bias"), bias, filters, filter_name,
             filter_shape, a.groups);
  }
  const Triple in = SpatialOf(a, input);
  for (int64_t d : in) {
    SF_CHECK(d != 0, "%s: expected positive spatial dims",
             DescribeInputShape(context, "Input"));
  }
  SF_CHECK(!a.has_output_size || (a.output_padding == Triple{0, 0, 0}),
           "attributes \"output_size\" and \"output_padding\" both given: "
           "expected one of them (output_size implies the padding)");
  // Per axis, -1 where unknown: the size the paddings leave, and the output
  // size.
  Triple natural;
  Triple out;
  for (int axis = 0; axis < kAxes; ++axis) {
    const bool known = in[axis] >= 0 && kernel[axis] >= 0;
    natural[axis] = known ? NaturalSize(a, axis, in[axis], kernel[axis]) : -1;
    out[axis] = a.has_output_size ? a.output_size[axis]
                : known           ? natural[axis] + a.output_padding[axis]
                                  : -1;
  }
  for (int axis = 0; axis < kAxes; ++axis) {
    const bool known = in[axis] >= 0 && kernel[axis] >= 0;
    SF_CHECK(!known || natural[axis] > 0,
             "%s with \"Filter\" (shape %s) and paddings [%s]: the output "
             "would be %s cells; expected positive sizes",
             DescribeInputShape(context, "Input"), filter_shape,
             absl::StrJoin(
                 context.attrs().Get<std::vector<int32_t>>("paddings"), ", "),
             SpatialString(a, natural));
    SF_CHECK(!known || out[axis] >= natural[axis],
             "attribute \"output_size\" = %s is smaller than the %s cells "
             "that %s, \"Filter\" (shape %s) and the paddings give",
             SpatialString(a, a.output_size), SpatialString(a, natural),
             DescribeInputShape(context, "Input"), filter_shape);
  }
  Dims dims = {input.has_dims ? input.dims[0] : -1, filters};
  for (int i = kAxes - spatial; i < kAxes; ++i) dims.push_back(out[i]);
  return VarInfo{input.dtype, dims, /*has_dims=*/true};
}

template <int kSpatial>
absl::Status InferConvTranspose(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo output, InferOutput(context, kSpatial));
  context.SetOutput("Output", output);
  return absl::OkStatus();
}

template <int kSpatial>
absl::Status InferConvTransposeGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo output, InferOutput(context, kSpatial));
  SF_RETURN_IF_ERROR(
      nn::CheckGradInput(context, "Output@GRAD", output, "Output"));
  if (context.HasOutput("Bias@GRAD")) {
    SF_RETURN_IF_ERROR(nn::RequireInput(
        context, "Bias", "output \"Bias@GRAD\" takes the shape of \"Bias\""));
  }
  return GradsLikeInputs({"Input", "Filter", "Bias"})(context);
}

// The sizes the kernels work with, spatial axes as three.
struct Geometry {
  int64_t batch, channels, filters, groups, group_channels, group_filters;
  Triple in, kernel, out, stride, dilation, pad;

  int64_t InPlane() const { return in[0] * in[1] * in[2]; }
  int64_t OutPlane() const { return out[0] * out[1] * out[2]; }
  // Rows of one group's column matrix: one per output channel of the
  // group and kernel offset.
  int64_t ColRows() const {
    return group_filters * kernel[0] * kernel[1] * kernel[2];
  }
};

Geometry GeometryOf(const Attrs& a, const Tensor& input, const Tensor& filter,
                    const Dims& output) {
  Geometry g;
  g.batch = input.dim(0);
  g.channels = input.dim(1);
  g.groups = a.groups;
  g.group_channels = g.channels / g.groups;
  g.group_filters = filter.dim(1);
  g.filters = g.group_filters * g.groups;
  const int skip = kAxes - a.spatial;
  for (int i = 0; i < kAxes; ++i) {
    const bool real = i >= skip;
    g.in[i] = real ? input.dim(2 + i - skip) : 1;
    g.kernel[i] = real ? filter.dim(2 + i - skip) : 1;
    g.out[i] = real ? output[2 + i - skip] : 1;
  }
  g.stride = a.strides;
  g.dilation = a.dilations;
  g.pad = a.pad_begin;
  return g;
}

// Calls fn(row, out_offset, in_offset) for every column element (row, in
// cell) whose output cell (in * stride - pad + k * dilation) lies in the
// output: the scatter of the forward op and the gather of its gradient.
// Rows are (output channel of the group, kernel offset); offsets are
// within one channel's plane.
template <typename Fn>
void ForEachTap(const Geometry& g, Fn fn) {
  const int64_t in_plane = g.InPlane();
  const int64_t out_plane = g.OutPlane();
  int64_t row = 0;
  for (int64_t m = 0; m < g.group_filters; ++m) {
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++row) {
          for (int64_t id = 0; id < g.in[0]; ++id) {
            const int64_t od = id * g.stride[0] - g.pad[0] + kd * g.dilation[0];
            if (od < 0 || od >= g.out[0]) continue;
            for (int64_t ih = 0; ih < g.in[1]; ++ih) {
              const int64_t oh =
                  ih * g.stride[1] - g.pad[1] + kh * g.dilation[1];
              if (oh < 0 || oh >= g.out[1]) continue;
              const int64_t in_row = (id * g.in[1] + ih) * g.in[2];
              const int64_t out_row =
                  m * out_plane + (od * g.out[1] + oh) * g.out[2];
              for (int64_t iw = 0; iw < g.in[2]; ++iw) {
                const int64_t ow =
                    iw * g.stride[2] - g.pad[2] + kw * g.dilation[2];
                if (ow >= 0 && ow < g.out[2]) {
                  fn(row * in_plane + in_row + iw, out_row + ow);
                }
              }
            }
          }
        }
      }
    }
  }
}

// Adds each column element of `col` [ColRows(), InPlane()] to its output
// cell of `image` [group_filters, out...].
template <typename T>
void Col2ImAdd(const Geometry& g, const T* col, T* image) {
  ForEachTap(g, [&](int64_t c, int64_t o) { image[o] += col[c]; });
}

// The adjoint: each column element reads its output cell of `image` (0
// where it has none).
template <typename T>
void Im2Col(const Geometry& g, const T* image, T* col) {
  std::fill(col, col + g.ColRows() * g.InPlane(), T{0});
  ForEachTap(g, [&](int64_t c, int64_t o) { col[c] = image[o]; });
}

template <typename T>
absl::Status ConvTransposeKernel(KernelContext& context, int spatial) {
  const Tensor& input = context.Input("Input");
  const Tensor& filter = context.Input("Filter");
  const Tensor* bias =
      context.HasInput("Bias") ? &context.Input("Bias") : nullptr;
  Tensor& output = *context.Output("Output");
  const Geometry g = GeometryOf(AttrsOf(context.attrs(), spatial), input,
                                filter, output.dims());
  const int64_t out_plane = g.OutPlane();
  T* out = output.data<T>();
  for (int64_t i = 0; i < output.numel(); ++i) {
    out[i] =
        bias == nullptr ? T{0} : bias->data<T>()[(i / out_plane) % g.filters];
  }
  if (input.numel() == 0 || g.group_channels == 0) return absl::OkStatus();
  const int64_t rows = g.ColRows();
  const int64_t in_plane = g.InPlane();
  std::vector<T> col(rows * in_plane);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t group = 0; group < g.groups; ++group) {
      const T* x = input.data<T>() +
                   (n * g.channels + group * g.group_channels) * in_plane;
      const T* w = filter.data<T>() + group * g.group_channels * rows;
      SF_RETURN_IF_ERROR(Gemm(true, false, rows, in_plane, g.group_channels,
                              T{1}, w, rows, x, in_plane, T{0}, col.data(),
                              in_plane));
      Col2ImAdd(g, col.data(),
                out + (n * g.filters + group * g.group_filters) * out_plane);
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status ConvTransposeGradKernel(KernelContext& context, int spatial) {
  const Tensor& input = context.Input("Input");
  const Tensor& filter = context.Input("Filter");
  const Tensor& d_output = context.Input("Output@GRAD");
  T* d_input = context.HasOutput("Input@GRAD")
                   ? context.Output("Input@GRAD")->data<T>()
                   : nullptr;
  T* d_filter = context.HasOutput("Filter@GRAD")
                    ? context.Output("Filter@GRAD")->data<T>()
                    : nullptr;
  const Geometry g = GeometryOf(AttrsOf(context.attrs(), spatial), input,
                                filter, d_output.dims());
  const int64_t out_plane = g.OutPlane();
  const T* dy = d_output.data<T>();
  if (context.HasOutput("Bias@GRAD")) {
    T* d_bias = context.Output("Bias@GRAD")->data<T>();
    for (int64_t m = 0; m < g.filters; ++m) {
      double sum = 0;
      for (int64_t n = 0; n < g.batch; ++n) {
        const T* plane = dy + (n * g.filters + m) * out_plane;
        for (int64_t p = 0; p < out_plane; ++p) sum += plane[p];
      }
      d_bias[m] = static_cast<T>(sum);
    }
  }
  const int64_t rows = g.ColRows();
  const int64_t in_plane = g.InPlane();
  if (d_input != nullptr) std::fill(d_input, d_input + input.numel(), T{0});
  if (d_filter != nullptr) std::fill(d_filter, d_filter + filter.numel(), T{0});
  if ((d_input == nullptr && d_filter == nullptr) || input.numel() == 0 ||
      g.group_channels == 0) {
    return absl::OkStatus();
  }
  std::vector<T> col(rows * in_plane);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t group = 0; group < g.groups; ++group) {
      Im2Col(g, dy + (n * g.filters + group * g.group_filters) * out_plane,
             col.data());
      const int64_t x_offset =
          (n * g.channels + group * g.group_channels) * in_plane;
      const int64_t w_offset = group * g.group_channels * rows;
      if (d_input != nullptr) {
        SF_RETURN_IF_ERROR(Gemm(false, false, g.group_channels, in_plane, rows,
                                T{1}, filter.data<T>() + w_offset, rows,
                                col.data(), in_plane, T{0}, d_input + x_offset,
                                in_plane));
      }
      if (d_filter != nullptr) {
        SF_RETURN_IF_ERROR(Gemm(false, true, g.group_channels, rows, in_plane,
                                T{1}, input.data<T>() + x_offset, in_plane,
                                col.data(), in_plane, T{1}, d_filter + w_offset,
                                rows));
      }
    }
  }
  return absl::OkStatus();
}

template <typename T, int kSpatial>
absl::Status ForwardKernel(KernelContext& context) {
  return ConvTransposeKernel<T>(context, kSpatial);
}

template <typename T, int kSpatial>
absl::Status GradKernel(KernelContext& context) {
  return ConvTransposeGradKernel<T>(context, kSpatial);
}

GradSpec ConvTransposeGrad(const char* type) {
  return GradSpec(type)
      .ReadInput("Input")
      .ReadInput("Filter")
      .ReadInput("Bias")
      .ReadOutputGrad("Output")
      .WriteInputGrad("Input")
      .WriteInputGrad("Filter")
      .WriteInputGrad("Bias");
}

}  // namespace

SF_REGISTER_OP(conv2d_transpose)
    .Input("Input")
    .Input("Filter")
    .Input("Bias", /*optional=*/true)
    .Output("Output")
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PerAxis(2, /*positive=*/true, /*may_be_empty=*/false))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0}),
          Paddings(2))
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PerAxis(2, /*positive=*/true, /*may_be_empty=*/false))
    .Attr("output_padding", AttrType::kInts,
          AttrValue(std::vector<int32_t>{0, 0}),
          PerAxis(2, /*positive=*/false, /*may_be_empty=*/false))
    .Attr("output_size", AttrType::kInts, AttrValue(std::vector<int32_t>{}),
          PerAxis(2, /*positive=*/true, /*may_be_empty=*/true))
    .Attr("groups", AttrType::kInt, AttrValue(1), Positive())
    .Infer(InferConvTranspose<2>)
    .Grad(ConvTransposeGrad("conv2d_transpose_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &ForwardKernel<float, 2>)
    .Kernel(DeviceType::kCPU, kFloat64, &ForwardKernel<double, 2>);

// Reads Bias only for the shape of Bias@GRAD.
SF_REGISTER_OP(conv2d_transpose_grad)
    .Input("Input")
    .Input("Filter")
    .Input("Bias", /*optional=*/true)
    .Input("Output@GRAD")
    .Output("Input@GRAD", /*optional=*/true)
    .Output("Filter@GRAD", /*optional=*/true)
    .Output("Bias@GRAD", /*optional=*/true)
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PerAxis(2, /*positive=*/true, /*may_be_empty=*/false))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0}),
          Paddings(2))
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PerAxis(2, /*positive=*/true, /*may_be_empty=*/false))
    .Attr("output_padding", AttrType::kInts,
          AttrValue(std::vector<int32_t>{0, 0}),
          PerAxis(2, /*positive=*/false, /*may_be_empty=*/false))
    .Attr("output_size", AttrType::kInts, AttrValue(std::vector<int32_t>{}),
          PerAxis(2, /*positive=*/true, /*may_be_empty=*/true))
    .Attr("groups", AttrType::kInt, AttrValue(1), Positive())
    .Infer(InferConvTransposeGrad<2>)
    .Kernel(DeviceType::kCPU, kFloat32, &GradKernel<float, 2>)
    .Kernel(DeviceType::kCPU, kFloat64, &GradKernel<double, 2>);

SF_REGISTER_OP(conv3d_transpose)
    .Input("Input")
    .Input("Filter")
    .Input("Bias", /*optional=*/true)
    .Output("Output")
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1, 1}),
          PerAxis(3, /*positive=*/true, /*may_be_empty=*/false))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0, 0}),
          Paddings(3))
    .Attr("dilations", AttrType::kInts,
          AttrValue(std::vector<int32_t>{1, 1, 1}),
          PerAxis(3, /*positive=*/true, /*may_be_empty=*/false))
    .Attr("output_padding", AttrType::kInts,
          AttrValue(std::vector<int32_t>{0, 0, 0}),
          PerAxis(3, /*positive=*/false, /*may_be_empty=*/false))
    .Attr("output_size", AttrType::kInts, AttrValue(std::vector<int32_t>{}),
          PerAxis(3, /*positive=*/true, /*may_be_empty=*/true))
    .Attr("groups", AttrType::kInt, AttrValue(1), Positive())
    .Infer(InferConvTranspose<3>)
    .Grad(ConvTransposeGrad("conv3d_transpose_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &ForwardKernel<float, 3>)
    .Kernel(DeviceType::kCPU, kFloat64, &ForwardKernel<double, 3>);

SF_REGISTER_OP(conv3d_transpose_grad)
    .Input("Input")
    .Input("Filter")
    .Input("Bias", /*optional=*/true)
    .Input("Output@GRAD")
    .Output("Input@GRAD", /*optional=*/true)
    .Output("Filter@GRAD", /*optional=*/true)
    .Output("Bias@GRAD", /*optional=*/true)
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1, 1}),
          PerAxis(3, /*positive=*/true, /*may_be_empty=*/false))
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0, 0}),
          Paddings(3))
    .Attr("dilations", AttrType::kInts,
          AttrValue(std::vector<int32_t>{1, 1, 1}),
          PerAxis(3, /*positive=*/true, /*may_be_empty=*/false))
    .Attr("output_padding", AttrType::kInts,
          AttrValue(std::vector<int32_t>{0, 0, 0}),
          PerAxis(3, /*positive=*/false, /*may_be_empty=*/false))
    .Attr("output_size", AttrType::kInts, AttrValue(std::vector<int32_t>{}),
          PerAxis(3, /*positive=*/true, /*may_be_empty=*/true))
    .Attr("groups", AttrType::kInt, AttrValue(1), Positive())
    .Infer(InferConvTransposeGrad<3>)
    .Kernel(DeviceType::kCPU, kFloat32, &GradKernel<float, 3>)
    .Kernel(DeviceType::kCPU, kFloat64, &GradKernel<double, 3>);

}  // namespace scopeflow
