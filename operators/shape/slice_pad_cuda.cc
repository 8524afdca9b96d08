// CUDA kernels of the ops of slice_pad.cc: slice and slice_grad move the
// box the slice describes with the strided copy; pad builds each output
// element from its source in X, and pad_grad sums the border or scatters
// Out@GRAD back into X. The parameters are resolved and checked on the
// host exactly as the CPU kernels do (the helpers below follow theirs).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/common.h"
#include "operators/shape/shape_kernels_cuda.h"
#include "operators/shape/strided_cuda.h"
#include "operators/value_input.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// --- slice ---

struct Range {
  int64_t start;
  int64_t size;
};

// numpy's a[start:end:step] along a dim of size `dim`, as slice_pad.cc.
Range SliceRange(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start - 1) / step + 1 : 0};
  }
  start = std::clamp<int64_t>(start, -1, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, start > end ? (start - end - 1) / -step + 1 : 0};
}

// Where the slice starts in X (in elements) and the strides that walk it.
struct SliceBox {
  int64_t offset = 0;
  Dims strides;
};

// The slice the kernel's inputs describe, for X of `dims`, checked against
// `box_dims` (Out's or Out@GRAD's shape) as the CPU kernels check it.
absl::StatusOr<SliceBox> SliceBoxOf(const KernelContext& context,
                                    absl::Span<const int64_t> dims,
                                    absl::Span<const int64_t> box_dims,
                                    absl::string_view box_slot) {
  SF_ASSIGN_OR_RETURN(const IntValues starts,
                      IntListOf(context, "Starts", "starts"));
  SF_ASSIGN_OR_RETURN(const IntValues ends, IntListOf(context, "Ends", "ends"));
  SF_ASSIGN_OR_RETURN(const IntValues axes, IntListOf(context, "Axes", "axes"));
  SF_ASSIGN_OR_RETURN(const IntValues steps,
                      IntListOf(context, "Steps", "steps"));
  const int rank = static_cast<int>(dims.size());
  const std::string input =
      absl::StrCat("input \"X\" of shape ", DimsToString(dims));
  const size_t n = starts.values.size();
  SF_CHECK(ends.values.size() == n &&
               (axes.values.empty() || axes.values.size() == n) &&
               (steps.values.empty() || steps.values.size() == n),
           "expected as many ends, axes (if any) and steps (if any) as "
           "starts, got %s, %s, %s and %s, for %s",
           starts.source(), ends.source(), axes.source(), steps.source(),
           input);
  for (int64_t step : steps.values) {
    SF_CHECK(step != 0, "%s holds a 0, for %s", steps.source(), input);
  }
  std::vector<int> sliced;
  if (axes.values.empty()) {
    SF_CHECK(static_cast<int64_t>(n) <= rank,
             "%s slices %d axes, but the input has rank %d (no axes given: "
             "expected one start per leading axis), for %s",
             starts.source(), n, rank, input);
    for (size_t i = 0; i < n; ++i) sliced.push_back(static_cast<int>(i));
  } else {
    SF_ASSIGN_OR_RETURN(sliced, NormalizeAxisList(axes, rank, input));
  }
  Dims expected(dims.begin(), dims.end());
  const Dims x_strides = StridesOf(dims);
  SliceBox box{0, x_strides};
  for (size_t i = 0; i < n; ++i) {
    const int a = sliced[i];
    // A step of INT64_MIN takes the first element only, as the largest
    // negative step that can be negated does.
    const int64_t step =
        steps.values.empty()
            ? 1
            : std::max(steps.values[i], -std::numeric_limits<int64_t>::max());
    const Range range =
        SliceRange(starts.values[i], ends.values[i], step, dims[a]);
    expected[a] = range.size;
    box.offset += range.start * x_strides[a];
    // A step beyond the dim takes one element; its stride is never used.
    box.strides[a] = range.size > 1 ? x_strides[a] * step : 0;
  }
  SF_CHECK(absl::Span<const int64_t>(expected) == box_dims,
           "the slice of input \"X\" of shape %s has shape %s, but \"%s\" "
           "has shape %s",
           DimsToString(dims), DimsToString(expected), box_slot,
           DimsToString(box_dims));
  return box;
}

