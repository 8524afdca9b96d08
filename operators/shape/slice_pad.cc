// A box cut out of a tensor and a tensor framed in a border: slice and pad,
// and their gradients (each puts Out@GRAD back where X's elements went).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/shape/shape_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::CopyStrided;
using shape_util::DescribeInput;
using shape_util::NormalizeAxes;

// Where a slice of one dim begins and how many elements it takes.
struct Range {
  int64_t start;
  int64_t size;
};

// numpy's rules for a[start:end:step] along a dim of size `dim`: negative
// start and end count from the end, then both are clamped into the dim
// ([0, dim] going forward, [-1, dim - 1] going backward).
Range SliceRange(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start + step - 1) / step : 0};
  }
  start = std::clamp<int64_t>(start, -1, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, start > end ? (start - end - step - 1) / -step : 0};
}

// The slice's step along its i-th axis.
int64_t StepOf(const Attributes& attrs, size_t i) {
  const auto& steps = attrs.Get<std::vector<int32_t>>("steps");
  return steps.empty() ? 1 : steps[i];
}

absl::StatusOr<VarInfo> SliceOutInfo(const InferContext& context) {
  const VarInfo& x = context.Input("X");
  const auto& axes = context.attrs().Get<std::vector<int32_t>>("axes");
  const auto& starts = context.attrs().Get<std::vector<int32_t>>("starts");
  const auto& ends = context.attrs().Get<std::vector<int32_t>>("ends");
  const auto& steps = context.attrs().Get<std::vector<int32_t>>("steps");
  SF_CHECK(starts.size() == axes.size() && ends.size() == axes.size() &&
               (steps.empty() || steps.size() == axes.size()),
           "attributes \"axes\", \"starts\", \"ends\" and \"steps\" (if "
           "given) must have one length, got %d, %d, %d and %d, for %s",
           axes.size(), starts.size(), ends.size(), steps.size(),
           DescribeInput(context, "X"));
  for (int32_t step : steps) {
    SF_CHECK(step != 0, "attribute \"steps\" = [%s] holds a 0, for %s",
             absl::StrJoin(steps, ", "), DescribeInput(context, "X"));
  }
  if (!x.has_dims) return shape_util::UnknownRank(x.dtype);
  SF_ASSIGN_OR_RETURN(std::vector<int> normalized,
                      NormalizeAxes(context, "X", axes,
                                    static_cast<int>(x.dims.size()), "axes"));
  Dims out = x.dims;
  for (size_t i = 0; i < normalized.size(); ++i) {
    const int a = normalized[i];
    if (x.dims[a] < 0) continue;
    out[a] =
        SliceRange(starts[i], ends[i], StepOf(context.attrs(), i), x.dims[a])
            .size;
  }
  return VarInfo{x.dtype, std::move(out), true};
}

absl::Status InferSlice(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, SliceOutInfo(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

// Where the slice of a tensor of `dims` starts (in elements) and the
// strides that walk it, for slice's attributes: the box the forward kernel
// reads and the gradient kernel writes.
struct SliceBox {
  int64_t offset = 0;
  Dims strides;
};

SliceBox SliceBoxOf(const Attributes& attrs, absl::Span<const int64_t> dims) {
  const auto& axes = attrs.Get<std::vector<int32_t>>("axes");
  const auto& starts = attrs.Get<std::vector<int32_t>>("starts");
  const auto& ends = attrs.Get<std::vector<int32_t>>("ends");
  const int rank = static_cast<int>(dims.size());
  const Dims x_strides = StridesOf(dims);
  SliceBox box{0, x_strides};
  for (size_t i = 0; i < axes.size(); ++i) {
    const int a = axes[i] < 0 ? axes[i] + rank : axes[i];
    const int64_t step = StepOf(attrs, i);
    const Range range = SliceRange(starts[i], ends[i], step, dims[a]);
    box.offset += range.start * x_strides[a];
    box.strides[a] = x_strides[a] * step;
  }
  return box;
}

absl::Status SliceKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();
  const SliceBox box = SliceBoxOf(context.attrs(), x.dims());
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
  if (x_grad->numel() == 0) return absl::OkStatus();
  // All-zero bytes are 0 in every dtype the op has.
  std::memset(x_grad->raw_data(), 0, x_grad->nbytes());
  if (grad.numel() == 0) return absl::OkStatus();
  const SliceBox box = SliceBoxOf(context.attrs(), x_grad->dims());
  const size_t size = SizeOf(grad.dtype());
  CopyStrided(static_cast<char*>(x_grad->raw_data()) + box.offset * size,
              box.strides, grad.raw_data(), StridesOf(grad.dims()), grad.dims(),
              size);
  return absl::OkStatus();
}

absl::Status InferPad(InferContext& context) {
  const VarInfo& x = context.Input("X");
  const auto& paddings = context.attrs().Get<std::vector<int32_t>>("paddings");
  SF_CHECK(paddings.size() % 2 == 0,
           "attribute \"paddings\" = [%s] has odd length %d: expected "
           "[before_0, after_0, before_1, after_1, ...], two per dim of %s",
           absl::StrJoin(paddings, ", "), paddings.size(),
           DescribeInput(context, "X"));
  const int rank = static_cast<int>(paddings.size() / 2);
  SF_CHECK(!x.has_dims || static_cast<int>(x.dims.size()) == rank,
           "attribute \"paddings\" = [%s] pads %d dims, but %s has rank %d: "
           "expected 2 * rank = %d entries",
           absl::StrJoin(paddings, ", "), rank, DescribeInput(context, "X"),
           x.dims.size(), 2 * x.dims.size());
  Dims out(rank, -1);
  for (int i = 0; i < rank && x.has_dims; ++i) {
    if (x.dims[i] >= 0) {
      out[i] = x.dims[i] + paddings[2 * i] + paddings[2 * i + 1];
    }
  }
  context.SetOutput("Out", 0, x.dtype, std::move(out));
  return absl::OkStatus();
}

// "pad_value" as T: integers truncate toward zero, bool is value != 0. A
// value no T can hold (NaN, beyond the range) is an error.
template <typename T>
absl::StatusOr<T> PadValueAs(float value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const double low = static_cast<double>(std::numeric_limits<T>::min());
    // -low is max + 1, a power of two that a double holds exactly.
    SF_CHECK(value >= low && value < -low,
             "attribute \"pad_value\" = %g does not fit the dtype %s", value,
             DataTypeName(DataTypeOf<T>()));
  }
  return static_cast<T>(value);
}

