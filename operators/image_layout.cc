#include "operators/image_layout.h"

#include <array>

#include "operators/channel_blocks.h"

namespace scopeflow {

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

// The strides of an image in `format` over the dims [N, C / 8, H, W, 8].
std::array<int64_t, 5> SplitChannelStrides(const ImageSizes& s,
                                           ImageFormat format) {
  const int64_t plane = s.h * s.w;
  switch (format) {
    case ImageFormat::kNchw:
      return {s.c * plane, kChannelBlock * plane, s.w, 1, plane};
    case ImageFormat::kNhwc:
      return {plane * s.c, kChannelBlock, s.w * s.c, s.c, 1};
    case ImageFormat::kNchw8c:
      break;
  }
  return {s.c * plane, plane * kChannelBlock, s.w * kChannelBlock,
          kChannelBlock, 1};
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
  box.dims = {sizes.n, sizes.c / kChannelBlock, sizes.h, sizes.w,
              kChannelBlock};
  const std::array<int64_t, 5> src_strides = SplitChannelStrides(sizes, src);
  const std::array<int64_t, 5> dst_strides = SplitChannelStrides(sizes, dst);
  box.src_strides.assign(src_strides.begin(), src_strides.end());
  box.dst_strides.assign(dst_strides.begin(), dst_strides.end());
  return box;
}

}  // namespace scopeflow
