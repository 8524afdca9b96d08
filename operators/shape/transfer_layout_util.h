// transfer_layout's attributes and the strided box its kernels copy,
// computed on the host: shared by its CPU kernel (transfer_layout.cc) and
// its CUDA kernel's adapter (transfer_layout_cuda.cc).
#ifndef SCOPEFLOW_OPERATORS_SHAPE_TRANSFER_LAYOUT_UTIL_H_
#define SCOPEFLOW_OPERATORS_SHAPE_TRANSFER_LAYOUT_UTIL_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/attribute.h"
#include "framework/op_context.h"
#include "operators/image_layout.h"

namespace scopeflow {
namespace shape_util {

// The format that string attribute `attr` names. Prepare checks the value
// against the op's choices, but inference may run without Prepare (a
// converter inferring node by node), so an unknown value is an error here
// too, naming the attribute.
absl::StatusOr<ImageFormat> ImageFormatAttr(const Attributes& attrs,
                                            absl::string_view attr);

// The box of transfer_layout's kernels: input X moved from attribute
// "src_format" to "dst_format". Inference has checked X's dims.
absl::StatusOr<TransferBox> KernelTransferBox(const KernelContext& context);

}  // namespace shape_util
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SHAPE_TRANSFER_LAYOUT_UTIL_H_