absl::Status SliceCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const SliceBox box,
                      SliceBoxOf(context, x.dims(), out->dims(), "Out"));
  if (out->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const size_t size = SizeOf(x.dtype());
  CopyStridedOnCuda(*cuda, out->raw_data(), StridesOf(out->dims()),
                    static_cast<const char*>(x.raw_data()) + box.offset * size,
                    box.strides, out->dims(), size);
  return CudaLaunchCheck("slice");
}

// Zeros, with Out@GRAD written back into the box the slice read.
absl::Status SliceGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  SF_ASSIGN_OR_RETURN(const SliceBox box, SliceBoxOf(context, x_grad->dims(),
                                                     grad.dims(), "Out@GRAD"));
  if (x_grad->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  // All-zero bytes are 0 in every dtype the op has.
  SF_RETURN_IF_ERROR(CudaCheck(
      cudaMemsetAsync(x_grad->raw_data(), 0, x_grad->nbytes(), cuda->stream()),
      "slice_grad"));
  if (grad.numel() == 0) return absl::OkStatus();
  const size_t size = SizeOf(grad.dtype());
  CopyStridedOnCuda(
      *cuda, static_cast<char*>(x_grad->raw_data()) + box.offset * size,
      box.strides, grad.raw_data(), StridesOf(grad.dims()), grad.dims(), size);
  return CudaLaunchCheck("slice_grad");
}

// --- pad ---

cuda::PadMode PadModeOf(const Attributes& attrs) {
  const std::string& mode = attrs.Get<std::string>("mode");
  if (mode == "edge") return cuda::PadMode::kEdge;
  if (mode == "reflect") return cuda::PadMode::kReflect;
  if (mode == "wrap") return cuda::PadMode::kWrap;
  return cuda::PadMode::kConstant;
}

// As slice_pad.cc: two non-negative paddings per dim of a tensor of rank
// `rank`, which `x` describes.
absl::Status CheckPaddings(const IntValues& paddings, int64_t rank,
                           absl::string_view x) {
  const int64_t n = static_cast<int64_t>(paddings.values.size());
  SF_CHECK(n % 2 == 0,
           "%s has odd length %d: expected [before_0, after_0, before_1, "
           "after_1, ...], two per dim of %s",
           paddings.source(), n, x);
  SF_CHECK(rank < 0 || n == 2 * rank,
           "%s pads %d dims, but %s has rank %d: expected 2 * rank = %d "
           "entries",
           paddings.source(), n / 2, x, rank, 2 * rank);
  for (int64_t p : paddings.values) {
    SF_CHECK(p >= 0,
             "%s holds a negative value (expected non-negative), for %s",
             paddings.source(), x);
  }
  return absl::OkStatus();
}

// "pad_value" as T, as slice_pad.cc: an error where T cannot hold it.
template <typename T>
absl::StatusOr<T> PadValueAs(float value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const double low = static_cast<double>(std::numeric_limits<T>::min());
    SF_CHECK(value >= low && value < -low,
             "attribute \"pad_value\" = %g does not fit the dtype %s", value,
             DataTypeName(DataTypeOf<T>()));
  }
  return static_cast<T>(value);
}

// The kernels' view of pad's output (`out`) against X (`x`): dims that are
// not padded merge with their unpadded neighbours, and those of size 1
// drop, so that few dims are left to walk.
absl::StatusOr<cuda::PadBox> PadBoxOf(const KernelContext& context,
                                      absl::Span<const int64_t> x,
                                      absl::Span<const int64_t> out,
                                      const std::vector<int64_t>& paddings) {
  cuda::PadBox box;
  bool last_unpadded = false;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool unpadded = paddings[2 * i] == 0 && paddings[2 * i + 1] == 0;
    if (unpadded && x[i] == 1) continue;
    if (unpadded && last_unpadded) {
      box.x_dims[box.rank - 1] *= x[i];
      box.out_dims[box.rank - 1] *= out[i];
      continue;
    }
    SF_CHECK(box.rank < cuda::kMaxBoxRank,
             "%s on CUDA: X of shape %s padded by [%s] leaves more than %d "
             "dims to walk once unpadded ones are merged",
             context.op_type(), DimsToString(x), absl::StrJoin(paddings, ", "),
             cuda::kMaxBoxRank);
    box.x_dims[box.rank] = x[i];
    box.out_dims[box.rank] = out[i];
    box.before[box.rank] = paddings[2 * i];
    ++box.rank;
    last_unpadded = unpadded;
  }
  return box;
}

