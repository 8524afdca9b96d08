// A box cut out of a tensor and a tensor framed in a border: slice and pad,
// and their gradients (each puts Out@GRAD back where X's elements went,
// summing where pad's border copied them).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/shape/shape_util.h"
#include "operators/shape/slice_pad_util.h"
#include "operators/strided_copy.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::CheckPaddings;
using shape_util::DescribeInput;
using shape_util::KernelPaddings;
using shape_util::PadMode;
using shape_util::PadModeOf;
using shape_util::PadValueAs;
using shape_util::ResolveSlice;
using shape_util::Slice;
using shape_util::SliceBox;
using shape_util::SliceBoxOf;
using shape_util::SliceParams;
using shape_util::SliceParamsOf;
using shape_util::SliceRange;

// The axes that unknown `params` slice, when those are known already.
std::optional<std::vector<int>> KnownSlicedAxes(const InferContext& context,
                                                const SliceParams& params,
                                                int rank) {
  if (!params.axes.has_value()) return std::nullopt;
  if (!params.axes->values.empty()) {
    absl::StatusOr<std::vector<int>> axes =
        NormalizeAxisList(*params.axes, rank);
    // A bad axis is reported once the values are known.
    return axes.ok() ? std::optional<std::vector<int>>(*axes) : std::nullopt;
  }
  const int64_t n = params.starts.has_value()
                        ? static_cast<int64_t>(params.starts->values.size())
                        : IntListInputLength(context, "Starts");
  if (n < 0 || n > rank) return std::nullopt;
  std::vector<int> axes(n);
  for (int i = 0; i < n; ++i) axes[i] = i;
  return axes;
}

absl::StatusOr<VarInfo> SliceOutInfo(const InferContext& context) {
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const SliceParams params, SliceParamsOf(context));
  if (!x.has_dims) return shape_util::UnknownRank(x.dtype);
  const int rank = static_cast<int>(x.dims.size());
  Dims out = x.dims;
  if (!params.known()) {
    // The sliced dims wait for the values; all of them if the axes do.
    const std::optional<std::vector<int>> axes =
        KnownSlicedAxes(context, params, rank);
    if (!axes.has_value()) return VarInfo{x.dtype, Dims(rank, -1), true};
    for (int a : *axes) out[a] = -1;
    return VarInfo{x.dtype, std::move(out), true};
  }
  SF_ASSIGN_OR_RETURN(const Slice slice,
                      ResolveSlice(params, rank, DescribeInput(context, "X")));
  for (size_t i = 0; i < slice.axes.size(); ++i) {
    const int a = slice.axes[i];
    if (x.dims[a] < 0) continue;
    out[a] =
        SliceRange(slice.starts[i], slice.ends[i], slice.steps[i], x.dims[a])
            .size;
  }
  return VarInfo{x.dtype, std::move(out), true};
}

absl::Status InferSlice(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, SliceOutInfo(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status SliceKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const SliceBox box,
                      SliceBoxOf(context, x.dims(), out->dims(), "Out"));
  if (out->numel() == 0) return absl::OkStatus();
  const size_t size = SizeOf(x.dtype());
  CopyStrided(out->raw_data(), StridesOf(out->dims()),
              static_cast<const char*>(x.raw_data()) + box.offset * size,
              box.strides, out->dims(), size);
  return absl::OkStatus();
}

absl::Status InferSliceGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, SliceOutInfo(context));
  SF_RETURN_IF_ERROR(shape_util::CheckOutGrad(context, out));
  if (context.HasOutput("X@GRAD")) {
    context.SetOutput("X@GRAD", context.Input("X"));
  }
  return absl::OkStatus();
}

