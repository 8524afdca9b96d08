// CUDA kernels of argmax, accuracy, softmax_with_cross_entropy and its
// gradient: the ops are declared, with their CPU kernels, in argmax.cc and
// classification.cc.
//
// softmax_with_cross_entropy and its gradient check their labels on the
// device, where copying them to the host would stall the stream at every
// step: a row whose label is outside [0, classes) gets a NaN loss (or
// gradient), and the label goes to a device check slot, which fails the run
// once its stream is synchronised.
#include "operators/reduction/classification_cuda.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/activation/softmax_cuda.h"
#include "operators/common.h"
#include "operators/reduction/argmax.h"
#include "operators/reduction/reduce_cuda.h"
#include "platform/cuda_context.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

size_t Align(size_t bytes) { return (bytes + 255) / 256 * 256; }

// The device check slot of one call of softmax_with_cross_entropy or its
// gradient, saying what CheckLabelValues in classification.cc says of a bad
// label.
absl::StatusOr<int64_t*> LabelCheckSlot(const KernelContext& context,
                                        int64_t classes) {
  return DeviceCheckSlot(
      context.place().device(),
      absl::StrFormat("op %d (%s): input \"Label\" (variable \"%s\") holds "
                      "a label out of range (expected a class in [0, %d))",
                      context.op_index(), context.op_type(),
                      context.InputName("Label"), classes));
}

template <typename T>
absl::Status ArgMaxCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const AxisSplit split, ArgMaxSplit(context));
  // Inference rejects an empty axis unless the output is empty.
  if (out->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const cuda::ReducePlan plan =
      cuda::PlanArgMax(split.outer, split.size, split.inner);
  void* workspace = nullptr;
  if (plan.workspace_bytes > 0) {
    SF_ASSIGN_OR_RETURN(workspace, cuda->Workspace(plan.workspace_bytes));
  }
  cuda::LaunchArgMax<T>(plan, x.data<T>(), out->data<int64_t>(),
                        context.attrs().Get<bool>("select_last_index"),
                        workspace, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

// Each row's argmax (the first on ties) into the workspace, then the
// fraction that matches the labels.
template <typename T>
absl::Status AccuracyCuda(KernelContext& context) {
  const Tensor& scores = context.Input("Out");
  const int64_t n = scores.dim(0);
  const int64_t classes = scores.dim(1);
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  float* accuracy = context.Output("Accuracy")->data<float>();
  const char* name = context.op_type().c_str();
  if (n == 0) {
    SF_RETURN_IF_ERROR(CudaCheck(
        cudaMemsetAsync(accuracy, 0, sizeof(float), cuda->stream()), name));
    return absl::OkStatus();
  }
  const cuda::ReducePlan plan = cuda::PlanArgMax(n, classes, 1);
  const size_t offset = Align(plan.workspace_bytes);
  SF_ASSIGN_OR_RETURN(void* workspace,
                      cuda->Workspace(offset + n * sizeof(int64_t)));
  int64_t* predicted =
      reinterpret_cast<int64_t*>(static_cast<char*>(workspace) + offset);
  cuda::LaunchArgMax<T>(plan, scores.data<T>(), predicted, /*last=*/false,
                        workspace, cuda->stream());
  cuda::LaunchAccuracy(predicted, context.Input("Label").data<int64_t>(), n,
                       accuracy, cuda->stream());
  return CudaLaunchCheck(name);
}

template <typename T>
absl::Status SoftmaxWithCrossEntropyCuda(KernelContext& context) {
  const Tensor& logits = context.Input("Logits");
  const int64_t* labels = context.Input("Label").data<int64_t>();
  const int64_t rows = logits.dim(0);
  const int64_t classes = logits.dim(1);
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  if (rows > 0) {
    SF_ASSIGN_OR_RETURN(int64_t * bad, LabelCheckSlot(context, classes));
    cuda::LaunchCheckLabels(labels, rows, classes, bad, cuda->stream());
  }
  cuda::LaunchSoftmaxCrossEntropy<T>(
      logits.data<T>(), labels, context.Output("Softmax")->data<T>(),
      context.Output("Loss")->data<T>(), rows, classes, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T>
absl::Status SoftmaxWithCrossEntropyGradCuda(KernelContext& context) {
  if (!context.HasOutput("Logits@GRAD")) return absl::OkStatus();
  const Tensor& softmax = context.Input("Softmax");
  const int64_t rows = softmax.dim(0);
  const int64_t classes = softmax.dim(1);
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  // Without rows there is no label to check (and no kernel to run).
  if (rows == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(int64_t * bad, LabelCheckSlot(context, classes));
  cuda::LaunchSoftmaxCrossEntropyGrad<T>(
      softmax.data<T>(), context.Input("Label").data<int64_t>(),
      context.Input("Loss@GRAD").data<T>(),
      context.Output("Logits@GRAD")->data<T>(), rows, classes, bad,
      cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

}  // namespace

SF_REGISTER_KERNEL(argmax, DeviceType::kCUDA, kFloat32, &ArgMaxCuda<float>);
SF_REGISTER_KERNEL(argmax, DeviceType::kCUDA, kFloat64, &ArgMaxCuda<double>);
SF_REGISTER_KERNEL(argmax, DeviceType::kCUDA, kInt32, &ArgMaxCuda<int32_t>);
SF_REGISTER_KERNEL(argmax, DeviceType::kCUDA, kInt64, &ArgMaxCuda<int64_t>);
SF_REGISTER_KERNEL(accuracy, DeviceType::kCUDA, kFloat32, &AccuracyCuda<float>);
SF_REGISTER_KERNEL(accuracy, DeviceType::kCUDA, kFloat64,
                   &AccuracyCuda<double>);
SF_REGISTER_KERNEL(accuracy, DeviceType::kCUDA, kInt32, &AccuracyCuda<int32_t>);
SF_REGISTER_KERNEL(accuracy, DeviceType::kCUDA, kInt64, &AccuracyCuda<int64_t>);
SF_REGISTER_KERNEL(softmax_with_cross_entropy, DeviceType::kCUDA, kFloat32,
                   &SoftmaxWithCrossEntropyCuda<float>);
SF_REGISTER_KERNEL(softmax_with_cross_entropy, DeviceType::kCUDA, kFloat64,
                   &SoftmaxWithCrossEntropyCuda<double>);
SF_REGISTER_KERNEL(softmax_with_cross_entropy_grad, DeviceType::kCUDA, kFloat32,
                   &SoftmaxWithCrossEntropyGradCuda<float>);
SF_REGISTER_KERNEL(softmax_with_cross_entropy_grad, DeviceType::kCUDA, kFloat64,
                   &SoftmaxWithCrossEntropyGradCuda<double>);

}  // namespace scopeflow
