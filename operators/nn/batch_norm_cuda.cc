// CUDA kernels of batch_norm and batch_norm_grad: the ops are declared, with
// their CPU kernels, in batch_norm.cc. Hand-written rather than cuDNN's:
// cuDNN's training updates the running variance with the unbiased
// variance, where the CPU kernel uses the biased one.
#include "operators/nn/batch_norm_cuda.h"

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/nn/kernel_util.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// X seen as [batch, channels, inner], as LayoutOf in batch_norm.cc sees it.
cuda::BatchNormShape ShapeOf(const Tensor& x) {
  cuda::BatchNormShape shape;
  shape.batch = x.dim(0);
  shape.channels = x.dim(1);
  shape.inner = shape.channels == 0 || shape.batch == 0
                    ? 0
                    : x.numel() / (shape.batch * shape.channels);
  return shape;
}

template <typename T>
absl::Status BatchNormCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const cuda::BatchNormShape shape = ShapeOf(x);
  const bool is_test = context.attrs().Get<bool>("is_test");
  SF_CHECK(!context.attrs().Get<bool>("fuse_relu"),
           "the CUDA kernel applies no fused relu: fuse_relu is the CPU's "
           "layout rewrite's");
  SF_CHECK(context.attrs().Get<std::string>("data_format") == "NCHW",
           "the CUDA kernel takes NCHW images: data_format \"%s\" is the "
           "CPU's layout rewrite's",
           context.attrs().Get<std::string>("data_format"));
  SF_CHECK(is_test || shape.batch * shape.inner > 0,
           "training needs at least one value per channel of input \"X\" "
           "(variable \"%s\", shape %s) for the batch statistics",
           context.InputName("X"), DimsToString(x.dims()));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::BatchNormTensors<T> t;
  t.x = x.data<T>();
  t.scale = context.Input("Scale").data<T>();
  t.bias = context.Input("Bias").data<T>();
  t.mean = context.Input("Mean").data<T>();
  t.variance = context.Input("Variance").data<T>();
  t.y = context.Output("Y")->data<T>();
  t.mean_out = nn::OptionalOutputData<T>(context, "MeanOut");
  t.variance_out = nn::OptionalOutputData<T>(context, "VarianceOut");
  t.saved_mean = nn::OptionalOutputData<T>(context, "SavedMean");
  t.saved_variance = nn::OptionalOutputData<T>(context, "SavedVariance");
  SF_ASSIGN_OR_RETURN(void* workspace,
                      cuda->Workspace(cuda::BatchNormWorkspaceBytes(shape)));
  const double epsilon = context.attrs().Get<float>("epsilon");
  if (is_test) {
    cuda::LaunchBatchNormInference<T>(shape, epsilon, t, workspace,
                                      cuda->stream());
  } else {
    cuda::LaunchBatchNormTraining<T>(shape, epsilon,
                                     context.attrs().Get<float>("momentum"), t,
                                     workspace, cuda->stream());
  }
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T>
absl::Status BatchNormGradCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const bool is_test = context.attrs().Get<bool>("is_test");
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::BatchNormGradTensors<T> t;
  t.x = x.data<T>();
  t.scale = context.Input("Scale").data<T>();
  t.y_grad = context.Input("Y@GRAD").data<T>();
  t.mean = nn::OptionalInputData<T>(context, is_test ? "Mean" : "SavedMean");
  t.variance =
      nn::OptionalInputData<T>(context, is_test ? "Variance" : "SavedVariance");
  t.x_grad = nn::OptionalOutputData<T>(context, "X@GRAD");
  t.scale_grad = nn::OptionalOutputData<T>(context, "Scale@GRAD");
  t.bias_grad = nn::OptionalOutputData<T>(context, "Bias@GRAD");
  const cuda::BatchNormShape shape = ShapeOf(x);
  SF_ASSIGN_OR_RETURN(void* workspace,
                      cuda->Workspace(cuda::BatchNormWorkspaceBytes(shape)));
  cuda::LaunchBatchNormGrad<T>(shape, is_test,
                               context.attrs().Get<float>("epsilon"), t,
                               workspace, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

}  // namespace

SF_REGISTER_KERNEL(batch_norm, DeviceType::kCUDA, kFloat32,
                   &BatchNormCuda<float>);
SF_REGISTER_KERNEL(batch_norm, DeviceType::kCUDA, kFloat64,
                   &BatchNormCuda<double>);
SF_REGISTER_KERNEL(batch_norm_grad, DeviceType::kCUDA, kFloat32,
                   &BatchNormGradCuda<float>);
SF_REGISTER_KERNEL(batch_norm_grad, DeviceType::kCUDA, kFloat64,
                   &BatchNormGradCuda<double>);

}  // namespace scopeflow