// Zeros, with Out@GRAD written back into the box the slice read: each
// element of X is read at most once by a slice, so no sums are needed.
absl::Status SliceGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  SF_ASSIGN_OR_RETURN(const SliceBox box, SliceBoxOf(context, x_grad->dims(),
                                                     grad.dims(), "Out@GRAD"));
  if (x_grad->numel() == 0) return absl::OkStatus();
  // All-zero bytes are 0 in every dtype the op has.
  std::memset(x_grad->raw_data(), 0, x_grad->nbytes());
  if (grad.numel() == 0) return absl::OkStatus();
  const size_t size = SizeOf(grad.dtype());
  CopyStrided(static_cast<char*>(x_grad->raw_data()) + box.offset * size,
              box.strides, grad.raw_data(), StridesOf(grad.dims()), grad.dims(),
              size);
  return absl::OkStatus();
}

// Outside constant mode the border copies X's elements: a padded dim of X
// (of `x_dims`, described by `x`) must have some.
absl::Status CheckPadSources(const Attributes& attrs, const IntValues& paddings,
                             absl::Span<const int64_t> x_dims,
                             absl::string_view x) {
  if (PadModeOf(attrs) == PadMode::kConstant) return absl::OkStatus();
  const std::vector<int64_t>& p = paddings.values;
  for (size_t i = 0; i < x_dims.size() && 2 * i + 1 < p.size(); ++i) {
    SF_CHECK(x_dims[i] != 0 || (p[2 * i] == 0 && p[2 * i + 1] == 0),
             "attribute \"mode\" = \"%s\" fills the border from X's elements, "
             "but %s pads dim %d of %s, which is empty",
             attrs.Get<std::string>("mode"), paddings.source(), i, x);
  }
  return absl::OkStatus();
}

// Where output index `i` of a dim of X's `size` elements (> 0), padded by
// `before` ahead, takes its element from, in a mode other than constant.
int64_t PadSource(PadMode mode, int64_t i, int64_t before, int64_t size) {
  int64_t j = i - before;
  if (mode == PadMode::kEdge) return std::clamp<int64_t>(j, 0, size - 1);
  if (mode == PadMode::kWrap) {
    j %= size;
    return j < 0 ? j + size : j;
  }
  // Reflection repeats with period 2 * (size - 1): up the dim, then down.
  if (size == 1) return 0;
  const int64_t period = 2 * (size - 1);
  j %= period;
  if (j < 0) j += period;
  return j < size ? j : period - j;
}

// Calls fn(out_offset, x_offset) for every element of pad's output (of
// `out_dims`) in row-major order, with the offset of the element of X (of
// `x_dims`) it copies in `mode` (not constant).
template <typename Fn>
void ForEachPadSource(PadMode mode, const std::vector<int64_t>& paddings,
                      absl::Span<const int64_t> x_dims,
                      absl::Span<const int64_t> out_dims, Fn fn) {
  const int rank = static_cast<int>(out_dims.size());
  const int64_t n = NumElements(out_dims);
  if (n == 0) return;
  // Per dim, the X offset of each output index.
  const Dims x_strides = StridesOf(x_dims);
  std::vector<std::vector<int64_t>> sources(rank);
  for (int d = 0; d < rank; ++d) {
    for (int64_t i = 0; i < out_dims[d]; ++i) {
      sources[d].push_back(PadSource(mode, i, paddings[2 * d], x_dims[d]) *
                           x_strides[d]);
    }
  }
  Dims index(rank, 0);
  for (int64_t o = 0; o < n; ++o) {
    int64_t source = 0;
    for (int d = 0; d < rank; ++d) source += sources[d][index[d]];
    fn(o, source);
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < out_dims[d]) break;
      index[d] = 0;
    }
  }
}

