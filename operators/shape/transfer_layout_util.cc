#include "operators/shape/transfer_layout_util.h"

#include <array>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "operators/channel_blocks.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace shape_util {

absl::StatusOr<ImageFormat> ImageFormatAttr(const Attributes& attrs,
                                            absl::string_view attr) {
  const std::string& name = attrs.Get<std::string>(attr);
  if (name == "NCHW") return ImageFormat::kNchw;
  if (name == "NHWC") return ImageFormat::kNhwc;
  if (name == kChannelBlockedFormat) return ImageFormat::kNchw8c;
  return absl::InvalidArgumentError(
      absl::StrFormat("attribute \"%s\" must be one of NCHW, NHWC, %s, got "
                      "\"%s\"",
                      attr, kChannelBlockedFormat, name));
}

int ImageRank(ImageFormat format) {
  return format == ImageFormat::kNchw8c ? 5 : 4;
}

ImageSizes ImageSizesOf(absl::Span<const int64_t> dims, ImageFormat format) {
  switch (format) {
    case ImageFormat::kNchw:
      return {dims[0], dims[1], dims[2], dims[3]};
    case ImageFormat::kNhwc:
      return {dims[0], dims[3], dims[1], dims[2]};
    case ImageFormat::kNchw8c:
      break;
  }
  return {dims[0], dims[1] < 0 ? -1 : dims[1] * kChannelBlock, dims[2],
          dims[3]};
}

Dims ImageDimsOf(const ImageSizes& sizes, ImageFormat format) {
  switch (format) {
    case ImageFormat::kNchw:
      return {sizes.n, sizes.c, sizes.h, sizes.w};
    case ImageFormat::kNhwc:
      return {sizes.n, sizes.h, sizes.w, sizes.c};
    case ImageFormat::kNchw8c:
      break;
  }
  return {sizes.n, sizes.c < 0 ? -1 : sizes.c / kChannelBlock, sizes.h, sizes.w,
          kChannelBlock};
}

namespace {

// The strides of an NCHW or NHWC image over the dims [N, C, H, W].
std::array<int64_t, 4> UnblockedStrides(const ImageSizes& s,
                                        ImageFormat format) {
  if (format == ImageFormat::kNchw) {
    return {s.c * s.h * s.w, s.h * s.w, s.w, 1};
  }
  return {s.h * s.w * s.c, 1, s.w * s.c, s.c};
}

}  // namespace

TransferBox TransferBoxOf(const ImageSizes& sizes, ImageFormat src,
                          ImageFormat dst) {
  TransferBox box;
  if (src != ImageFormat::kNchw8c && dst != ImageFormat::kNchw8c) {
    // Walked in the destination's order: writes are sequential, and equal
    // layouts merge into a single run.
    const std::array<int64_t, 4> dims = {sizes.n, sizes.c, sizes.h, sizes.w};
    const std::array<int64_t, 4> src_strides = UnblockedStrides(sizes, src);
    const std::array<int64_t, 4> dst_strides = UnblockedStrides(sizes, dst);
    const std::array<int, 4> order = dst == ImageFormat::kNhwc
                                         ? std::array<int, 4>{0, 2, 3, 1}
                                         : std::array<int, 4>{0, 1, 2, 3};
    for (int axis : order) {
      box.dims.push_back(dims[axis]);
      box.src_strides.push_back(src_strides[axis]);
      box.dst_strides.push_back(dst_strides[axis]);
    }
    return box;
  }
  // A blocked layout cannot be walked as one channel dim, so every layout
  // is walked over the channels split into [C / 8, 8].
  const ChannelBlockBox blocks =
      ChannelBlockBoxOf(sizes.n, sizes.c, sizes.h, sizes.w);
  const int64_t pixel = sizes.c;
  const std::array<int64_t, 5> nhwc = {sizes.h * sizes.w * pixel, kChannelBlock,
                                       sizes.w * pixel, pixel, 1};
  auto strides = [&](ImageFormat format) {
    const std::array<int64_t, 5>& s =
        format == ImageFormat::kNchw   ? blocks.nchw_strides
        : format == ImageFormat::kNhwc ? nhwc
                                       : blocks.blocked_strides;
    return Dims(s.begin(), s.end());
  };
  box.dims.assign(blocks.dims.begin(), blocks.dims.end());
  box.src_strides = strides(src);
  box.dst_strides = strides(dst);
  return box;
}

absl::StatusOr<TransferBox> KernelTransferBox(const KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const ImageFormat src,
                      ImageFormatAttr(context.attrs(), "src_format"));
  SF_ASSIGN_OR_RETURN(const ImageFormat dst,
                      ImageFormatAttr(context.attrs(), "dst_format"));
  return TransferBoxOf(ImageSizesOf(context.Input("X").dims(), src), src, dst);
}

}  // namespace shape_util
}  // namespace scopeflow
