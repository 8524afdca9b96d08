// transfer_layout (as Paddle's op of the name): an image moved between the
// layouts NCHW, NHWC, NCHW8c and NCHW16c (operators/channel_blocks.h) by one
// strided copy. Its gradient is the same op with the layouts swapped.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/channel_blocks.h"
#include "operators/common.h"
#include "operators/image_layout.h"
#include "operators/shape/shape_util.h"
#include "operators/shape/transfer_layout_util.h"
#include "operators/strided_copy.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::DescribeInput;
using shape_util::ImageFormatAttr;

// How an image of `format` lays out its dims, for error messages.
std::string DimsLayout(ImageFormat format) {
  if (format == ImageFormat::kNchw) return "[N, C, H, W]";
  if (format == ImageFormat::kNhwc) return "[N, H, W, C]";
  const int64_t block = ChannelBlockOf(format);
  return absl::StrFormat("[N, C / %d, H, W, %d]", block, block);
}

absl::Status InferTransferLayout(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const ImageFormat src,
                      ImageFormatAttr(context.attrs(), "src_format"));
  SF_ASSIGN_OR_RETURN(const ImageFormat dst,
                      ImageFormatAttr(context.attrs(), "dst_format"));
  const std::string& src_name = context.attrs().Get<std::string>("src_format");
  const VarInfo& x = context.Input("X");
  // Both layouts' ranks are fixed, so Out's rank is known even where X's
  // is not.
  ImageSizes sizes = {-1, -1, -1, -1};
  if (x.has_dims) {
    const int rank = static_cast<int>(x.dims.size());
    SF_CHECK(rank == ImageRank(src),
             "%s has rank %d: expected rank %d, %s, for src_format \"%s\"",
             DescribeInput(context, "X"), rank, ImageRank(src), DimsLayout(src),
             src_name);
    const int64_t src_block = ChannelBlockOf(src);
    if (src_block > 0) {
      SF_CHECK(x.dims[4] < 0 || x.dims[4] == src_block,
               "%s has last dim %d: expected %d, %s, for src_format \"%s\"",
               DescribeInput(context, "X"), x.dims[4], src_block,
               DimsLayout(src), src_name);
      SF_CHECK(x.dims[1] < 0 || CheckedMul(x.dims[1], src_block).has_value(),
               "%s has %d channel blocks of %d: more channels than int64 "
               "holds",
               DescribeInput(context, "X"), x.dims[1], src_block);
    }
    sizes = ImageSizesOf(x.dims, src);
  }
  const int64_t dst_block = ChannelBlockOf(dst);
  if (dst_block > 0) {
    SF_CHECK(sizes.c < 0 || sizes.c % dst_block == 0,
             "%s has %d channels: expected a multiple of %d for dst_format "
             "\"%s\"",
             DescribeInput(context, "X"), sizes.c, dst_block,
             ImageFormatName(dst));
  }
  context.SetOutput("Out", 0, x.dtype, ImageDimsOf(sizes, dst));
  return absl::OkStatus();
}

absl::Status TransferLayoutKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const TransferBox box,
                      shape_util::KernelTransferBox(context));
  CopyStrided(out->raw_data(), box.dst_strides, x.raw_data(), box.src_strides,
              box.dims, SizeOf(x.dtype()));
  return absl::OkStatus();
}

// The transfer only moves elements, so X@GRAD is Out@GRAD moved back: the
// same op with the two formats swapped. Both default to NCHW, so swapping
// the names of the attributes the forward op gives swaps the formats.
absl::Status MakeTransferLayoutGrad(GradOpContext& grad) {
  const std::vector<std::string> x_grad = grad.InputGrad("X");
  if (x_grad.empty() || x_grad[0].empty()) return absl::OkStatus();
  OpDef& op = grad.AddOp("transfer_layout");
  GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "Out", x_grad);
  for (const AttrDef& attr : grad.forward().attrs()) {
    AttrDef& swapped = *op.add_attrs();
    swapped = attr;
    if (attr.name() == "src_format") swapped.set_name("dst_format");
    if (attr.name() == "dst_format") swapped.set_name("src_format");
  }
  return absl::OkStatus();
}

}  // namespace

// X is [N, C, H, W] for "NCHW", [N, H, W, C] for "NHWC", [N, C / 8, H, W,
// 8] for "NCHW8c" and [N, C / 16, H, W, 16] for "NCHW16c"; moving to a
// blocked format needs C to be a multiple of its block. Equal formats copy.
SF_REGISTER_OP(transfer_layout)
    .Input("X")
    .Output("Out")
    .Attr("src_format", AttrType::kString, AttrValue(std::string("NCHW")),
          OneOf(ImageFormatNames()))
    .Attr("dst_format", AttrType::kString, AttrValue(std::string("NCHW")),
          OneOf(ImageFormatNames()))
    .Infer(InferTransferLayout)
    .Grad(GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
        MakeTransferLayoutGrad))
    .Kernel(DeviceType::kCPU, kFloat32, &TransferLayoutKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &TransferLayoutKernel)
    .Kernel(DeviceType::kCPU, kInt32, &TransferLayoutKernel)
    .Kernel(DeviceType::kCPU, kInt64, &TransferLayoutKernel)
    .Kernel(DeviceType::kCPU, kBool, &TransferLayoutKernel);

}  // namespace scopeflow
