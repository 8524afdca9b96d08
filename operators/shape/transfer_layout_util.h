// The image layouts of transfer_layout and the strided box that moves an
// image between two of them, computed on the host: shared by its CPU
// kernel (transfer_layout.cc) and its CUDA kernel's adapter
// (transfer_layout_cuda.cc).
#ifndef SCOPEFLOW_OPERATORS_SHAPE_TRANSFER_LAYOUT_UTIL_H_
#define SCOPEFLOW_OPERATORS_SHAPE_TRANSFER_LAYOUT_UTIL_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/attribute.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace shape_util {

// "NCHW", "NHWC" and "NCHW8c" (operators/channel_blocks.h).
enum class ImageFormat { kNchw, kNhwc, kNchw8c };

// The format that string attribute `attr` names. Prepare checks the value
// against the op's choices, but inference may run without Prepare (a
// converter inferring node by node), so an unknown value is an error here
// too, naming the attribute.
absl::StatusOr<ImageFormat> ImageFormatAttr(const Attributes& attrs,
                                            absl::string_view attr);

// The rank of an image in `format`: 4, or 5 for NCHW8c.
int ImageRank(ImageFormat format);

// An image's sizes whatever its layout; -1 where unknown.
struct ImageSizes {
  int64_t n, c, h, w;
};

// The sizes of an image of `dims`, ImageRank(format) of them, in `format`.
// For NCHW8c, c is dims[1] * kChannelBlock, which the caller has checked
// fits in int64.
ImageSizes ImageSizesOf(absl::Span<const int64_t> dims, ImageFormat format);

// The dims of an image of `sizes` in `format`; for NCHW8c, sizes.c is
// unknown or a multiple of kChannelBlock.
Dims ImageDimsOf(const ImageSizes& sizes, ImageFormat format);

// One box of elements walked in the same order through an image in two
// layouts, with each layout's strides in elements: [N, C, H, W], or
// [N, C / 8, H, W, 8] where either layout is NCHW8c.
struct TransferBox {
  Dims dims, src_strides, dst_strides;
};

// The box that copies an image of fully known `sizes` from layout `src` to
// layout `dst`.
TransferBox TransferBoxOf(const ImageSizes& sizes, ImageFormat src,
                          ImageFormat dst);

// The box of transfer_layout's kernels: input X moved from attribute
// "src_format" to "dst_format". Inference has checked X's dims.
absl::StatusOr<TransferBox> KernelTransferBox(const KernelContext& context);

}  // namespace shape_util
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SHAPE_TRANSFER_LAYOUT_UTIL_H_
