// CUDA kernels of the elementwise activations: the ops are declared, with
// their CPU kernels, in activation.cc.
#include "operators/activation/activation_cuda.h"

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The op's "alpha" as T, for the activations that have one.
template <typename T>
T Alpha(const KernelContext& context, cuda::Activation f) {
  if (f != cuda::Activation::kLeakyRelu && f != cuda::Activation::kElu) {
    return T(0);
  }
  return static_cast<T>(context.attrs().Get<float>("alpha"));
}

// gelu's "approximate" picks the tanh form.
cuda::Activation Resolve(const KernelContext& context, cuda::Activation f) {
  if (f == cuda::Activation::kGelu &&
      context.attrs().Get<bool>("approximate")) {
    return cuda::Activation::kGeluTanh;
  }
  return f;
}

template <typename T, cuda::Activation kF>
absl::Status ActivationCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const cuda::Activation f = Resolve(context, kF);
  const Tensor& x = context.Input("X");
  cuda::LaunchActivation<T>(f, Alpha<T>(context, f), x.data<T>(),
                            context.Output("Out")->data<T>(), x.numel(),
                            cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

// Reads Out (relu, sigmoid, tanh) or X (leaky_relu, elu, gelu), as the CPU
// kernels do.
template <typename T, cuda::Activation kF>
absl::Status ActivationGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const cuda::Activation f = Resolve(context, kF);
  const bool reads_out = kF == cuda::Activation::kRelu ||
                         kF == cuda::Activation::kSigmoid ||
                         kF == cuda::Activation::kTanh;
  const Tensor& value = context.Input(reads_out ? "Out" : "X");
  cuda::LaunchActivationGrad<T>(f, Alpha<T>(context, f), value.data<T>(),
                                context.Input("Out@GRAD").data<T>(),
                                context.Output("X@GRAD")->data<T>(),
                                value.numel(), cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

using cuda::Activation;

}  // namespace

#define SF_REGISTER_ACTIVATION_CUDA(op, f)                   \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32,        \
                     (&ActivationCuda<float, f>));           \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64,        \
                     (&ActivationCuda<double, f>));          \
  SF_REGISTER_KERNEL(op##_grad, DeviceType::kCUDA, kFloat32, \
                     (&ActivationGradCuda<float, f>));       \
  SF_REGISTER_KERNEL(op##_grad, DeviceType::kCUDA, kFloat64, \
                     (&ActivationGradCuda<double, f>))

SF_REGISTER_ACTIVATION_CUDA(relu, Activation::kRelu);
SF_REGISTER_ACTIVATION_CUDA(leaky_relu, Activation::kLeakyRelu);
SF_REGISTER_ACTIVATION_CUDA(elu, Activation::kElu);
SF_REGISTER_ACTIVATION_CUDA(sigmoid, Activation::kSigmoid);
SF_REGISTER_ACTIVATION_CUDA(tanh, Activation::kTanh);
SF_REGISTER_ACTIVATION_CUDA(gelu, Activation::kGelu);

#undef SF_REGISTER_ACTIVATION_CUDA

}  // namespace scopeflow