template <typename T>
absl::Status PadCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(IntValues paddings,
                      IntListOf(context, "Paddings", "paddings"));
  const std::string x_text =
      absl::StrCat("X of shape ", DimsToString(x.dims()));
  SF_RETURN_IF_ERROR(CheckPaddings(paddings, x.rank(), x_text));
  const std::vector<int64_t>& p = paddings.values;
  Dims padded = x.dims();
  for (int i = 0; i < x.rank(); ++i) padded[i] += p[2 * i] + p[2 * i + 1];
  SF_CHECK(padded == out->dims(), "%s pads %s to %s, but \"%s\" has shape %s",
           paddings.source(), x_text, DimsToString(padded), "Out",
           DimsToString(out->dims()));
  const cuda::PadMode mode = PadModeOf(context.attrs());
  T value{};
  const T* value_on_device = nullptr;
  if (mode == cuda::PadMode::kConstant) {
    if (context.HasInput("PadValue")) {
      // Read by the kernel, on the device; checked as ScalarInput does.
      const Tensor& tensor = context.Input("PadValue");
      SF_CHECK(tensor.dtype() == DataTypeOf<T>() && tensor.numel() == 1 &&
                   tensor.rank() <= 1,
               "input \"%s\" (variable \"%s\") is %s: expected one %s element",
               "PadValue", context.InputName("PadValue"), tensor.DebugString(),
               DataTypeName(DataTypeOf<T>()));
      value_on_device = tensor.data<T>();
    } else {
      SF_ASSIGN_OR_RETURN(
          value, PadValueAs<T>(context.attrs().Get<float>("pad_value")));
    }
  }
  if (out->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const cuda::PadBox box,
                      PadBoxOf(context, x.dims(), out->dims(), p));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchPad<T>(mode, box, x.data<T>(), out->data<T>(), value,
                     value_on_device, cuda->stream());
  return CudaLaunchCheck("pad");
}

