// CUDA kernels of the ops of slice_pad.cc: slice and slice_grad move the
// box the slice describes with the strided copy; pad builds each output
// element from its source in X, and pad_grad sums the border or scatters
// Out@GRAD back into X. The parameters are resolved and checked on the
// host by the CPU kernels' helpers (slice_pad_util.h).
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
#include "operators/shape/slice_pad_util.h"
#include "operators/shape/strided_cuda.h"
#include "operators/value_input.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::KernelPaddings;
using shape_util::PadValueAs;
using shape_util::SliceBox;
using shape_util::SliceBoxOf;

// --- slice ---

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

// pad's mode, as the CPU kernel reads it, for the CUDA kernels.
cuda::PadMode PadModeOf(const Attributes& attrs) {
  switch (shape_util::PadModeOf(attrs)) {
    case shape_util::PadMode::kEdge:
      return cuda::PadMode::kEdge;
    case shape_util::PadMode::kReflect:
      return cuda::PadMode::kReflect;
    case shape_util::PadMode::kWrap:
      return cuda::PadMode::kWrap;
    case shape_util::PadMode::kConstant:
      break;
  }
  return cuda::PadMode::kConstant;
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
  SF_ASSIGN_OR_RETURN(const IntValues paddings,
                      KernelPaddings(context, x.dims(), out->dims(), "Out"));
  const std::vector<int64_t>& p = paddings.values;
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
  SF_ASSIGN_OR_RETURN(const shape_util::PadGradParams params,
                      shape_util::KernelPadGradParams(context, grad.dims()));
  const std::vector<int64_t>& p = params.paddings.values;
  const Dims& x_dims = params.x_dims;
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
  SF_RETURN_IF_ERROR(shape_util::CheckUnpaddedDims(params, x_grad->dims()));
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
  CopyStridedOnCuda(
      *cuda, x_grad->raw_data(), StridesOf(x_grad->dims()),
      grad.data<T>() + shape_util::InteriorOffset(p, grad_strides),
      grad_strides, x_grad->dims(), sizeof(T));
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
