// The strides and shapes of transpose, expand and tile, computed on the
// host: shared by their CPU kernels (relayout.cc) and their CUDA kernels'
// adapters (relayout_cuda.cc).
#ifndef SCOPEFLOW_OPERATORS_SHAPE_RELAYOUT_UTIL_H_
#define SCOPEFLOW_OPERATORS_SHAPE_RELAYOUT_UTIL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "operators/value_input.h"

namespace scopeflow {
namespace shape_util {

// The strides that read X (of `x_dims`) transposed by `perm`: output axis i
// walks X's axis perm[i].
Dims TransposedStrides(absl::Span<const int64_t> x_dims,
                       const std::vector<int32_t>& perm);

// The strides that read X (of `x_dims`) broadcast to rank `rank` (numpy's
// rule, aligned to the right): 0 on the leading dims and where X has 1.
Dims BroadcastStrides(absl::Span<const int64_t> x_dims, int rank);

// numpy.tile: `x` (-1 for an unknown dim) and `repeats` are aligned to the
// right, the shorter padded with leading 1s. Repeats of 0 make 0 whatever
// the dim; nullopt where a dim overflows int64.
std::optional<Dims> TiledDims(absl::Span<const int64_t> x,
                              absl::Span<const int64_t> repeats);

// Tile's repeats, from input "RepeatTimes" or attribute "repeat_times",
// each non-negative.
absl::Status CheckRepeats(const IntValues& repeats);

// Tile's repeats for a kernel, checked against the shapes it indexes by:
// tiling `x` by them must make `out` (Out's or Out@GRAD's shape), which
// inference checks, but a gradient op whose shapes Prepare fully knew runs
// without it.
absl::StatusOr<std::vector<int64_t>> KernelRepeats(
    const KernelContext& context, absl::Span<const int64_t> x,
    absl::Span<const int64_t> out, absl::string_view out_slot);

// Output dim i, of size r * d, read as two dims [r, d]: row-major, the
// output of rank `rank` is then the box [r_0, d_0, r_1, d_1, ...], where
// X's strides ignore every r.
struct TileBox {
  Dims box, x_strides;
};

TileBox TileBoxOf(absl::Span<const int64_t> x_dims, int rank,
                  const std::vector<int64_t>& repeats);

}  // namespace shape_util
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SHAPE_RELAYOUT_UTIL_H_