absl::Status InferPad(InferContext& context) {
  const VarInfo& x = context.Input("X");
  SF_RETURN_IF_ERROR(CheckScalarInput(context, "PadValue", x.dtype));
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> paddings,
                      IntListOf(context, "Paddings", "paddings"));
  const int64_t rank = x.has_dims ? static_cast<int64_t>(x.dims.size()) : -1;
  if (!paddings.has_value()) {
    // Fed paddings, not known yet: only the rank is.
    const int64_t n = IntListInputLength(context, "Paddings");
    SF_CHECK(n < 0 || rank < 0 || n == 2 * rank,
             "input \"Paddings\" (variable \"%s\") holds %d values, but %s "
             "has rank %d: expected 2 * rank = %d",
             context.InputName("Paddings"), n, DescribeInput(context, "X"),
             rank, 2 * rank);
    const int64_t out_rank = rank >= 0 ? rank : (n >= 0 ? n / 2 : -1);
    if (out_rank < 0) {
      context.SetOutput("Out", shape_util::UnknownRank(x.dtype));
    } else {
      context.SetOutput("Out", 0, x.dtype, Dims(out_rank, -1));
    }
    return absl::OkStatus();
  }
  SF_RETURN_IF_ERROR(
      CheckPaddings(*paddings, rank, DescribeInput(context, "X")));
  const std::vector<int64_t>& p = paddings->values;
  if (x.has_dims) {
    SF_RETURN_IF_ERROR(CheckPadSources(context.attrs(), *paddings, x.dims,
                                       DescribeInput(context, "X")));
  }
  const int out_rank = static_cast<int>(p.size() / 2);
  Dims out(out_rank, -1);
  for (int i = 0; i < out_rank && x.has_dims; ++i) {
    if (x.dims[i] < 0) continue;
    std::optional<int64_t> size = CheckedAdd(x.dims[i], p[2 * i]);
    if (size.has_value()) size = CheckedAdd(*size, p[2 * i + 1]);
    SF_CHECK(size.has_value(), "%s pads dim %d of %s beyond the int64 limit",
             paddings->source(), i, DescribeInput(context, "X"));
    out[i] = *size;
  }
  context.SetOutput("Out", 0, x.dtype, std::move(out));
  return absl::OkStatus();
}

// Constant mode fills the output with the pad value (input "PadValue", or
// attribute "pad_value"), then copies the input into its interior; the
// other modes copy each output element from its source in X.
template <typename T>
absl::Status PadKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const IntValues paddings,
                      KernelPaddings(context, x.dims(), out->dims(), "Out"));
  const std::vector<int64_t>& p = paddings.values;
  const PadMode mode = PadModeOf(context.attrs());
  if (mode != PadMode::kConstant) {
    const T* in = x.data<T>();
    T* data = out->data<T>();
    ForEachPadSource(mode, p, x.dims(), out->dims(),
                     [&](int64_t o, int64_t source) { data[o] = in[source]; });
    return absl::OkStatus();
  }
  T value;
  if (context.HasInput("PadValue")) {
    SF_ASSIGN_OR_RETURN(value, ScalarInput<T>(context, "PadValue"));
  } else {
    SF_ASSIGN_OR_RETURN(value,
                        PadValueAs<T>(context.attrs().Get<float>("pad_value")));
  }
  if (out->numel() == 0) return absl::OkStatus();
  T* data = out->data<T>();
  std::fill(data, data + out->numel(), value);
  const Dims out_strides = StridesOf(out->dims());
  CopyStrided(data + shape_util::InteriorOffset(p, out_strides), out_strides,
              x.raw_data(), StridesOf(x.dims()), x.dims(), sizeof(T));
  return absl::OkStatus();
}

