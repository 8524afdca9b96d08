#include "operators/image_layout.h"

#include <algorithm>
#include <array>

#include "operators/channel_blocks.h"

namespace scopeflow {

std::optional<ImageFormat> ImageFormatNamed(absl::string_view name) {
  for (ImageFormat format : {ImageFormat::kNchw, ImageFormat::kNhwc,
                             ImageFormat::kNchw8c, ImageFormat::kNchw16c}) {
    if (name == ImageFormatName(format)) return format;
  }
  return std::nullopt;
}

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kNhwc:
      return "NHWC";
    case ImageFormat::kNchw8c:
      return kNchw8cFormat;
    case ImageFormat::kNchw16c:
      return kNchw16cFormat;
    case ImageFormat::kNchw:
      break;
  }
  return "NCHW";
}

int64_t ChannelBlockOf(ImageFormat format) {
  return ChannelBlockOfFormat(ImageFormatName(format));
}

int ImageRank(ImageFormat format) { return ChannelBlockOf(format) > 0 ? 5 : 4; }

ImageSizes ImageSizesOf(absl::Span<const int64_t> dims, ImageFormat format) {
  if (format == ImageFormat::kNhwc) return {dims[0], dims[3], dims[1], dims[2]};
  const int64_t block = ChannelBlockOf(format);
  if (block == 0) return {dims[0], dims[1], dims[2], dims[3]};
  return {dims[0], dims[1] < 0 ? -1 : dims[1] * block, dims[2], dims[3]};
}

Dims ImageDimsOf(const ImageSizes& sizes, ImageFormat format) {
  if (format == ImageFormat::kNhwc) return {sizes.n, sizes.h, sizes.w, sizes.c};
  const int64_t block = ChannelBlockOf(format);
  if (block == 0) return {sizes.n, sizes.c, sizes.h, sizes.w};
  return {sizes.n, sizes.c < 0 ? -1 : sizes.c / block, sizes.h, sizes.w, block};
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

// The strides of an image in `format` over the dims
// [N, C / outer, outer / inner, H, W, inner], the channels split by the
// blocks of the two layouts of a transfer (`inner` divides `outer`, and a
// blocked `format` has one of them as its block).
std::array<int64_t, 6> SplitChannelStrides(const ImageSizes& s,
                                           ImageFormat format, int64_t outer,
                                           int64_t inner) {
  const int64_t plane = s.h * s.w;
  const int64_t block = ChannelBlockOf(format);
  if (format == ImageFormat::kNchw) {
    return {s.c * plane, outer * plane, inner * plane, s.w, 1, plane};
  }
  if (format == ImageFormat::kNhwc) {
    return {plane * s.c, outer, inner, s.w * s.c, s.c, 1};
  }
  if (block == outer) {
    // Channel outer * a + inner * b + i is channel inner * b + i of block a.
    return {s.c * plane, plane * block, inner, s.w * block, block, 1};
  }
  // ... and channel i of block (outer / inner) * a + b.
  return {s.c * plane, plane * outer, plane * block, s.w * block, block, 1};
}

}  // namespace

TransferBox TransferBoxOf(const ImageSizes& sizes, ImageFormat src,
                          ImageFormat dst) {
  TransferBox box;
  const int64_t src_block = ChannelBlockOf(src);
  const int64_t dst_block = ChannelBlockOf(dst);
  if (src_block == 0 && dst_block == 0) {
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
  // is walked over the channels split by the blocks: [C / B, B], or
  // [C / 16, 2, 8] between the two blocked layouts.
  const int64_t outer = std::max(src_block, dst_block);
  const int64_t inner = src_block == 0   ? dst_block
                        : dst_block == 0 ? src_block
                                         : std::min(src_block, dst_block);
  const std::array<int64_t, 6> dims = {sizes.n, sizes.c / outer, outer / inner,
                                       sizes.h, sizes.w,         inner};
  const std::array<int64_t, 6> src_strides =
      SplitChannelStrides(sizes, src, outer, inner);
  const std::array<int64_t, 6> dst_strides =
      SplitChannelStrides(sizes, dst, outer, inner);
  for (int axis = 0; axis < 6; ++axis) {
    // One block size: the split between them is a dim of 1.
    if (axis == 2 && outer == inner) continue;
    box.dims.push_back(dims[axis]);
    box.src_strides.push_back(src_strides[axis]);
    box.dst_strides.push_back(dst_strides[axis]);
  }
  return box;
}

}  // namespace scopeflow
