// Test helpers for the image layouts NCHW, NHWC, NCHW8c and NCHW16c
// (operators/channel_blocks.h): each layout's index arithmetic written out
// from its definition, independently of the kernels' own helpers, and the
// transfer_layout op between them.
#ifndef SCOPEFLOW_OPERATORS_CHANNEL_BLOCKS_TESTING_H_
#define SCOPEFLOW_OPERATORS_CHANNEL_BLOCKS_TESTING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_test_util.h"
#include "framework/tensor.h"

namespace scopeflow {

// The four layouts, as data_format and transfer_layout name them. Images
// in all of them need a multiple of 16 channels.
inline const char* const kImageFormats[] = {"NCHW", "NHWC", "NCHW8c",
                                            "NCHW16c"};
// The two channel-blocked ones.
inline const char* const kBlockedFormats[] = {"NCHW8c", "NCHW16c"};

// The data_format attribute of the 8-channel blocked layout.
inline constexpr char kChannelBlockedAttr[] =
    "attrs { name: \"data_format\" s: \"NCHW8c\" } ";

// Channels per block of a blocked `format`: the number in its name.
inline int64_t BlockIn(const std::string& format) {
  return format == "NCHW16c" ? 16 : 8;
}

// An image's sizes, whatever its layout.
struct ImageSizes {
  int64_t n, c, h, w;
};

inline Dims DimsIn(const std::string& format, const ImageSizes& s) {
  if (format == "NCHW") return {s.n, s.c, s.h, s.w};
  if (format == "NHWC") return {s.n, s.h, s.w, s.c};
  const int64_t b = BlockIn(format);
  return {s.n, s.c / b, s.h, s.w, b};
}

// Where element (n, c, h, w) lies in `format`.
inline int64_t OffsetIn(const std::string& format, const ImageSizes& s,
                        int64_t n, int64_t c, int64_t h, int64_t w) {
  if (format == "NCHW") return ((n * s.c + c) * s.h + h) * s.w + w;
  if (format == "NHWC") return ((n * s.h + h) * s.w + w) * s.c + c;
  const int64_t b = BlockIn(format);
  return (((n * (s.c / b) + c / b) * s.h + h) * s.w + w) * b + c % b;
}

// The image of sizes `s` in `format` whose element (n, c, h, w) holds its
// NCHW offset.
template <typename T>
Tensor NchwOffsetsIn(const std::string& format, const ImageSizes& s) {
  std::vector<T> values(s.n * s.c * s.h * s.w);
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t c = 0; c < s.c; ++c) {
      for (int64_t h = 0; h < s.h; ++h) {
        for (int64_t w = 0; w < s.w; ++w) {
          values[OffsetIn(format, s, n, c, h, w)] =
              static_cast<T>(OffsetIn("NCHW", s, n, c, h, w));
        }
      }
    }
  }
  return MakeTensor<T>(DimsIn(format, s), values);
}

// How many elements of `image`, laid out in `format`, do not hold their
// NCHW offset: zero for NchwOffsetsIn(format, s), or any image of the
// offsets moved into `format` right.
template <typename T>
int64_t CountNotAtNchwOffset(const std::vector<T>& image,
                             const std::string& format, const ImageSizes& s) {
  int64_t mismatches = 0;
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t c = 0; c < s.c; ++c) {
      for (int64_t h = 0; h < s.h; ++h) {
        for (int64_t w = 0; w < s.w; ++w) {
          mismatches += image[OffsetIn(format, s, n, c, h, w)] !=
                        static_cast<T>(OffsetIn("NCHW", s, n, c, h, w));
        }
      }
    }
  }
  return mismatches;
}

// `nchw` [N, C, H, W] laid out in `format` (blocked, C a multiple of the
// block).
template <typename T>
Tensor InFormat(const Tensor& nchw, const std::string& format) {
  const ImageSizes s = {nchw.dim(0), nchw.dim(1), nchw.dim(2), nchw.dim(3)};
  const std::vector<T> from = Values<T>(nchw);
  std::vector<T> to(from.size());
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t c = 0; c < s.c; ++c) {
      for (int64_t h = 0; h < s.h; ++h) {
        for (int64_t w = 0; w < s.w; ++w) {
          to[OffsetIn(format, s, n, c, h, w)] =
              from[OffsetIn("NCHW", s, n, c, h, w)];
        }
      }
    }
  }
  return MakeTensor<T>(DimsIn(format, s), to);
}

// `nchw` [N, C, H, W] (C a multiple of 8) as [N, C / 8, H, W, 8].
template <typename T>
Tensor ToChannelBlocks(const Tensor& nchw) {
  return InFormat<T>(nchw, "NCHW8c");
}

// transfer_layout from `src` to `dst`, X = "x", Out = "y".
inline std::string TransferLayoutOp(const std::string& src,
                                    const std::string& dst) {
  return absl::StrFormat(
      "type: \"transfer_layout\" inputs { slot: \"X\" vars: \"x\" } outputs "
      "{ slot: \"Out\" vars: \"y\" } attrs { name: \"src_format\" s: \"%s\" "
      "} attrs { name: \"dst_format\" s: \"%s\" }",
      src, dst);
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CHANNEL_BLOCKS_TESTING_H_