// pad_grad reads Out@GRAD and the paddings: X's dims are Out@GRAD's less
// the paddings. PadValue@GRAD has PadValue's shape.
absl::Status InferPadGrad(InferContext& context) {
  const VarInfo& grad = context.Input("Out@GRAD");
  if (context.HasOutput("PadValue@GRAD")) {
    SF_CHECK(context.HasInput("PadValue"),
             "input \"PadValue\" is not bound: output \"PadValue@GRAD\" takes "
             "its shape");
    SF_RETURN_IF_ERROR(CheckScalarInput(context, "PadValue", grad.dtype));
    context.SetOutput("PadValue@GRAD", context.Input("PadValue"));
  }
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> paddings,
                      IntListOf(context, "Paddings", "paddings"));
  if (!grad.has_dims) {
    context.SetOutput("X@GRAD", shape_util::UnknownRank(grad.dtype));
    return absl::OkStatus();
  }
  const int rank = static_cast<int>(grad.dims.size());
  if (!paddings.has_value()) {
    context.SetOutput("X@GRAD", 0, grad.dtype, Dims(rank, -1));
    return absl::OkStatus();
  }
  SF_RETURN_IF_ERROR(
      CheckPaddings(*paddings, rank, DescribeInput(context, "Out@GRAD")));
  const std::vector<int64_t>& p = paddings->values;
  Dims x(rank, -1);
  for (int i = 0; i < rank; ++i) {
    const int64_t d = grad.dims[i];
    if (d < 0) continue;
    SF_CHECK(p[2 * i] <= d && p[2 * i + 1] <= d - p[2 * i],
             "%s is smaller than %s along dim %d",
             DescribeInput(context, "Out@GRAD"), paddings->source(), i);
    x[i] = d - p[2 * i] - p[2 * i + 1];
  }
  SF_RETURN_IF_ERROR(CheckPadSources(
      context.attrs(), *paddings, x,
      absl::StrCat("X (shape ", DimsToString(x), ": ",
                   DescribeInput(context, "Out@GRAD"), " less the paddings)")));
  context.SetOutput("X@GRAD", 0, grad.dtype, std::move(x));
  return absl::OkStatus();
}

// The sum of Out@GRAD over the border, where the pad value went: the pad
// value's gradient in constant mode. Integers wrap around.
template <typename T>
T BorderSum(const Tensor& grad, const std::vector<int64_t>& paddings,
            absl::Span<const int64_t> x_dims) {
  using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
  const int rank = grad.rank();
  const T* g = grad.data<T>();
  Acc sum = 0;
  Dims index(rank, 0);
  for (int64_t o = 0; o < grad.numel(); ++o) {
    bool inside = true;
    for (int d = 0; d < rank && inside; ++d) {
      inside =
          index[d] >= paddings[2 * d] && index[d] < paddings[2 * d] + x_dims[d];
    }
    if (!inside) sum += static_cast<Acc>(g[o]);
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < grad.dim(d)) break;
      index[d] = 0;
    }
  }
  return static_cast<T>(sum);
}

// X@GRAD in constant mode: the interior of Out@GRAD, where the forward
// kernel copied X; in the other modes each element of Out@GRAD adds into
// the element of X its forward copied, so border elements accumulate into
// their sources. PadValue@GRAD: the sum over the border in constant mode,
// 0 in the others (which ignore the value).
template <typename T>
absl::Status PadGradKernel(KernelContext& context) {
  const bool want_x = context.HasOutput("X@GRAD");
  const bool want_value = context.HasOutput("PadValue@GRAD");
  if (!want_x && !want_value) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  SF_ASSIGN_OR_RETURN(const shape_util::PadGradParams params,
                      shape_util::KernelPadGradParams(context, grad.dims()));
  const std::vector<int64_t>& p = params.paddings.values;
  const Dims& x_dims = params.x_dims;
  const PadMode mode = PadModeOf(context.attrs());
  if (want_value) {
    *context.Output("PadValue@GRAD")->data<T>() =
        mode == PadMode::kConstant ? BorderSum<T>(grad, p, x_dims) : T{0};
  }
  if (!want_x) return absl::OkStatus();
  Tensor* x_grad = context.Output("X@GRAD");
  SF_RETURN_IF_ERROR(shape_util::CheckUnpaddedDims(params, x_grad->dims()));
  if (x_grad->numel() == 0) return absl::OkStatus();
  if (mode != PadMode::kConstant) {
    const T* g = grad.data<T>();
    T* dx = x_grad->data<T>();
    std::fill(dx, dx + x_grad->numel(), T{0});
    ForEachPadSource(mode, p, x_grad->dims(), grad.dims(),
                     [&](int64_t o, int64_t source) { dx[source] += g[o]; });
    return absl::OkStatus();
  }
  const Dims grad_strides = StridesOf(grad.dims());
  CopyStrided(x_grad->raw_data(), StridesOf(x_grad->dims()),
              grad.data<T>() + shape_util::InteriorOffset(p, grad_strides),
              grad_strides, x_grad->dims(), sizeof(T));
  return absl::OkStatus();
}

}  // namespace

