// Geometry of the pooling windows of pool1d, pool2d and pool3d, which pool
// over the 1, 2 or 3 spatial axes of [N, C, spatial...] tensors (pool2d
// also of [N, H, W, C] and channel-blocked [N, C / B, H, W, B] ones): the
// checks of their per-axis attributes, the window the attributes describe,
// the output's shape and which input cells each window takes.
#ifndef SCOPEFLOW_OPERATORS_NN_POOL_WINDOW_H_
#define SCOPEFLOW_OPERATORS_NN_POOL_WINDOW_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/attribute.h"
#include "framework/op_context.h"
#include "framework/op_spec.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace pool {

// Where the channels of a pool op's tensors lie: right after N
// ([N, C, spatial...]), last ([N, spatial..., C], pool2d's data_format
// "NHWC"), or in blocks of B = 8 or 16 ([N, C / B, H, W, B], pool2d's
// data_format "NCHW8c" or "NCHW16c", operators/channel_blocks.h).
enum class Layout { kChannelsFirst, kChannelsLast, kChannelBlocked };

// The layout a pool op's attributes ask for, from its "data_format"
// (channels first where it has none, as pool1d and pool3d).
Layout LayoutOf(const Attributes& attrs);

// A pool op's tensor as the kernels walk it: `planes` planes, each of the
// cells of `rank` spatial axes from axis `first_spatial` on, each cell
// `channels` contiguous values. Pooling never mixes channels, so a blocked
// tensor pools as [N * C / B, H, W, B] channels last, B its last dim.
struct Planes {
  int64_t planes = 0;
  int64_t channels = 1;
  int first_spatial = 2;
  int rank = 0;
};

// The planes of a tensor of dims `x` (checked by InferOut) in `layout`.
Planes PlanesOf(Layout layout, absl::Span<const int64_t> x);

// Attribute checks for pooling over `rank` spatial axes: exactly `rank`
// positive values (ksize, strides, dilations), and `rank` non-negative
// values padding both sides of each axis alike or 2 * `rank` values
// [before_0, after_0, before_1, after_1, ...] (paddings).
AttrCheckFn PositivePerAxis(int rank);
AttrCheckFn PaddingsPerAxis(int rank);

// A window over `rank` spatial axes, each vector holding one value per
// axis.
struct Window {
  Dims ksize, strides, dilations, pad_before, pad_after;
  bool ceil_mode = false;

  int rank() const { return static_cast<int>(ksize.size()); }
  // The cells one window spans along `axis`, the gaps of dilation included.
  int64_t Extent(int axis) const {
    return (ksize[axis] - 1) * dilations[axis] + 1;
  }
};

// The window the attributes of a pool op describe over spatial dims
// `spatial` (-1: unknown): "ksize", "strides", "dilations", "paddings" and
// "ceil_mode", or with "global_pooling" the whole of `spatial`.
Window WindowOf(const Attributes& attrs, absl::Span<const int64_t> spatial);

// Checks input "X" of a pool op over `rank` spatial axes (or of its
// gradient op) against the attributes and returns what the op writes to
// "Out": X's shape with the number of windows along each spatial axis in
// place of the spatial dims, N and C kept where `layout` puts them. X has
// rank `rank` + 2, or channel-blocked rank 5 with a last dim of the block
// the attribute "data_format" names (8 or 16).
// Paddings must be smaller than the windows' extents, and every window
// must take at least one input cell (which dilation could prevent).
absl::StatusOr<VarInfo> InferOut(const InferContext& context, int rank,
                                 Layout layout = Layout::kChannelsFirst);

// The input cells a window takes along one axis: `count` cells from
// `first` on, `step` (the dilation) apart; and `padded`, the number of its
// cells on the input or the padding (not beyond the trailing padding, where
// ceil_mode's last window may reach).
struct Taps {
  int64_t first = 0;
  int64_t count = 0;
  int64_t padded = 0;
};

// The taps of the window at output index `o` along `axis` of `w`, over an
// input of `input` cells along that axis.
Taps TapsOf(const Window& w, int axis, int64_t input, int64_t o);

}  // namespace pool
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_POOL_WINDOW_H_
