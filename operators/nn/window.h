// Geometry of 2-D sliding windows over NCHW tensors, shared by conv2d and
// pool2d: the "strides" / "paddings" / "dilations" style attributes and the
// output size along one spatial axis.
#ifndef SCOPEFLOW_OPERATORS_NN_WINDOW_H_
#define SCOPEFLOW_OPERATORS_NN_WINDOW_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/op_context.h"
#include "framework/op_spec.h"
#include "framework/tensor.h"
#include "operators/image_layout.h"

namespace scopeflow {

// Padding of the two spatial axes, in cells.
struct Padding2d {
  int64_t top = 0;
  int64_t bottom = 0;
  int64_t left = 0;
  int64_t right = 0;
};

// Attribute checks: exactly two positive values ([h, w]: strides,
// dilations, ksize), and two or four non-negative values (paddings).
AttrCheckFn PositivePair();
AttrCheckFn PaddingList();

// [h, w] of an attribute that PositivePair() accepted.
std::array<int64_t, 2> PairOf(const std::vector<int32_t>& values);

// A "paddings" attribute that PaddingList() accepted: [pad_h, pad_w] pads
// both sides alike, [top, bottom, left, right] each side apart.
Padding2d PaddingOf(const std::vector<int32_t>& values);

// "[top, bottom, left, right]".
std::string PaddingToString(const Padding2d& padding);

// The attributes of conv2d and conv2d_grad, for the kernels of either
// device.
struct Conv2dAttrs {
  std::array<int64_t, 2> strides;
  std::array<int64_t, 2> dilations;
  Padding2d padding;
  int64_t groups;
  // The op's data_format, how Output lays out its image, and Input too
  // except that a blocked format's Input may be NCHW (rank 4: a first
  // convolution, over an image's few channels). NHWC holds the channels
  // last; NCHW8c and NCHW16c (operators/channel_blocks.h) hold them in
  // blocks, Output as [N, M / B, H, W, B] and a rank-5 Input as
  // [N, C / B, H, W, B] (B the block). Filter (OIHW) and Bias are the same
  // in every format.
  ImageFormat format = ImageFormat::kNchw;
  // The forward op's fuse_relu: Output = relu(convolution). Conv2dAttrsOf
  // leaves it false: the kernels that honour it read it themselves.
  bool fuse_relu = false;

  bool Nhwc() const { return format == ImageFormat::kNhwc; }
  // Channels per block of a blocked format (8 or 16); 0 for NCHW and NHWC.
  int64_t Block() const { return ChannelBlockOf(format); }
  bool Blocked() const { return Block() > 0; }
};

// conv2d's attributes (strides, dilations, paddings, groups, data_format),
// as the op's checks accepted them.
Conv2dAttrs Conv2dAttrsOf(const Attributes& attrs);

// Number of positions of a window of `extent` cells (dilation included)
// moving by `stride` over `input` cells padded by `pad_before` and
// `pad_after`: floor((input + pads - extent) / stride) + 1, or with
// `ceil_mode` the ceiling instead, less one if the last window would start
// in the trailing padding. 0 when the window does not fit; -1 if `input`
// is unknown (-1). `extent` and `stride` are positive, the pads
// non-negative. InvalidArgument, giving the sizes, where the padded input
// or the count does not fit in int64.
absl::StatusOr<int64_t> WindowOutputSize(int64_t input, int64_t extent,
                                         int64_t pad_before, int64_t pad_after,
                                         int64_t stride,
                                         bool ceil_mode = false);

// The dimensions of a rank-4 input as inference knows them: its dims, or
// four unknown ones if even its rank is unknown.
Dims Rank4DimsOf(const VarInfo& info);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_WINDOW_H_
