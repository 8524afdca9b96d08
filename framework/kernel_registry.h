// Kernels registered apart from their op's spec: the CUDA kernels, which
// live in their own files and are compiled only in builds with CUDA. The op
// itself (slots, attributes, inference, CPU kernels) is still declared
// once, with SF_REGISTER_OP; OpSpec::FindKernel finds both kinds.
#ifndef SCOPEFLOW_FRAMEWORK_KERNEL_REGISTRY_H_
#define SCOPEFLOW_FRAMEWORK_KERNEL_REGISTRY_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "framework/data_type.h"
#include "framework/op_spec.h"
#include "platform/place.h"

namespace scopeflow {

// Adds `kernel` for `op_type` on (`device`, `dtype`). For static
// initialisation only (SF_REGISTER_KERNEL); registering one key twice
// aborts the program, as registering an op twice does.
void RegisterKernel(absl::string_view op_type, DeviceType device,
                    DataType dtype, KernelFn kernel);

// The kernel registered for `op_type` and `key`, or null.
KernelFn FindRegisteredKernel(absl::string_view op_type, const KernelKey& key);

// The dtypes with a registered kernel of `op_type` on `device`.
void AppendRegisteredKernelDtypes(absl::string_view op_type, DeviceType device,
                                  std::vector<DataType>& dtypes);

#define SF_REGISTER_KERNEL_CONCAT_INNER_(a, b) a##b
#define SF_REGISTER_KERNEL_CONCAT_(a, b) SF_REGISTER_KERNEL_CONCAT_INNER_(a, b)

// Registers `kernel` for op type `op_type` (an identifier) at static
// initialisation, e.g.
//   SF_REGISTER_KERNEL(relu, DeviceType::kCUDA, kFloat32, &ReluCuda<float>);
// Kernel libraries are linked with alwayslink = True.
#define SF_REGISTER_KERNEL(op_type, device, dtype, kernel)                     \
  [[maybe_unused]] static const bool SF_REGISTER_KERNEL_CONCAT_(sf_kernel_,    \
                                                                __COUNTER__) = \
      (::scopeflow::RegisterKernel(#op_type, device, dtype, kernel), true)

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_KERNEL_REGISTRY_H_
