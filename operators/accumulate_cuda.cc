// CUDA kernel of sum (accumulate.cc).
#include "operators/accumulate_cuda.h"

#include <cstdint>
#include <vector>

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

template <typename T>
absl::Status SumCuda(KernelContext& context) {
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  std::vector<const T*> inputs;
  for (int i = 0; i < context.InputCount("X"); ++i) {
    inputs.push_back(context.Input("X", i).data<T>());
  }
  cuda::LaunchSum<T>(inputs.data(), static_cast<int>(inputs.size()),
                     out->data<T>(), out->numel(), cuda->stream());
  return CudaLaunchCheck("sum");
}

}  // namespace

SF_REGISTER_KERNEL(sum, DeviceType::kCUDA, kFloat32, &SumCuda<float>);
SF_REGISTER_KERNEL(sum, DeviceType::kCUDA, kFloat64, &SumCuda<double>);
SF_REGISTER_KERNEL(sum, DeviceType::kCUDA, kInt32, &SumCuda<int32_t>);
SF_REGISTER_KERNEL(sum, DeviceType::kCUDA, kInt64, &SumCuda<int64_t>);

}  // namespace scopeflow
