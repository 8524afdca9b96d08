// CUDA kernels of the ops of relayout.cc: transpose, expand and tile copy
// X by strides (the CPU kernels' boxes, walked by the strided kernel), and
// expand_grad and tile_grad sum Out@GRAD back along the same strides.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/common.h"
#include "operators/shape/relayout_util.h"
#include "operators/shape/strided_cuda.h"
#include "operators/value_input.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::KernelRepeats;
using shape_util::TileBox;
using shape_util::TileBoxOf;

absl::Status TransposeCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const Dims src_strides = shape_util::TransposedStrides(
      x.dims(), context.attrs().Get<std::vector<int32_t>>("perm"));
  CopyStridedOnCuda(*cuda, out->raw_data(), StridesOf(out->dims()),
                    x.raw_data(), src_strides, out->dims(), SizeOf(x.dtype()));
  return CudaLaunchCheck("transpose");
}

absl::Status ExpandCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const Dims src_strides = shape_util::BroadcastStrides(x.dims(), out->rank());
  CopyStridedOnCuda(*cuda, out->raw_data(), StridesOf(out->dims()),
                    x.raw_data(), src_strides, out->dims(), SizeOf(x.dtype()));
  return CudaLaunchCheck("expand");
}

absl::Status TileCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> repeats,
                      KernelRepeats(context, x.dims(), out->dims(), "Out"));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const TileBox tile = TileBoxOf(x.dims(), out->rank(), repeats);
  CopyStridedOnCuda(*cuda, out->raw_data(), StridesOf(tile.box), x.raw_data(),
                    tile.x_strides, tile.box, SizeOf(x.dtype()));
  return CudaLaunchCheck("tile");
}

// Sums Out@GRAD (walked as `box` with `grad_strides`) into X@GRAD through
// `x_strides`, 0 on the dims the forward op broadcast or repeated along.
template <typename T>
absl::Status SumIntoXGrad(KernelContext& context, const Tensor& grad,
                          Tensor* x_grad, absl::Span<const int64_t> x_strides,
                          absl::Span<const int64_t> grad_strides,
                          absl::Span<const int64_t> box) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  if (x_grad->numel() == 0) return absl::OkStatus();
  if (grad.numel() == 0) {
    return CudaCheck(cudaMemsetAsync(x_grad->raw_data(), 0, x_grad->nbytes(),
                                     cuda->stream()),
                     context.op_type().c_str());
  }
  // Every element of X@GRAD has at least one element of Out@GRAD: the
  // sum writes them all.
  return SumStridedOnCuda<T>(*cuda, x_grad->data<T>(), x_strides,
                             grad.data<T>(), grad_strides, box,
                             /*accumulate=*/false);
}

template <typename T>
absl::Status ExpandGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  const Dims dst_strides =
      shape_util::BroadcastStrides(x_grad->dims(), grad.rank());
  return SumIntoXGrad<T>(context, grad, x_grad, dst_strides,
                         StridesOf(grad.dims()), grad.dims());
}

template <typename T>
absl::Status TileGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  SF_ASSIGN_OR_RETURN(
      const std::vector<int64_t> repeats,
      KernelRepeats(context, x_grad->dims(), grad.dims(), "Out@GRAD"));
  const TileBox tile = TileBoxOf(x_grad->dims(), grad.rank(), repeats);
  return SumIntoXGrad<T>(context, grad, x_grad, tile.x_strides,
                         StridesOf(tile.box), tile.box);
}

}  // namespace

#define SF_REGISTER_COPY_CUDA(op, fn)                       \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32, &fn); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64, &fn); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt32, &fn);   \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt64, &fn);   \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kBool, &fn)

SF_REGISTER_COPY_CUDA(transpose, TransposeCuda);
SF_REGISTER_COPY_CUDA(expand, ExpandCuda);
SF_REGISTER_COPY_CUDA(tile, TileCuda);
#undef SF_REGISTER_COPY_CUDA

#define SF_REGISTER_SUM_CUDA(op, fn)                                \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32, &fn<float>);  \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64, &fn<double>); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt32, &fn<int32_t>);  \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt64, &fn<int64_t>)

SF_REGISTER_SUM_CUDA(expand_grad, ExpandGradCuda);
SF_REGISTER_SUM_CUDA(tile_grad, TileGradCuda);
#undef SF_REGISTER_SUM_CUDA

}  // namespace scopeflow
