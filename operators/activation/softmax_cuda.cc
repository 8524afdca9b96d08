// CUDA kernels of softmax, log_softmax and their gradients: the ops are
// declared, with their CPU kernels, in softmax.cc.
#include "operators/activation/softmax_cuda.h"

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/common.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// `tensor` seen as [outer, size, inner] around the op's "axis".
absl::StatusOr<AxisSplit> SplitAtOpAxis(const KernelContext& context,
                                        const Tensor& tensor) {
  // Inference has checked the axis against this rank.
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxis(context.attrs().Get<int64_t>("axis"), tensor.rank()));
  return SplitAtAxis(tensor.dims(), axis);
}

template <typename T, bool kLog>
absl::Status SoftmaxCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const AxisSplit split, SplitAtOpAxis(context, x));
  if (x.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchSoftmax<T>(kLog, x.data<T>(), context.Output("Out")->data<T>(),
                         split.outer, split.size, split.inner, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T, bool kLog>
absl::Status SoftmaxGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& out = context.Input("Out");
  SF_ASSIGN_OR_RETURN(const AxisSplit split, SplitAtOpAxis(context, out));
  if (out.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchSoftmaxGrad<T>(kLog, out.data<T>(),
                             context.Input("Out@GRAD").data<T>(),
                             context.Output("X@GRAD")->data<T>(), split.outer,
                             split.size, split.inner, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

}  // namespace

SF_REGISTER_KERNEL(softmax, DeviceType::kCUDA, kFloat32,
                   (&SoftmaxCuda<float, false>));
SF_REGISTER_KERNEL(softmax, DeviceType::kCUDA, kFloat64,
                   (&SoftmaxCuda<double, false>));
SF_REGISTER_KERNEL(log_softmax, DeviceType::kCUDA, kFloat32,
                   (&SoftmaxCuda<float, true>));
SF_REGISTER_KERNEL(log_softmax, DeviceType::kCUDA, kFloat64,
                   (&SoftmaxCuda<double, true>));
SF_REGISTER_KERNEL(softmax_grad, DeviceType::kCUDA, kFloat32,
                   (&SoftmaxGradCuda<float, false>));
SF_REGISTER_KERNEL(softmax_grad, DeviceType::kCUDA, kFloat64,
                   (&SoftmaxGradCuda<double, false>));
SF_REGISTER_KERNEL(log_softmax_grad, DeviceType::kCUDA, kFloat32,
                   (&SoftmaxGradCuda<float, true>));
SF_REGISTER_KERNEL(log_softmax_grad, DeviceType::kCUDA, kFloat64,
                   (&SoftmaxGradCuda<double, true>));

}  // namespace scopeflow
