// CUDA kernels of the ops of reshape.cc. reshape, flatten, squeeze,
// unsqueeze and reshape_grad make their output a view of their input, as
// on the CPU: nothing moves on the device. shape writes X's dims.
#include <cstdint>
#include <vector>

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/shape/shape_util.h"
#include "platform/device.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::ViewKernel;

absl::Status ReshapeGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  Tensor* x_grad = context.Output("X@GRAD");
  Dims dims = x_grad->dims();
  x_grad->ShareBufferWith(context.Input("Out@GRAD"));
  return x_grad->Reshape(std::move(dims));
}

// The dims live on the host: one small copy to the device. A copy from
// pageable memory returns once the source was read, so the vector may go.
absl::Status ShapeCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const std::vector<int64_t> dims(x.dims().begin(), x.dims().end());
  return CopyBytes(context.place(), out->raw_data(), CPUPlace(), dims.data(),
                   dims.size() * sizeof(int64_t));
}

}  // namespace

#define SF_REGISTER_VIEW_CUDA(op)                                   \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32, &ViewKernel); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64, &ViewKernel); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt32, &ViewKernel);   \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt64, &ViewKernel);   \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kBool, &ViewKernel)

SF_REGISTER_VIEW_CUDA(reshape);
SF_REGISTER_VIEW_CUDA(flatten);
SF_REGISTER_VIEW_CUDA(squeeze);
SF_REGISTER_VIEW_CUDA(unsqueeze);
#undef SF_REGISTER_VIEW_CUDA

SF_REGISTER_KERNEL(reshape_grad, DeviceType::kCUDA, kFloat32, &ReshapeGradCuda);
SF_REGISTER_KERNEL(reshape_grad, DeviceType::kCUDA, kFloat64, &ReshapeGradCuda);
SF_REGISTER_KERNEL(reshape_grad, DeviceType::kCUDA, kInt32, &ReshapeGradCuda);
SF_REGISTER_KERNEL(reshape_grad, DeviceType::kCUDA, kInt64, &ReshapeGradCuda);

SF_REGISTER_KERNEL(shape, DeviceType::kCUDA, kFloat32, &ShapeCuda);
SF_REGISTER_KERNEL(shape, DeviceType::kCUDA, kFloat64, &ShapeCuda);
SF_REGISTER_KERNEL(shape, DeviceType::kCUDA, kFloat16, &ShapeCuda);
SF_REGISTER_KERNEL(shape, DeviceType::kCUDA, kInt32, &ShapeCuda);
SF_REGISTER_KERNEL(shape, DeviceType::kCUDA, kInt64, &ShapeCuda);
SF_REGISTER_KERNEL(shape, DeviceType::kCUDA, kUInt8, &ShapeCuda);
SF_REGISTER_KERNEL(shape, DeviceType::kCUDA, kBool, &ShapeCuda);

}  // namespace scopeflow