// As the CPU kernel: X@GRAD is the interior of Out@GRAD in constant mode,
// the sum of every element copied from each of X's in the others;
// PadValue@GRAD the sum over the border in constant mode, else 0.
template <typename T>
absl::Status PadGradCuda(KernelContext& context) {
  const bool want_x = context.HasOutput("X@GRAD");
  const bool want_value = context.HasOutput("PadValue@GRAD");
  if (!want_x && !want_value) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  SF_ASSIGN_OR_RETURN(const IntValues paddings,
                      IntListOf(context, "Paddings", "paddings"));
  const std::string grad_text =
      absl::StrCat("Out@GRAD of shape ", DimsToString(grad.dims()));
  SF_RETURN_IF_ERROR(CheckPaddings(paddings, grad.rank(), grad_text));
  const std::vector<int64_t>& p = paddings.values;
  Dims x_dims = grad.dims();
  for (int i = 0; i < grad.rank(); ++i) {
    SF_CHECK(p[2 * i] <= x_dims[i] && p[2 * i + 1] <= x_dims[i] - p[2 * i],
             "%s is smaller than %s along dim %d", grad_text, paddings.source(),
             i);
    x_dims[i] -= p[2 * i] + p[2 * i + 1];
  }
  const cuda::PadMode mode = PadModeOf(context.attrs());
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  if (want_value) {
    T* value_grad = context.Output("PadValue@GRAD")->data<T>();
    if (mode == cuda::PadMode::kConstant) {
      SF_ASSIGN_OR_RETURN(const cuda::PadBox box,
                          PadBoxOf(context, x_dims, grad.dims(), p));
      SF_ASSIGN_OR_RETURN(void* workspace,
                          cuda->Workspace(cuda::kBorderSumBlocks * 8));
      cuda::LaunchBorderSum<T>(box, grad.data<T>(), value_grad, workspace,
                               cuda->stream());
      SF_RETURN_IF_ERROR(CudaLaunchCheck("pad_grad"));
    } else {
      SF_RETURN_IF_ERROR(
          CudaCheck(cudaMemsetAsync(value_grad, 0, sizeof(T), cuda->stream()),
                    "pad_grad"));
    }
  }
  if (!want_x) return absl::OkStatus();
  Tensor* x_grad = context.Output("X@GRAD");
  SF_CHECK(x_dims == x_grad->dims(),
           "%s unpads %s to %s, but \"X@GRAD\" has shape %s", paddings.source(),
           grad_text, DimsToString(x_dims), DimsToString(x_grad->dims()));
  if (x_grad->numel() == 0) return absl::OkStatus();
  if (mode != cuda::PadMode::kConstant) {
    SF_ASSIGN_OR_RETURN(const cuda::PadBox box,
                        PadBoxOf(context, x_dims, grad.dims(), p));
    SF_RETURN_IF_ERROR(
        CudaCheck(cudaMemsetAsync(x_grad->raw_data(), 0, x_grad->nbytes(),
                                  cuda->stream()),
                  "pad_grad"));
    cuda::LaunchPadGradScatter<T>(mode, box, grad.data<T>(), x_grad->data<T>(),
                                  cuda->stream());
    return CudaLaunchCheck("pad_grad");
  }
  const Dims grad_strides = StridesOf(grad.dims());
  int64_t src_offset = 0;
  for (int i = 0; i < grad.rank(); ++i) {
    src_offset += p[2 * i] * grad_strides[i];
  }
  CopyStridedOnCuda(*cuda, x_grad->raw_data(), StridesOf(x_grad->dims()),
                    grad.data<T>() + src_offset, grad_strides, x_grad->dims(),
                    sizeof(T));
  return CudaLaunchCheck("pad_grad");
}

}  // namespace

SF_REGISTER_KERNEL(slice, DeviceType::kCUDA, kFloat32, &SliceCuda);
SF_REGISTER_KERNEL(slice, DeviceType::kCUDA, kFloat64, &SliceCuda);
SF_REGISTER_KERNEL(slice, DeviceType::kCUDA, kInt32, &SliceCuda);
SF_REGISTER_KERNEL(slice, DeviceType::kCUDA, kInt64, &SliceCuda);
SF_REGISTER_KERNEL(slice, DeviceType::kCUDA, kBool, &SliceCuda);

SF_REGISTER_KERNEL(slice_grad, DeviceType::kCUDA, kFloat32, &SliceGradCuda);
SF_REGISTER_KERNEL(slice_grad, DeviceType::kCUDA, kFloat64, &SliceGradCuda);
SF_REGISTER_KERNEL(slice_grad, DeviceType::kCUDA, kInt32, &SliceGradCuda);
SF_REGISTER_KERNEL(slice_grad, DeviceType::kCUDA, kInt64, &SliceGradCuda);

SF_REGISTER_KERNEL(pad, DeviceType::kCUDA, kFloat32, &PadCuda<float>);
SF_REGISTER_KERNEL(pad, DeviceType::kCUDA, kFloat64, &PadCuda<double>);
SF_REGISTER_KERNEL(pad, DeviceType::kCUDA, kInt32, &PadCuda<int32_t>);
SF_REGISTER_KERNEL(pad, DeviceType::kCUDA, kInt64, &PadCuda<int64_t>);
SF_REGISTER_KERNEL(pad, DeviceType::kCUDA, kBool, &PadCuda<bool>);

SF_REGISTER_KERNEL(pad_grad, DeviceType::kCUDA, kFloat32, &PadGradCuda<float>);
SF_REGISTER_KERNEL(pad_grad, DeviceType::kCUDA, kFloat64, &PadGradCuda<double>);
SF_REGISTER_KERNEL(pad_grad, DeviceType::kCUDA, kInt32, &PadGradCuda<int32_t>);
SF_REGISTER_KERNEL(pad_grad, DeviceType::kCUDA, kInt64, &PadGradCuda<int64_t>);

}  // namespace scopeflow
