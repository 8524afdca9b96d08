// CUDA kernels of gather and gather_grad (gather.cc).
//
// The CPU kernels check every index on the host before copying. Here the
// indices stay on the device, where reading them back would stall the
// stream at every call: the kernels skip an index outside [-n, n) (gather
// reads zeros, gather_grad adds nothing) and write it to a device check
// slot, which fails the run once its stream is synchronised.
#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/shape/shape_kernels_cuda.h"
#include "platform/cuda_context.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// X (or X@GRAD) viewed as [outer, n, inner] around the gathered axis.
struct GatherView {
  int axis;
  int64_t outer, n, inner;
};

GatherView ViewOf(const KernelContext& context, const Dims& dims) {
  const int32_t attr_axis = context.attrs().Get<int32_t>("axis");
  const int rank = static_cast<int>(dims.size());
  const int axis = attr_axis < 0 ? attr_axis + rank : attr_axis;
  const absl::Span<const int64_t> d(dims);
  return {axis, NumElements(d.subspan(0, axis)), d[axis],
          NumElements(d.subspan(axis + 1))};
}

// The device check slot of one call of gather or gather_grad, saying what
// CheckIndices in gather.cc says of a bad index (X has `dims`).
absl::StatusOr<int64_t*> IndexCheckSlot(const KernelContext& context,
                                        const Dims& dims,
                                        const GatherView& view) {
  return DeviceCheckSlot(
      context.place().device(),
      absl::StrFormat("op %d (%s): input \"Index\" (variable \"%s\") holds "
                      "an index out of range for axis %d of input \"X\" "
                      "(shape %s) (expected [%d, %d))",
                      context.op_index(), context.op_type(),
                      context.InputName("Index"), view.axis, DimsToString(dims),
                      -view.n, view.n));
}

// For a call with no elements to move, whose kernel would see no index:
// the CPU kernel rejects a bad index all the same.
void CheckIndicesOnly(const Tensor& index, int64_t n, int64_t* bad,
                      cudaStream_t stream) {
  if (index.dtype() == kInt32) {
    cuda::LaunchCheckGatherIndices<int32_t>(index.data<int32_t>(),
                                            index.numel(), n, bad, stream);
  } else {
    cuda::LaunchCheckGatherIndices<int64_t>(index.data<int64_t>(),
                                            index.numel(), n, bad, stream);
  }
}

absl::Status GatherCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& index = context.Input("Index");
  Tensor* out = context.Output("Out");
  if (index.numel() == 0) return absl::OkStatus();  // Out is empty too.
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const GatherView view = ViewOf(context, x.dims());
  SF_ASSIGN_OR_RETURN(int64_t * bad, IndexCheckSlot(context, x.dims(), view));
  if (out->numel() == 0) {  // No buffer to write.
    CheckIndicesOnly(index, view.n, bad, cuda->stream());
    return CudaLaunchCheck("gather");
  }
  const int64_t inner_bytes =
      view.inner * static_cast<int64_t>(SizeOf(x.dtype()));
  if (index.dtype() == kInt32) {
    cuda::LaunchGather<int32_t>(
        x.raw_data(), index.data<int32_t>(), out->raw_data(), view.outer,
        view.n, index.numel(), inner_bytes, bad, cuda->stream());
  } else {
    cuda::LaunchGather<int64_t>(
        x.raw_data(), index.data<int64_t>(), out->raw_data(), view.outer,
        view.n, index.numel(), inner_bytes, bad, cuda->stream());
  }
  return CudaLaunchCheck("gather");
}

template <typename T>
absl::Status GatherGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& index = context.Input("Index");
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  if (x_grad->numel() > 0) {
    SF_RETURN_IF_ERROR(
        CudaCheck(cudaMemsetAsync(x_grad->raw_data(), 0, x_grad->nbytes(),
                                  cuda->stream()),
                  "gather_grad"));
  }
  if (index.numel() == 0) return absl::OkStatus();
  const GatherView view = ViewOf(context, x_grad->dims());
  SF_ASSIGN_OR_RETURN(int64_t * bad,
                      IndexCheckSlot(context, x_grad->dims(), view));
  // With indices, Out@GRAD is empty exactly where X@GRAD's outer or inner
  // part is.
  if (grad.numel() == 0) {
    CheckIndicesOnly(index, view.n, bad, cuda->stream());
    return CudaLaunchCheck("gather_grad");
  }
  if (index.dtype() == kInt32) {
    cuda::LaunchGatherGrad<T, int32_t>(
        grad.data<T>(), index.data<int32_t>(), x_grad->data<T>(), view.outer,
        view.n, index.numel(), view.inner, bad, cuda->stream());
  } else {
    cuda::LaunchGatherGrad<T, int64_t>(
        grad.data<T>(), index.data<int64_t>(), x_grad->data<T>(), view.outer,
        view.n, index.numel(), view.inner, bad, cuda->stream());
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
