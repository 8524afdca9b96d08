#include "operators/shape/relayout_util.h"

#include <algorithm>
#include <utility>

#include "operators/common.h"
#include "operators/strided_copy.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace shape_util {

Dims TransposedStrides(absl::Span<const int64_t> x_dims,
                       const std::vector<int32_t>& perm) {
  const Dims x_strides = StridesOf(x_dims);
  Dims strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) strides[i] = x_strides[perm[i]];
  return strides;
}

Dims BroadcastStrides(absl::Span<const int64_t> x_dims, int rank) {
  const int x_rank = static_cast<int>(x_dims.size());
  const int offset = rank - x_rank;
  const Dims x_strides = StridesOf(x_dims);
  Dims strides(rank, 0);
  for (int i = 0; i < x_rank; ++i) {
    if (x_dims[i] != 1) strides[offset + i] = x_strides[i];
  }
  return strides;
}

std::optional<Dims> TiledDims(absl::Span<const int64_t> x,
                              absl::Span<const int64_t> repeats) {
  const int x_rank = static_cast<int>(x.size());
  const int rep_rank = static_cast<int>(repeats.size());
  const int rank = std::max(x_rank, rep_rank);
  Dims out(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t d = i < rank - x_rank ? 1 : x[i - (rank - x_rank)];
    const int64_t r = i < rank - rep_rank ? 1 : repeats[i - (rank - rep_rank)];
    if (r == 0 || d < 0) {
      out[i] = r == 0 ? 0 : -1;
      continue;
    }
    const std::optional<int64_t> size = CheckedMul(d, r);
    if (!size.has_value()) return std::nullopt;
    out[i] = *size;
  }
  return out;
}

absl::Status CheckRepeats(const IntValues& repeats) {
  for (int64_t r : repeats.values) {
    SF_CHECK(r >= 0, "%s: expected repeats >= 0, got %d", repeats.source(), r);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> KernelRepeats(
    const KernelContext& context, absl::Span<const int64_t> x,
    absl::Span<const int64_t> out, absl::string_view out_slot) {
  SF_ASSIGN_OR_RETURN(IntValues repeats,
                      IntListOf(context, "RepeatTimes", "repeat_times"));
  SF_RETURN_IF_ERROR(CheckRepeats(repeats));
  const std::optional<Dims> tiled = TiledDims(x, repeats.values);
  SF_CHECK(tiled.has_value() && absl::Span<const int64_t>(*tiled) == out,
           "%s tiles X's shape %s, but \"%s\" has shape %s", repeats.source(),
           DimsToString(x), out_slot, DimsToString(out));
  return std::move(repeats.values);
}

TileBox TileBoxOf(absl::Span<const int64_t> x_dims, int rank,
                  const std::vector<int64_t>& repeats) {
  const int x_offset = rank - static_cast<int>(x_dims.size());
  const int rep_offset = rank - static_cast<int>(repeats.size());
  const Dims x_strides = StridesOf(x_dims);
  TileBox tile;
  for (int i = 0; i < rank; ++i) {
    tile.box.push_back(i < rep_offset ? 1 : repeats[i - rep_offset]);
    tile.x_strides.push_back(0);
    tile.box.push_back(i < x_offset ? 1 : x_dims[i - x_offset]);
    tile.x_strides.push_back(i < x_offset ? 0 : x_strides[i - x_offset]);
  }
  return tile;
}

}  // namespace shape_util
}  // namespace scopeflow
