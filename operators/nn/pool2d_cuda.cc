// CUDA kernels of pool1d, pool2d, pool3d and their gradients: the ops are
// declared, with their CPU kernels, in pool2d.cc. cuDNN's pooling has no
// dilation, no ceil_mode, no asymmetric padding and another rule for NaNs
// and ties, so the kernels are hand-written to match the CPU's.
#include "operators/nn/pool2d_cuda.h"

#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/nn/pool_window.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The windows of a pool op over X of dims `x` to Out of dims `out`, seen in
// 3-D as GeometryOf in pool2d.cc sees them: a channel-blocked tensor as
// [N * C / B, H, W, B] channels last, B = 8 or 16.
cuda::PoolGeometry GeometryOf(const Attributes& attrs,
                              absl::Span<const int64_t> x,
                              absl::Span<const int64_t> out) {
  const pool::Planes p = pool::PlanesOf(pool::LayoutOf(attrs), x);
  const pool::Window w =
      pool::WindowOf(attrs, x.subspan(p.first_spatial, p.rank));
  cuda::PoolGeometry g;
  g.planes = p.planes;
  g.channels = p.channels;
  for (int axis = 0; axis < 3; ++axis) {
    const int a = axis - (3 - p.rank);  // The op's spatial axis, if any.
    if (a < 0) continue;
    g.in[axis] = x[p.first_spatial + a];
    g.out[axis] = out[p.first_spatial + a];
    g.ksize[axis] = w.ksize[a];
    g.stride[axis] = w.strides[a];
    g.dilation[axis] = w.dilations[a];
    g.pad_before[axis] = w.pad_before[a];
    g.pad_after[axis] = w.pad_after[a];
  }
  return g;
}

cuda::PoolOptions OptionsOf(const Attributes& attrs) {
  cuda::PoolOptions options;
  options.is_max = attrs.Get<std::string>("pooling_type") == "max";
  options.exclusive = attrs.Get<bool>("exclusive");
  options.column_major =
      attrs.Get<std::string>("storage_order") == "column_major";
  return options;
}

template <typename T>
absl::Status PoolCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& x = context.Input("X");
  Tensor& out = *context.Output("Out");
  int64_t* indices = context.HasOutput("Indices")
                         ? context.Output("Indices")->data<int64_t>()
                         : nullptr;
  cuda::LaunchPool<T>(GeometryOf(context.attrs(), x.dims(), out.dims()),
                      OptionsOf(context.attrs()), x.data<T>(), out.data<T>(),
                      indices, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T>
absl::Status PoolGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& x = context.Input("X");
  const Tensor& d_out = context.Input("Out@GRAD");
  const cuda::PoolGeometry g =
      GeometryOf(context.attrs(), x.dims(), d_out.dims());
  const cuda::PoolOptions options = OptionsOf(context.attrs());
  void* scratch = nullptr;
  if (const size_t bytes = cuda::PoolGradScratchBytes(g, options); bytes > 0) {
    SF_ASSIGN_OR_RETURN(scratch, cuda->Workspace(bytes));
  }
  cuda::LaunchPoolGrad<T>(g, options, x.data<T>(), d_out.data<T>(),
                          context.Output("X@GRAD")->data<T>(), scratch,
                          cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

}  // namespace

SF_REGISTER_KERNEL(pool1d, DeviceType::kCUDA, kFloat32, &PoolCuda<float>);
SF_REGISTER_KERNEL(pool1d, DeviceType::kCUDA, kFloat64, &PoolCuda<double>);
SF_REGISTER_KERNEL(pool2d, DeviceType::kCUDA, kFloat32, &PoolCuda<float>);
SF_REGISTER_KERNEL(pool2d, DeviceType::kCUDA, kFloat64, &PoolCuda<double>);
SF_REGISTER_KERNEL(pool3d, DeviceType::kCUDA, kFloat32, &PoolCuda<float>);
SF_REGISTER_KERNEL(pool3d, DeviceType::kCUDA, kFloat64, &PoolCuda<double>);
SF_REGISTER_KERNEL(pool1d_grad, DeviceType::kCUDA, kFloat32,
                   &PoolGradCuda<float>);
SF_REGISTER_KERNEL(pool1d_grad, DeviceType::kCUDA, kFloat64,
                   &PoolGradCuda<double>);
SF_REGISTER_KERNEL(pool2d_grad, DeviceType::kCUDA, kFloat32,
                   &PoolGradCuda<float>);
SF_REGISTER_KERNEL(pool2d_grad, DeviceType::kCUDA, kFloat64,
                   &PoolGradCuda<double>);
SF_REGISTER_KERNEL(pool3d_grad, DeviceType::kCUDA, kFloat32,
                   &PoolGradCuda<float>);
SF_REGISTER_KERNEL(pool3d_grad, DeviceType::kCUDA, kFloat64,
                   &PoolGradCuda<double>);

}  // namespace scopeflow
