// CUDA kernels of the optimizer ops: sgd, momentum and adam
// (optimizers.cc), increment and lr_schedule (lr_schedule.cc) and
// clip_by_global_norm. Their one-element inputs (learning rate, powers of
// beta, step) are read by the kernels on the device.
//
// Values the CPU kernels reject after reading them (a power of beta outside
// [0, 1), a negative step) are seen only by the kernels, as bringing them to
// the host would stall the stream: adam then leaves its state unchanged and
// lr_schedule gives NaN, and the kernel writes the value to a device check
// slot, which fails the run once its stream is synchronised.
#include "operators/optimizer/optimizer_cuda.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "platform/cuda_context.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::StatusOr<cuda::ScalarType> ScalarTypeOf(const KernelContext& context,
                                              absl::string_view slot,
                                              DataType dtype) {
  switch (dtype) {
    case kFloat32:
      return cuda::ScalarType::kFloat32;
    case kFloat64:
      return cuda::ScalarType::kFloat64;
    case kInt32:
      return cuda::ScalarType::kInt32;
    case kInt64:
      return cuda::ScalarType::kInt64;
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: \"%s\" has dtype %s: expected float32, float64, int32 or int64",
          context.op_type(), slot, DataTypeName(dtype)));
  }
}

absl::StatusOr<cuda::ScalarIn> ScalarInput(const KernelContext& context,
                                           absl::string_view slot) {
  const Tensor& tensor = context.Input(slot);
  SF_ASSIGN_OR_RETURN(const cuda::ScalarType type,
                      ScalarTypeOf(context, slot, tensor.dtype()));
  return cuda::ScalarIn{tensor.raw_data(), type};
}

absl::StatusOr<cuda::ScalarOut> ScalarOutput(const KernelContext& context,
                                             absl::string_view slot) {
  Tensor* tensor = context.Output(slot);
  SF_ASSIGN_OR_RETURN(const cuda::ScalarType type,
                      ScalarTypeOf(context, slot, tensor->dtype()));
  return cuda::ScalarOut{tensor->raw_data(), type};
}

template <typename T>
absl::Status SgdCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& param = context.Input("Param");
  SF_ASSIGN_OR_RETURN(const cuda::ScalarIn lr,
                      ScalarInput(context, "LearningRate"));
  cuda::LaunchSgd<T>(param.data<T>(), context.Input("Grad").data<T>(), lr,
                     context.Output("ParamOut")->data<T>(), param.numel(),
                     cuda->stream());
  return CudaLaunchCheck("sgd");
}

template <typename T>
absl::Status MomentumCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& param = context.Input("Param");
  SF_ASSIGN_OR_RETURN(const cuda::ScalarIn lr,
                      ScalarInput(context, "LearningRate"));
  cuda::LaunchMomentum<T>(param.data<T>(), context.Input("Grad").data<T>(),
                          context.Input("Velocity").data<T>(), lr,
                          static_cast<T>(context.attrs().Get<float>("mu")),
                          context.attrs().Get<bool>("use_nesterov"),
                          context.Output("ParamOut")->data<T>(),
                          context.Output("VelocityOut")->data<T>(),
                          param.numel(), cuda->stream());
  return CudaLaunchCheck("momentum");
}

// The device check slot of adam's power of beta in input `slot` (one slot
// per power, so that the error names its variable as the CPU kernel's
// does). A power is not an integer: the kernel writes it rounded down.
absl::StatusOr<int64_t*> PowerCheckSlot(const KernelContext& context,
                                        const char* slot) {
  return DeviceCheckSlot(
      context.place().device(),
      absl::StrFormat("op %d (%s): input \"%s\" (variable \"%s\") holds a "
                      "value out of range (expected beta^t in [0, 1)); the "
                      "value rounded down to an int64 (NaN as its maximum)",
                      context.op_index(), context.op_type(), slot,
                      context.InputName(slot)));
}

template <typename T>
absl::Status AdamCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& param = context.Input("Param");
  SF_ASSIGN_OR_RETURN(const cuda::ScalarIn lr,
                      ScalarInput(context, "LearningRate"));
  SF_ASSIGN_OR_RETURN(const cuda::ScalarIn beta1_pow,
                      ScalarInput(context, "Beta1Pow"));
  SF_ASSIGN_OR_RETURN(const cuda::ScalarIn beta2_pow,
                      ScalarInput(context, "Beta2Pow"));
  SF_ASSIGN_OR_RETURN(const cuda::ScalarOut beta1_pow_out,
                      ScalarOutput(context, "Beta1PowOut"));
  SF_ASSIGN_OR_RETURN(const cuda::ScalarOut beta2_pow_out,
                      ScalarOutput(context, "Beta2PowOut"));
  SF_ASSIGN_OR_RETURN(int64_t * bad_beta1_pow,
                      PowerCheckSlot(context, "Beta1Pow"));
  SF_ASSIGN_OR_RETURN(int64_t * bad_beta2_pow,
                      PowerCheckSlot(context, "Beta2Pow"));
  const cuda::AdamConfig config{context.attrs().Get<float>("beta1"),
                                context.attrs().Get<float>("beta2"),
                                context.attrs().Get<float>("epsilon"),
                                context.attrs().Get<float>("weight_decay")};
  cuda::LaunchAdam<T>(
      param.data<T>(), context.Input("Grad").data<T>(),
      context.Input("Moment1").data<T>(), context.Input("Moment2").data<T>(),
      lr, beta1_pow, beta2_pow, config, context.Output("ParamOut")->data<T>(),
      context.Output("Moment1Out")->data<T>(),
      context.Output("Moment2Out")->data<T>(), beta1_pow_out, beta2_pow_out,
      param.numel(), bad_beta1_pow, bad_beta2_pow, cuda->stream());
  return CudaLaunchCheck("adam");
}

