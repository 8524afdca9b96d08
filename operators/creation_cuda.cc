// CUDA kernels of the creation ops (creation.cc) and of the seeded
// initializers (initializer/initializer.cc).
#include "operators/creation_cuda.h"

#include <cstdint>
#include <string>
#include <vector>

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "framework/op_spec.h"
#include "platform/cuda_context.h"
#include "platform/device.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// fill_constant and fill_any_like: the value converted on the host as the
// CPU kernel converts it.
template <typename T>
absl::Status FillConstantCuda(KernelContext& context) {
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const T value = static_cast<T>(context.attrs().Get<float>("value"));
  cuda::LaunchFillConstant<T>(out->data<T>(), out->numel(), value,
                              cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

// A deep copy, device to device.
absl::Status AssignCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  if (x.nbytes() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  return CudaCheck(cudaMemcpyAsync(out->raw_data(), x.raw_data(), x.nbytes(),
                                   cudaMemcpyDeviceToDevice, cuda->stream()),
                   "assign");
}

// The random ops draw from std::mt19937, a sequential generator, through
// libstdc++'s distributions: a seed gives the same tensor on a device as on
// the CPU only if the same code draws it. So the op's own CPU kernel fills
// a host tensor, which is copied to the device. These ops run once, in
// startup nets; the copy returns once the host tensor was read (CopyBytes
// waits where the source is page-locked), so the tensor may then go.
absl::Status HostGeneratedCuda(KernelContext& context) {
  Tensor* out = context.Output("Out");
  const OpSpec* spec = OpRegistry::Global().Find(context.op_type());
  const KernelFn cpu_kernel =
      spec == nullptr ? nullptr
                      : spec->FindKernel({DeviceType::kCPU, out->dtype()});
  SF_CHECK_CODE(cpu_kernel != nullptr, absl::StatusCode::kInternal,
                "%s has no CPU kernel for dtype %s to draw output \"Out\" "
                "(variable \"%s\") with",
                context.op_type(), DataTypeName(out->dtype()),
                context.OutputName("Out"));
  Tensor host;
  SF_RETURN_IF_ERROR(host.Allocate(CPUPlace(), out->dtype(), out->dims()));
  // The op has no inputs and one output, "Out": a one-variable table.
  PreparedOp op;
  op.index = context.op_index();
  op.spec = spec;
  op.attrs = context.attrs();
  op.inputs.resize(spec->inputs().size());
  op.outputs.resize(spec->outputs().size());
  op.outputs[spec->OutputIndex("Out")] = {0};
  op.kernel = cpu_kernel;
  op.kernel_place = CPUPlace();
  const std::vector<std::string> names = {context.OutputName("Out")};
  Tensor* tensors[] = {&host};
  const Place cpu = CPUPlace();
  KernelContext host_context(op, tensors, names, cpu);
  SF_RETURN_IF_ERROR(cpu_kernel(host_context));
  return CopyBytes(context.place(), out->raw_data(), cpu, host.raw_data(),
                   host.nbytes());
}

}  // namespace

#define SF_REGISTER_FILL_CUDA(op)                     \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32, \
                     &FillConstantCuda<float>);       \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64, \
                     &FillConstantCuda<double>);      \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt32,   \
                     &FillConstantCuda<int32_t>);     \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt64,   \
                     &FillConstantCuda<int64_t>);     \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kBool, &FillConstantCuda<bool>)

SF_REGISTER_FILL_CUDA(fill_constant);
SF_REGISTER_FILL_CUDA(fill_any_like);
#undef SF_REGISTER_FILL_CUDA

SF_REGISTER_KERNEL(assign, DeviceType::kCUDA, kFloat32, &AssignCuda);
SF_REGISTER_KERNEL(assign, DeviceType::kCUDA, kFloat64, &AssignCuda);
SF_REGISTER_KERNEL(assign, DeviceType::kCUDA, kInt32, &AssignCuda);
SF_REGISTER_KERNEL(assign, DeviceType::kCUDA, kInt64, &AssignCuda);
SF_REGISTER_KERNEL(assign, DeviceType::kCUDA, kUInt8, &AssignCuda);
SF_REGISTER_KERNEL(assign, DeviceType::kCUDA, kBool, &AssignCuda);

// The dtypes their CPU kernels have. The initializers are registered by
// operators/initializer; a binary without them never runs these.
SF_REGISTER_KERNEL(gaussian_random, DeviceType::kCUDA, kFloat32,
                   &HostGeneratedCuda);
SF_REGISTER_KERNEL(uniform_random, DeviceType::kCUDA, kFloat32,
                   &HostGeneratedCuda);
#define SF_REGISTER_INITIALIZER_CUDA(op)                                   \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32, &HostGeneratedCuda); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64, &HostGeneratedCuda)

SF_REGISTER_INITIALIZER_CUDA(truncated_gaussian_random);
SF_REGISTER_INITIALIZER_CUDA(xavier_uniform);
SF_REGISTER_INITIALIZER_CUDA(xavier_normal);
SF_REGISTER_INITIALIZER_CUDA(kaiming_uniform);
SF_REGISTER_INITIALIZER_CUDA(kaiming_normal);
#undef SF_REGISTER_INITIALIZER_CUDA

}  // namespace scopeflow
