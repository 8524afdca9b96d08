// The CUDA kernel of transfer_layout (transfer_layout.cc): the CPU
// kernel's box, walked by the strided kernel.
#include <cstdint>

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/common.h"
#include "operators/image_layout.h"
#include "operators/shape/strided_cuda.h"
#include "operators/shape/transfer_layout_util.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status TransferLayoutCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const TransferBox box,
                      shape_util::KernelTransferBox(context));
  CopyStridedOnCuda(*cuda, out->raw_data(), box.dst_strides, x.raw_data(),
                    box.src_strides, box.dims, SizeOf(x.dtype()));
  return CudaLaunchCheck("transfer_layout");
}

}  // namespace

SF_REGISTER_KERNEL(transfer_layout, DeviceType::kCUDA, kFloat32,
                   &TransferLayoutCuda);
SF_REGISTER_KERNEL(transfer_layout, DeviceType::kCUDA, kFloat64,
                   &TransferLayoutCuda);
SF_REGISTER_KERNEL(transfer_layout, DeviceType::kCUDA, kInt32,
                   &TransferLayoutCuda);
SF_REGISTER_KERNEL(transfer_layout, DeviceType::kCUDA, kInt64,
                   &TransferLayoutCuda);
SF_REGISTER_KERNEL(transfer_layout, DeviceType::kCUDA, kBool,
                   &TransferLayoutCuda);

}  // namespace scopeflow