template <typename T>
absl::Status IncrementCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchIncrement<T>(context.Input("X").data<T>(),
                           static_cast<T>(context.attrs().Get<float>("step")),
                           context.Output("Out")->data<T>(), cuda->stream());
  return CudaLaunchCheck("increment");
}

absl::Status LrScheduleCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Attributes& attrs = context.attrs();
  const std::string& policy = attrs.Get<std::string>("policy");
  cuda::LrSchedule schedule;
  schedule.policy = policy == "step"          ? cuda::LrPolicy::kStep
                    : policy == "exponential" ? cuda::LrPolicy::kExponential
                    : policy == "cosine"      ? cuda::LrPolicy::kCosine
                                              : cuda::LrPolicy::kConstant;
  schedule.base_lr = attrs.Get<float>("base_lr");
  schedule.min_lr = attrs.Get<float>("min_lr");
  schedule.gamma = attrs.Get<float>("gamma");
  schedule.step_size = attrs.Get<int64_t>("step_size");
  schedule.total_steps = attrs.Get<int64_t>("total_steps");
  schedule.warmup_steps = attrs.Get<int64_t>("warmup_steps");
  SF_ASSIGN_OR_RETURN(
      int64_t * bad,
      DeviceCheckSlot(context.place().device(),
                      absl::StrFormat("op %d (%s): input \"Step\" (variable "
                                      "\"%s\") holds a negative step "
                                      "(expected a step count >= 0)",
                                      context.op_index(), context.op_type(),
                                      context.InputName("Step"))));
  cuda::LaunchLrSchedule(context.Input("Step").data<int64_t>(), schedule,
                         context.Output("LearningRate")->data<float>(), bad,
                         cuda->stream());
  return CudaLaunchCheck("lr_schedule");
}

// Partial sums of squares of every X, their total and the norm in a
// workspace, then each X scaled by the norm the device computed.
template <typename T>
absl::Status ClipByGlobalNormCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const int n = context.InputCount("X");
  std::vector<int64_t> offsets(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    offsets[i + 1] =
        offsets[i] + cuda::SumSquaresBlocks(context.Input("X", i).numel());
  }
  SF_ASSIGN_OR_RETURN(
      void* workspace,
      cuda->Workspace(static_cast<size_t>(offsets[n] + 1) * sizeof(double)));
  double* partial = static_cast<double*>(workspace);
  double* norm = partial + offsets[n];
  for (int i = 0; i < n; ++i) {
    const Tensor& x = context.Input("X", i);
    cuda::LaunchSumSquares<T>(x.data<T>(), x.numel(), partial + offsets[i],
                              cuda->stream());
  }
  T* global_norm = context.HasOutput("GlobalNorm")
                       ? context.Output("GlobalNorm")->data<T>()
                       : nullptr;
  cuda::LaunchGlobalNorm<T>(partial, offsets[n], norm, global_norm,
                            cuda->stream());
  const double max_norm = context.attrs().Get<float>("max_norm");
  for (int i = 0; i < n; ++i) {
    const Tensor& x = context.Input("X", i);
    cuda::LaunchClipScale<T>(x.data<T>(), context.Output("Out", i)->data<T>(),
                             x.numel(), norm, max_norm, cuda->stream());
  }
  return CudaLaunchCheck("clip_by_global_norm");
}

}  // namespace

SF_REGISTER_KERNEL(sgd, DeviceType::kCUDA, kFloat32, &SgdCuda<float>);
SF_REGISTER_KERNEL(sgd, DeviceType::kCUDA, kFloat64, &SgdCuda<double>);
SF_REGISTER_KERNEL(momentum, DeviceType::kCUDA, kFloat32, &MomentumCuda<float>);
SF_REGISTER_KERNEL(momentum, DeviceType::kCUDA, kFloat64,
                   &MomentumCuda<double>);
SF_REGISTER_KERNEL(adam, DeviceType::kCUDA, kFloat32, &AdamCuda<float>);
SF_REGISTER_KERNEL(adam, DeviceType::kCUDA, kFloat64, &AdamCuda<double>);

SF_REGISTER_KERNEL(increment, DeviceType::kCUDA, kInt64,
                   &IncrementCuda<int64_t>);
SF_REGISTER_KERNEL(increment, DeviceType::kCUDA, kInt32,
                   &IncrementCuda<int32_t>);
SF_REGISTER_KERNEL(increment, DeviceType::kCUDA, kFloat32,
                   &IncrementCuda<float>);
SF_REGISTER_KERNEL(increment, DeviceType::kCUDA, kFloat64,
                   &IncrementCuda<double>);
SF_REGISTER_KERNEL(lr_schedule, DeviceType::kCUDA, kInt64, &LrScheduleCuda);

SF_REGISTER_KERNEL(clip_by_global_norm, DeviceType::kCUDA, kFloat32,
                   &ClipByGlobalNormCuda<float>);
SF_REGISTER_KERNEL(clip_by_global_norm, DeviceType::kCUDA, kFloat64,
                   &ClipByGlobalNormCuda<double>);

}  // namespace scopeflow