// Fills the output with "pad_value", then copies the input into its
// interior.
template <typename T>
absl::Status PadKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const auto& paddings = context.attrs().Get<std::vector<int32_t>>("paddings");
  SF_ASSIGN_OR_RETURN(const T value,
                      PadValueAs<T>(context.attrs().Get<float>("pad_value")));
  if (out->numel() == 0) return absl::OkStatus();
  T* data = out->data<T>();
  std::fill(data, data + out->numel(), value);
  const Dims out_strides = StridesOf(out->dims());
  int64_t dst_offset = 0;
  for (int i = 0; i < x.rank(); ++i) {
    dst_offset += paddings[2 * i] * out_strides[i];
  }
  CopyStrided(data + dst_offset, out_strides, x.raw_data(), StridesOf(x.dims()),
              x.dims(), sizeof(T));
  return absl::OkStatus();
}

// pad_grad reads only Out@GRAD: X's dims are its dims less the paddings.
absl::Status InferPadGrad(InferContext& context) {
  const VarInfo& grad = context.Input("Out@GRAD");
  const auto& paddings = context.attrs().Get<std::vector<int32_t>>("paddings");
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  if (!grad.has_dims) {
    context.SetOutput("X@GRAD", shape_util::UnknownRank(grad.dtype));
    return absl::OkStatus();
  }
  const int rank = static_cast<int>(grad.dims.size());
  SF_CHECK(static_cast<int>(paddings.size()) == 2 * rank,
           "attribute \"paddings\" = [%s] has %d entries, but %s has rank %d: "
           "expected 2 * rank = %d entries",
           absl::StrJoin(paddings, ", "), paddings.size(),
           DescribeInput(context, "Out@GRAD"), rank, 2 * rank);
  Dims x(rank, -1);
  for (int i = 0; i < rank; ++i) {
    if (grad.dims[i] < 0) continue;
    x[i] = grad.dims[i] - paddings[2 * i] - paddings[2 * i + 1];
    SF_CHECK(x[i] >= 0,
             "%s is smaller than attribute \"paddings\" = [%s] along dim %d",
             DescribeInput(context, "Out@GRAD"), absl::StrJoin(paddings, ", "),
             i);
  }
  context.SetOutput("X@GRAD", 0, grad.dtype, std::move(x));
  return absl::OkStatus();
}

// The interior of Out@GRAD, where the forward kernel copied X; the border
// holds constants, whose gradient goes nowhere.
absl::Status PadGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  if (x_grad->numel() == 0) return absl::OkStatus();
  const auto& paddings = context.attrs().Get<std::vector<int32_t>>("paddings");
  const Dims grad_strides = StridesOf(grad.dims());
  int64_t src_offset = 0;
  for (int i = 0; i < grad.rank(); ++i) {
    src_offset += paddings[2 * i] * grad_strides[i];
  }
  const size_t size = SizeOf(grad.dtype());
  CopyStrided(x_grad->raw_data(), StridesOf(x_grad->dims()),
              static_cast<const char*>(grad.raw_data()) + src_offset * size,
              grad_strides, x_grad->dims(), size);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(slice)
    .Input("X")
    .Output("Out")
    .Attr("axes", AttrType::kInts)
    .Attr("starts", AttrType::kInts)
    .Attr("ends", AttrType::kInts)
    .Attr("steps", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Infer(InferSlice)
    .Grad(GradSpec("slice_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &SliceKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &SliceKernel)
    .Kernel(DeviceType::kCPU, kInt32, &SliceKernel)
    .Kernel(DeviceType::kCPU, kInt64, &SliceKernel)
    .Kernel(DeviceType::kCPU, kBool, &SliceKernel);

SF_REGISTER_OP(pad)
    .Input("X")
    .Output("Out")
    .Attr("paddings", AttrType::kInts, NonNegative())
    .Attr("pad_value", AttrType::kFloat, AttrValue(0.0f))
    .Infer(InferPad)
    .Grad(GradSpec("pad_grad").ReadOutputGrad("Out").WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &PadKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PadKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &PadKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &PadKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &PadKernel<bool>);

SF_REGISTER_OP(slice_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axes", AttrType::kInts)
    .Attr("starts", AttrType::kInts)
    .Attr("ends", AttrType::kInts)
    .Attr("steps", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Infer(InferSliceGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &SliceGradKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &SliceGradKernel)
    .Kernel(DeviceType::kCPU, kInt32, &SliceGradKernel)
    .Kernel(DeviceType::kCPU, kInt64, &SliceGradKernel);

SF_REGISTER_OP(pad_grad)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("paddings", AttrType::kInts, NonNegative())
    .Attr("pad_value", AttrType::kFloat, AttrValue(0.0f))
    .Infer(InferPadGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &PadGradKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &PadGradKernel)
    .Kernel(DeviceType::kCPU, kInt32, &PadGradKernel)
    .Kernel(DeviceType::kCPU, kInt64, &PadGradKernel);

}  // namespace scopeflow
