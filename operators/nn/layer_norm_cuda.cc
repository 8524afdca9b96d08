// CUDA kernels of layer_norm and layer_norm_grad: the ops are declared, with
// their CPU kernels, in layer_norm.cc.
#include "operators/nn/layer_norm_cuda.h"

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/common.h"
#include "operators/nn/kernel_util.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

template <typename T>
absl::Status LayerNormCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const nn::Rows shape, nn::RowsOf(context, x));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LayerNormTensors<T> t;
  t.x = x.data<T>();
  t.scale = nn::OptionalInputData<T>(context, "Scale");
  t.bias = nn::OptionalInputData<T>(context, "Bias");
  t.y = context.Output("Y")->data<T>();
  t.mean = nn::OptionalOutputData<T>(context, "Mean");
  t.inv_std = nn::OptionalOutputData<T>(context, "InvStdDev");
  cuda::LaunchLayerNorm<T>(shape.rows, shape.normalized,
                           context.attrs().Get<float>("epsilon"), t,
                           cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T>
absl::Status LayerNormGradCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const nn::Rows shape, nn::RowsOf(context, x));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LayerNormGradTensors<T> t;
  t.x = x.data<T>();
  t.scale = nn::OptionalInputData<T>(context, "Scale");
  t.y_grad = context.Input("Y@GRAD").data<T>();
  t.mean_grad = nn::OptionalInputData<T>(context, "Mean@GRAD");
  t.inv_std_grad = nn::OptionalInputData<T>(context, "InvStdDev@GRAD");
  t.x_grad = nn::OptionalOutputData<T>(context, "X@GRAD");
  t.scale_grad = nn::OptionalOutputData<T>(context, "Scale@GRAD");
  t.bias_grad = nn::OptionalOutputData<T>(context, "Bias@GRAD");
  SF_ASSIGN_OR_RETURN(void* workspace,
                      cuda->Workspace(cuda::LayerNormGradWorkspaceBytes(
                          shape.rows, shape.normalized)));
  cuda::LaunchLayerNormGrad<T>(shape.rows, shape.normalized,
                               context.attrs().Get<float>("epsilon"), t,
                               workspace, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

}  // namespace

SF_REGISTER_KERNEL(layer_norm, DeviceType::kCUDA, kFloat32,
                   &LayerNormCuda<float>);
SF_REGISTER_KERNEL(layer_norm, DeviceType::kCUDA, kFloat64,
                   &LayerNormCuda<double>);
SF_REGISTER_KERNEL(layer_norm_grad, DeviceType::kCUDA, kFloat32,
                   &LayerNormGradCuda<float>);
SF_REGISTER_KERNEL(layer_norm_grad, DeviceType::kCUDA, kFloat64,
                   &LayerNormGradCuda<double>);

}  // namespace scopeflow
