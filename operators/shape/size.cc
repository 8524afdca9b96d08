// size: ONNX's Size. Out is an int64 scalar holding the number of elements
// of X. The kernel reads only X's dims, so it serves every dtype; the
// output does not depend on X's values, so the op has no gradient (as
// shape).
#include <cstdint>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status InferSize(InferContext& context) {
  context.SetOutput("Out", 0, kInt64, Dims{});
  return absl::OkStatus();
}

absl::Status SizeKernel(KernelContext& context) {
  context.Output("Out")->data<int64_t>()[0] = context.Input("X").numel();
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(size)
    .Input("X")
    .Output("Out")
    .Infer(InferSize)
    .Kernel(DeviceType::kCPU, kFloat32, &SizeKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &SizeKernel)
    .Kernel(DeviceType::kCPU, kFloat16, &SizeKernel)
    .Kernel(DeviceType::kCPU, kInt32, &SizeKernel)
    .Kernel(DeviceType::kCPU, kInt64, &SizeKernel)
    .Kernel(DeviceType::kCPU, kInt8, &SizeKernel)
    .Kernel(DeviceType::kCPU, kUInt8, &SizeKernel)
    .Kernel(DeviceType::kCPU, kBool, &SizeKernel);

}  // namespace scopeflow
