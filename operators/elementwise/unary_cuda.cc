// CUDA kernels of the one-input ops: the math functions, abs, neg, scale,
// clip and their gradients (unary.cc), cast and cast_grad (cast.cc), which
// declare the ops with their CPU kernels.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "framework/data_type.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "operators/elementwise/clip_bounds.h"
#include "operators/elementwise/elementwise_cuda.h"
#include "operators/value_input.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using elementwise::KernelClipBounds;

template <typename T, cuda::UnaryOp kOp>
absl::Status UnaryCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  if (x.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchUnary<T>(kOp, x.data<T>(), context.Output("Out")->data<T>(),
                       x.numel(), cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

// The attributes were checked by inference (whole numbers in T's range for
// integer T).
template <typename T>
absl::Status ScaleCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  if (x.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchScale<T>(x.data<T>(), context.Output("Out")->data<T>(), x.numel(),
                       static_cast<T>(context.attrs().Get<float>("scale")),
                       static_cast<T>(context.attrs().Get<float>("bias")),
                       context.attrs().Get<bool>("bias_after_scale"),
                       cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T>
absl::Status ClipCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const auto bounds, KernelClipBounds<T>(context));
  if (x.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchClip<T>(x.data<T>(), context.Output("Out")->data<T>(), x.numel(),
                      bounds.first, bounds.second, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

// The input the gradient reads besides Out@GRAD, as in unary.cc: Out where
// the derivative is cheaper from it.
constexpr const char* GradReads(cuda::UnaryGradOp op) {
  return op == cuda::UnaryGradOp::kExp || op == cuda::UnaryGradOp::kSqrt ? "Out"
                                                                         : "X";
}

template <typename T, cuda::UnaryGradOp kOp>
absl::Status UnaryGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  Tensor* dx = context.Output("X@GRAD");
  if (dx->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchUnaryGrad<T>(kOp, context.Input(GradReads(kOp)).data<T>(),
                           context.Input("Out@GRAD").data<T>(), dx->data<T>(),
                           dx->numel(), cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T>
absl::Status ClipGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const auto bounds, KernelClipBounds<T>(context));
  Tensor* dx = context.Output("X@GRAD");
  if (dx->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchClipGrad<T>(
      context.Input("X").data<T>(), context.Input("Out@GRAD").data<T>(),
      dx->data<T>(), dx->numel(), bounds.first, bounds.second, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

// The kernels' element type for `dtype`, the dtype of `slot`; the error is
// the CPU kernel's for a dtype cast does not convert to.
absl::StatusOr<cuda::CastType> CastTypeOf(DataType dtype,
                                          absl::string_view slot) {
  switch (dtype) {
    case kFloat32:
      return cuda::CastType::kFloat32;
    case kFloat64:
      return cuda::CastType::kFloat64;
    case kFloat16:
      return cuda::CastType::kFloat16;
    case kInt32:
      return cuda::CastType::kInt32;
    case kInt64:
      return cuda::CastType::kInt64;
    case kUInt8:
      return cuda::CastType::kUInt8;
    case kInt8:
      return cuda::CastType::kInt8;
    case kBool:
      return cuda::CastType::kBool;
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("cannot cast to dtype %s (output \"%s\")",
                          DataTypeName(dtype), slot));
  }
}

// Converts `in` into `out`, which has its shape and the dtype to convert to.
absl::Status CastInto(const KernelContext& context, const Tensor& in,
                      Tensor* out, absl::string_view out_slot) {
  SF_ASSIGN_OR_RETURN(const cuda::CastType to,
                      CastTypeOf(out->dtype(), out_slot));
  SF_ASSIGN_OR_RETURN(const cuda::CastType from,
                      CastTypeOf(in.dtype(), out_slot));
  if (in.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchCast(from, in.raw_data(), to, out->raw_data(), in.numel(),
                   cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

absl::Status CastCuda(KernelContext& context) {
  return CastInto(context, context.Input("X"), context.Output("Out"), "Out");
}

// Out@GRAD cast back to X's dtype (cast.cc).
absl::Status CastGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  return CastInto(context, context.Input("Out@GRAD"), context.Output("X@GRAD"),
                  "X@GRAD");
}

}  // namespace

// Registers fn<T, kind> as the CUDA kernel of `op` for float32, float64
// and, with _INT, int32 and int64.
#define SF_REGISTER_CUDA_FLOAT(op, fn, kind)                               \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32, (&fn<float, kind>)); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64, (&fn<double, kind>))
#define SF_REGISTER_CUDA_INT(op, fn, kind)                                 \
  SF_REGISTER_CUDA_FLOAT(op, fn, kind);                                    \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt32, (&fn<int32_t, kind>)); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt64, (&fn<int64_t, kind>))

SF_REGISTER_CUDA_FLOAT(exp, UnaryCuda, cuda::UnaryOp::kExp);
SF_REGISTER_CUDA_FLOAT(log, UnaryCuda, cuda::UnaryOp::kLog);
SF_REGISTER_CUDA_FLOAT(sqrt, UnaryCuda, cuda::UnaryOp::kSqrt);
SF_REGISTER_CUDA_FLOAT(erf, UnaryCuda, cuda::UnaryOp::kErf);
SF_REGISTER_CUDA_FLOAT(sin, UnaryCuda, cuda::UnaryOp::kSin);
SF_REGISTER_CUDA_FLOAT(cos, UnaryCuda, cuda::UnaryOp::kCos);
SF_REGISTER_CUDA_INT(abs, UnaryCuda, cuda::UnaryOp::kAbs);
SF_REGISTER_CUDA_INT(neg, UnaryCuda, cuda::UnaryOp::kNeg);

SF_REGISTER_CUDA_FLOAT(exp_grad, UnaryGradCuda, cuda::UnaryGradOp::kExp);
SF_REGISTER_CUDA_FLOAT(log_grad, UnaryGradCuda, cuda::UnaryGradOp::kLog);
SF_REGISTER_CUDA_FLOAT(sqrt_grad, UnaryGradCuda, cuda::UnaryGradOp::kSqrt);
SF_REGISTER_CUDA_FLOAT(erf_grad, UnaryGradCuda, cuda::UnaryGradOp::kErf);
SF_REGISTER_CUDA_FLOAT(sin_grad, UnaryGradCuda, cuda::UnaryGradOp::kSin);
SF_REGISTER_CUDA_FLOAT(cos_grad, UnaryGradCuda, cuda::UnaryGradOp::kCos);
SF_REGISTER_CUDA_FLOAT(abs_grad, UnaryGradCuda, cuda::UnaryGradOp::kAbs);

#undef SF_REGISTER_CUDA_INT
#undef SF_REGISTER_CUDA_FLOAT

SF_REGISTER_KERNEL(scale, DeviceType::kCUDA, kFloat32, &ScaleCuda<float>);
SF_REGISTER_KERNEL(scale, DeviceType::kCUDA, kFloat64, &ScaleCuda<double>);
SF_REGISTER_KERNEL(scale, DeviceType::kCUDA, kInt32, &ScaleCuda<int32_t>);
SF_REGISTER_KERNEL(scale, DeviceType::kCUDA, kInt64, &ScaleCuda<int64_t>);

SF_REGISTER_KERNEL(clip, DeviceType::kCUDA, kFloat32, &ClipCuda<float>);
SF_REGISTER_KERNEL(clip, DeviceType::kCUDA, kFloat64, &ClipCuda<double>);
SF_REGISTER_KERNEL(clip, DeviceType::kCUDA, kInt32, &ClipCuda<int32_t>);
SF_REGISTER_KERNEL(clip, DeviceType::kCUDA, kInt64, &ClipCuda<int64_t>);
SF_REGISTER_KERNEL(clip_grad, DeviceType::kCUDA, kFloat32,
                   &ClipGradCuda<float>);
SF_REGISTER_KERNEL(clip_grad, DeviceType::kCUDA, kFloat64,
                   &ClipGradCuda<double>);

// One kernel for every input dtype: the element types are picked at run
// time from the tensors.
SF_REGISTER_KERNEL(cast, DeviceType::kCUDA, kFloat32, &CastCuda);
SF_REGISTER_KERNEL(cast, DeviceType::kCUDA, kFloat64, &CastCuda);
SF_REGISTER_KERNEL(cast, DeviceType::kCUDA, kFloat16, &CastCuda);
SF_REGISTER_KERNEL(cast, DeviceType::kCUDA, kInt32, &CastCuda);
SF_REGISTER_KERNEL(cast, DeviceType::kCUDA, kInt64, &CastCuda);
SF_REGISTER_KERNEL(cast, DeviceType::kCUDA, kUInt8, &CastCuda);
SF_REGISTER_KERNEL(cast, DeviceType::kCUDA, kInt8, &CastCuda);
SF_REGISTER_KERNEL(cast, DeviceType::kCUDA, kBool, &CastCuda);
SF_REGISTER_KERNEL(cast_grad, DeviceType::kCUDA, kFloat32, &CastGradCuda);
SF_REGISTER_KERNEL(cast_grad, DeviceType::kCUDA, kFloat64, &CastGradCuda);
SF_REGISTER_KERNEL(cast_grad, DeviceType::kCUDA, kFloat16, &CastGradCuda);

}  // namespace scopeflow
