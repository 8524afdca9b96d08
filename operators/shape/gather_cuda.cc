// CUDA kernels of gather and gather_grad (gather.cc).
//
// The CPU kernels check every index on the host before copying. Here the
// indices stay on the device, where reading them back would stall the
// stream at every call: an index outside [-n, n) reads zeros (gather) or
// adds nothing (gather_grad) instead of failing the op.
#include <cstdint>

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/shape/shape_kernels_cuda.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// X (or X@GRAD) viewed as [outer, n, inner] around the gathered axis.
struct GatherView {
  int64_t outer, n, inner;
};

GatherView ViewOf(const KernelContext& context, const Dims& dims) {
  const int32_t attr_axis = context.attrs().Get<int32_t>("axis");
  const int rank = static_cast<int>(dims.size());
  const int axis = attr_axis < 0 ? attr_axis + rank : attr_axis;
  const absl::Span<const int64_t> d(dims);
  return {NumElements(d.subspan(0, axis)), d[axis],
          NumElements(d.subspan(axis + 1))};
}

absl::Status GatherCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& index = context.Input("Index");
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();  // No buffer to write.
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const GatherView view = ViewOf(context, x.dims());
  const int64_t inner_bytes =
      view.inner * static_cast<int64_t>(SizeOf(x.dtype()));
  if (index.dtype() == kInt32) {
    cuda::LaunchGather<int32_t>(x.raw_data(), index.data<int32_t>(),
                                out->raw_data(), view.outer, view.n,
                                index.numel(), inner_bytes, cuda->stream());
  } else {
    cuda::LaunchGather<int64_t>(x.raw_data(), index.data<int64_t>(),
                                out->raw_data(), view.outer, view.n,
                                index.numel(), inner_bytes, cuda->stream());
  }
  return CudaLaunchCheck("gather");
}

template <typename T>
absl::Status GatherGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& index = context.Input("Index");
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  if (x_grad->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  SF_RETURN_IF_ERROR(CudaCheck(
      cudaMemsetAsync(x_grad->raw_data(), 0, x_grad->nbytes(), cuda->stream()),
      "gather_grad"));
  if (grad.numel() == 0) return absl::OkStatus();
  const GatherView view = ViewOf(context, x_grad->dims());
  if (index.dtype() == kInt32) {
    cuda::LaunchGatherGrad<T, int32_t>(
        grad.data<T>(), index.data<int32_t>(), x_grad->data<T>(), view.outer,
        view.n, index.numel(), view.inner, cuda->stream());
  } else {
    cuda::LaunchGatherGrad<T, int64_t>(
        grad.data<T>(), index.data<int64_t>(), x_grad->data<T>(), view.outer,
        view.n, index.numel(), view.inner, cuda->stream());
  }
  return CudaLaunchCheck("gather_grad");
}

}  // namespace

SF_REGISTER_KERNEL(gather, DeviceType::kCUDA, kFloat32, &GatherCuda);
SF_REGISTER_KERNEL(gather, DeviceType::kCUDA, kFloat64, &GatherCuda);
SF_REGISTER_KERNEL(gather, DeviceType::kCUDA, kInt32, &GatherCuda);
SF_REGISTER_KERNEL(gather, DeviceType::kCUDA, kInt64, &GatherCuda);
SF_REGISTER_KERNEL(gather, DeviceType::kCUDA, kBool, &GatherCuda);

SF_REGISTER_KERNEL(gather_grad, DeviceType::kCUDA, kFloat32,
                   &GatherGradCuda<float>);
SF_REGISTER_KERNEL(gather_grad, DeviceType::kCUDA, kFloat64,
                   &GatherGradCuda<double>);
SF_REGISTER_KERNEL(gather_grad, DeviceType::kCUDA, kInt32,
                   &GatherGradCuda<int32_t>);
SF_REGISTER_KERNEL(gather_grad, DeviceType::kCUDA, kInt64,
                   &GatherGradCuda<int64_t>);

}  // namespace scopeflow
