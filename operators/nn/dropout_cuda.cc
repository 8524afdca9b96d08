// CUDA kernels of dropout and dropout_grad: the ops are declared, with their
// CPU kernels, in dropout.cc. The CPU kernel draws the mask from an
// std::mt19937, a sequential generator, and a seed must draw the same mask
// on either device; so the mask is drawn on the host exactly as the CPU
// kernel draws it, copied to the device, and applied there.
#include "operators/nn/dropout_cuda.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/nn/dropout_mask.h"
#include "operators/value_input.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

template <typename T>
absl::Status DropoutCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& x = context.Input("X");
  T* out = context.Output("Out")->data<T>();
  const int64_t n = x.numel();
  const T scale = nn::KeptScale<T>(context.attrs());
  uint8_t* mask = context.HasOutput("Mask")
                      ? context.Output("Mask")->data<uint8_t>()
                      : nullptr;
  if (context.attrs().Get<bool>("is_test")) {
    cuda::LaunchDropoutScale<T>(x.data<T>(), scale, out, n, cuda->stream());
    if (mask != nullptr && n > 0) {
      SF_RETURN_IF_ERROR(CudaCheck(
          cudaMemsetAsync(mask, 1, static_cast<size_t>(n), cuda->stream()),
          "cudaMemsetAsync"));
    }
    return CudaLaunchCheck(context.op_type().c_str());
  }
  // Seed is read on the host.
  Tensor seed;
  if (context.HasInput("Seed")) {
    SF_ASSIGN_OR_RETURN(seed, OnHost(context.Input("Seed")));
  }
  std::mt19937 engine =
      nn::MaskEngine(context.attrs(),
                     context.HasInput("Seed") ? seed.data<int64_t>() : nullptr);
  const float p = context.attrs().Get<float>("dropout_prob");
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<uint8_t> keep(n);
  for (int64_t i = 0; i < n; ++i) keep[i] = uniform(engine) >= p ? 1 : 0;
  if (n == 0) return absl::OkStatus();
  if (mask == nullptr) {
    SF_ASSIGN_OR_RETURN(void* scratch, cuda->Workspace(static_cast<size_t>(n)));
    mask = static_cast<uint8_t*>(scratch);
  }
  // From pageable memory: the call returns once `keep` has been read.
  SF_RETURN_IF_ERROR(
      CudaCheck(cudaMemcpyAsync(mask, keep.data(), static_cast<size_t>(n),
                                cudaMemcpyHostToDevice, cuda->stream()),
                "cudaMemcpyAsync"));
  cuda::LaunchDropoutMasked<T>(x.data<T>(), mask, scale, out, n,
                               cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T>
absl::Status DropoutGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& grad = context.Input("Out@GRAD");
  cuda::LaunchDropoutMasked<T>(
      grad.data<T>(), context.Input("Mask").data<uint8_t>(),
      nn::KeptScale<T>(context.attrs()), context.Output("X@GRAD")->data<T>(),
      grad.numel(), cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

}  // namespace

SF_REGISTER_KERNEL(dropout, DeviceType::kCUDA, kFloat32, &DropoutCuda<float>);
SF_REGISTER_KERNEL(dropout, DeviceType::kCUDA, kFloat64, &DropoutCuda<double>);
SF_REGISTER_KERNEL(dropout_grad, DeviceType::kCUDA, kFloat32,
                   &DropoutGradCuda<float>);
SF_REGISTER_KERNEL(dropout_grad, DeviceType::kCUDA, kFloat64,
                   &DropoutGradCuda<double>);

}  // namespace scopeflow