// Starts, ends, axes and steps each come from their input (int32 or int64,
// 1-D) when it is bound, else from their attribute. The gradient op reads
// the same inputs; they get no gradient themselves.
SF_REGISTER_OP(slice)
    .Input("X")
    .Input("Starts", /*optional=*/true)
    .Input("Ends", /*optional=*/true)
    .Input("Axes", /*optional=*/true)
    .Input("Steps", /*optional=*/true)
    .Output("Out")
    .Attr("axes", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("starts", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("ends", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("steps", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Infer(InferSlice)
    .Grad(GradSpec("slice_grad")
              .ReadInput("X")
              .ReadInput("Starts")
              .ReadInput("Ends")
              .ReadInput("Axes")
              .ReadInput("Steps")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &SliceKernel; });

// The paddings, [before_0, after_0, before_1, after_1, ...], come from
// input "Paddings" (int32 or int64, 1-D) when it is bound, else from
// attribute "paddings"; the pad value of constant mode from input
// "PadValue" (one element of X's dtype), else from attribute "pad_value".
// "mode" is constant, edge, reflect or wrap (see PadMode). PadValue gets
// a gradient, Paddings none.
SF_REGISTER_OP(pad)
    .Input("X")
    .Input("Paddings", /*optional=*/true)
    .Input("PadValue", /*optional=*/true)
    .Output("Out")
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{}),
          NonNegative())
    .Attr("pad_value", AttrType::kFloat, AttrValue(0.0f))
    .Attr("mode", AttrType::kString, AttrValue(std::string("constant")),
          OneOf({"constant", "edge", "reflect", "wrap"}))
    .Infer(InferPad)
    .Grad(GradSpec("pad_grad")
              .ReadInput("Paddings")
              .ReadInput("PadValue")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("PadValue"))
    .Kernels(DeviceType::kCPU, NumberTypes(),
             [](auto t) { return &PadKernel<typename decltype(t)::type>; })
    .Kernel(DeviceType::kCPU, kBool, &PadKernel<bool>);

SF_REGISTER_OP(slice_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Input("Starts", /*optional=*/true)
    .Input("Ends", /*optional=*/true)
    .Input("Axes", /*optional=*/true)
    .Input("Steps", /*optional=*/true)
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axes", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("starts", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("ends", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("steps", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Infer(InferSliceGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &SliceGradKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &SliceGradKernel)
    .Kernel(DeviceType::kCPU, kInt32, &SliceGradKernel)
    .Kernel(DeviceType::kCPU, kInt64, &SliceGradKernel);

SF_REGISTER_OP(pad_grad)
    .Input("Out@GRAD")
    .Input("Paddings", /*optional=*/true)
    .Input("PadValue", /*optional=*/true)
    .Output("X@GRAD", /*optional=*/true)
    .Output("PadValue@GRAD", /*optional=*/true)
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{}),
          NonNegative())
    .Attr("pad_value", AttrType::kFloat, AttrValue(0.0f))
    .Attr("mode", AttrType::kString, AttrValue(std::string("constant")),
          OneOf({"constant", "edge", "reflect", "wrap"}))
    .Infer(InferPadGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &PadGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PadGradKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &PadGradKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &PadGradKernel<int64_t>);

}  // namespace scopeflow
