#include "operators/nn/pool_window.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "operators/channel_blocks.h"
#include "operators/common.h"
#include "operators/nn/window.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace pool {
namespace {

// The spatial axes' names, as error messages use them.
std::vector<const char*> AxisNames(int rank) {
  if (rank == 1) return {"width"};
  if (rank == 2) return {"height", "width"};
  return {"depth", "height", "width"};
}

// "height and width", "depth, height and width".
std::string AxesInWords(int rank) {
  const std::vector<const char*> names = AxisNames(rank);
  if (names.size() == 1) return names[0];
  return absl::StrCat(absl::StrJoin(names.begin(), names.end() - 1, ", "),
                      " and ", names.back());
}

// "[h, w]".
std::string AxesInBrackets(int rank) {
  const std::vector<const char*> names = AxisNames(rank);
  std::vector<std::string> letters;
  for (const char* name : names) letters.emplace_back(1, name[0]);
  return absl::StrCat("[", absl::StrJoin(letters, ", "), "]");
}

bool Dilated(const Window& w) {
  return std::any_of(w.dilations.begin(), w.dilations.end(),
                     [](int64_t d) { return d != 1; });
}

// [before_0, after_0, before_1, after_1, ...].
std::string PaddingsToString(const Window& w) {
  Dims values;
  for (int a = 0; a < w.rank(); ++a) {
    values.push_back(w.pad_before[a]);
    values.push_back(w.pad_after[a]);
  }
  return DimsToString(values);
}

// `"ksize" = [3, 3], paddings [...] and strides [1, 1]`, naming the
// dilations too where the window has gaps.
std::string WindowWithCommas(const Window& w) {
  if (!Dilated(w)) {
    return absl::StrFormat("\"ksize\" = %s, paddings %s and strides %s",
                           DimsToString(w.ksize), PaddingsToString(w),
                           DimsToString(w.strides));
  }
  return absl::StrFormat(
      "\"ksize\" = %s, paddings %s, strides %s and dilations %s",
      DimsToString(w.ksize), PaddingsToString(w), DimsToString(w.strides),
      DimsToString(w.dilations));
}

// `"ksize" = [3, 3] with paddings [...] and strides [1, 1]`, likewise.
std::string WindowWithWith(const Window& w) {
  if (!Dilated(w)) {
    return absl::StrFormat("\"ksize\" = %s with paddings %s and strides %s",
                           DimsToString(w.ksize), PaddingsToString(w),
                           DimsToString(w.strides));
  }
  return absl::StrFormat(
      "\"ksize\" = %s with paddings %s, strides %s and dilations %s",
      DimsToString(w.ksize), PaddingsToString(w), DimsToString(w.strides),
      DimsToString(w.dilations));
}

Dims DimsOf(const std::vector<int32_t>& values) {
  return Dims(values.begin(), values.end());
}

}  // namespace

Layout LayoutOf(const Attributes& attrs) {
  if (!attrs.Has("data_format")) return Layout::kChannelsFirst;
  const std::string& format = attrs.Get<std::string>("data_format");
  if (format == "NHWC") return Layout::kChannelsLast;
  if (ChannelBlockOfFormat(format) > 0) return Layout::kChannelBlocked;
  return Layout::kChannelsFirst;
}

Planes PlanesOf(Layout layout, absl::Span<const int64_t> x) {
  const int dims = static_cast<int>(x.size());
  switch (layout) {
    case Layout::kChannelsLast:
      return {x[0], x[dims - 1], 1, dims - 2};
    case Layout::kChannelBlocked:
      return {x[0] * x[1], x[dims - 1], 2, dims - 3};
    case Layout::kChannelsFirst:
      break;
  }
  return {x[0] * x[1], 1, 2, dims - 2};
}

AttrCheckFn PositivePerAxis(int rank) {
  return [rank](const AttrValue& value) -> absl::Status {
    const auto& values = std::get<std::vector<int32_t>>(value);
    SF_CHECK(static_cast<int>(values.size()) == rank,
             "must hold %d value%s %s, got [%s]", rank, rank == 1 ? "" : "s",
             AxesInBrackets(rank), absl::StrJoin(values, ", "));
    for (int32_t v : values) {
      SF_CHECK(v > 0, "must be positive, got [%s]",
               absl::StrJoin(values, ", "));
    }
    return absl::OkStatus();
  };
}

AttrCheckFn PaddingsPerAxis(int rank) {
  return [rank](const AttrValue& value) -> absl::Status {
    const auto& values = std::get<std::vector<int32_t>>(value);
    SF_CHECK(static_cast<int>(values.size()) == rank ||
                 static_cast<int>(values.size()) == 2 * rank,
             "must hold %d value%s (each axis padded alike at both ends) or "
             "%d values [before, after] per axis of %s, got [%s]",
             rank, rank == 1 ? "" : "s", 2 * rank, AxesInBrackets(rank),
             absl::StrJoin(values, ", "));
    for (int32_t v : values) {
      SF_CHECK(v >= 0, "must be non-negative, got [%s]",
               absl::StrJoin(values, ", "));
    }
    return absl::OkStatus();
  };
}

Window WindowOf(const Attributes& attrs, absl::Span<const int64_t> spatial) {
  const int rank = static_cast<int>(spatial.size());
  Window w;
  if (attrs.Get<bool>("global_pooling")) {
    w.ksize.assign(spatial.begin(), spatial.end());
    w.strides = w.dilations = Dims(rank, 1);
    w.pad_before = w.pad_after = Dims(rank, 0);
    return w;
  }
  w.ksize = DimsOf(attrs.Get<std::vector<int32_t>>("ksize"));
  w.strides = DimsOf(attrs.Get<std::vector<int32_t>>("strides"));
  w.dilations = DimsOf(attrs.Get<std::vector<int32_t>>("dilations"));
  const auto& paddings = attrs.Get<std::vector<int32_t>>("paddings");
  const bool alike = static_cast<int>(paddings.size()) == rank;
  for (int a = 0; a < rank; ++a) {
    w.pad_before.push_back(alike ? paddings[a] : paddings[2 * a]);
    w.pad_after.push_back(alike ? paddings[a] : paddings[2 * a + 1]);
  }
  w.ceil_mode = attrs.Get<bool>("ceil_mode");
  return w;
}

absl::StatusOr<VarInfo> InferOut(const InferContext& context, int rank,
                                 Layout layout) {
  const VarInfo& info = context.Input("X");
  const std::string& name = context.InputName("X");
  const bool blocked = layout == Layout::kChannelBlocked;
  const int x_rank = rank + (blocked ? 3 : 2);
  // Channels per block where blocked, else 0.
  const std::string format =
      blocked ? context.attrs().Get<std::string>("data_format") : "";
  const int64_t block = ChannelBlockOfFormat(format);
  if (blocked) {
    // A last dim of -1 is unknown, not wrong: Out's is the block anyway.
    SF_CHECK(
        !info.has_dims || (static_cast<int>(info.dims.size()) == x_rank &&
                           (info.dims.back() == block || info.dims.back() < 0)),
        "input \"X\" (variable \"%s\") has shape %s: expected rank %d "
        "[N, C / %d, H, W, %d] for data_format \"%s\"",
        name, DimsToString(info.dims), x_rank, block, block, format);
  } else {
    SF_RETURN_IF_ERROR(CheckRank(context, "X", x_rank, x_rank));
  }
  const Dims x = info.has_dims ? info.dims : Dims(x_rank, -1);
  const int first_spatial = layout == Layout::kChannelsLast ? 1 : 2;
  const absl::Span<const int64_t> spatial =
      absl::MakeConstSpan(x).subspan(first_spatial, rank);
  for (int64_t size : spatial) {
    SF_CHECK(size != 0,
             "input \"X\" (variable \"%s\") has shape %s: expected a "
             "positive %s",
             name, DimsToString(x), AxesInWords(rank));
  }
  // X's shape with `out_spatial` in place of its spatial dims.
  const auto out_info = [&](const Dims& out_spatial) {
    Dims out = x;
    std::copy(out_spatial.begin(), out_spatial.end(),
              out.begin() + first_spatial);
    if (blocked) out.back() = block;
    return VarInfo{info.dtype, std::move(out), /*has_dims=*/true};
  };
  if (context.attrs().Get<bool>("global_pooling")) {
    return out_info(Dims(rank, 1));
  }
  const Window w = WindowOf(context.attrs(), spatial);
  Dims extents;
  bool pads_fit = true;
  for (int a = 0; a < rank; ++a) {
    extents.push_back(w.Extent(a));
    pads_fit =
        pads_fit && w.pad_before[a] < extents[a] && w.pad_after[a] < extents[a];
  }
  SF_CHECK(pads_fit,
           "attribute \"paddings\" = %s must be smaller than \"ksize\" = "
           "%s%s: a window would see only padding",
           PaddingsToString(w), DimsToString(w.ksize),
           Dilated(w) ? absl::StrFormat(" dilated by %s, spanning %s",
                                        DimsToString(w.dilations),
                                        DimsToString(extents))
                      : "");
  const std::vector<const char*> axis_names = AxisNames(rank);
  Dims out_spatial;
  for (int a = 0; a < rank; ++a) {
    const absl::StatusOr<int64_t> size =
        WindowOutputSize(spatial[a], extents[a], w.pad_before[a],
                         w.pad_after[a], w.strides[a], w.ceil_mode);
    SF_CHECK(size.ok(),
             "input \"X\" (variable \"%s\") has shape %s; with %s, along the "
             "%s, %s",
             name, DimsToString(x), WindowWithCommas(w), axis_names[a],
             size.status().message());
    out_spatial.push_back(*size);
  }
  SF_CHECK(
      std::find(out_spatial.begin(), out_spatial.end(), 0) == out_spatial.end(),
      "input \"X\" (variable \"%s\") has shape %s: too small for %s; "
      "expected a positive output %s, got %s",
      name, DimsToString(x), WindowWithWith(w), AxesInWords(rank),
      DimsToString(out_spatial));
  // A window starting on the input takes its first cell, and none starts
  // past it (the paddings are smaller than the extents, and ceil_mode drops
  // such windows); one starting in the leading padding may, with dilation,
  // step over the whole input.
  for (int a = 0; a < rank; ++a) {
    if (spatial[a] < 0) continue;
    for (int64_t o = 0;
         o < out_spatial[a] && o * w.strides[a] < w.pad_before[a]; ++o) {
      SF_CHECK(TapsOf(w, a, spatial[a], o).count > 0,
               "input \"X\" (variable \"%s\") has shape %s: with %s, window "
               "%d along the %s takes padding only",
               name, DimsToString(x), WindowWithCommas(w), o, axis_names[a]);
    }
  }
  return out_info(out_spatial);
}

Taps TapsOf(const Window& w, int axis, int64_t input, int64_t o) {
  const int64_t ksize = w.ksize[axis];
  const int64_t step = w.dilations[axis];
  const int64_t start = o * w.strides[axis] - w.pad_before[axis];
  // The taps landing before cell `limit`: (limit - 1 - start) / step + 1,
  // at most ksize (the difference overflows only where it exceeds any).
  const auto taps_before = [&](int64_t limit) -> int64_t {
    if (start >= limit) return 0;
    const std::optional<int64_t> room = CheckedAdd(limit - 1, -start);
    // *room / step < ksize first: *room / step + 1 overflows for a room of
    // the int64 limit.
    return room.has_value() && *room / step < ksize ? *room / step + 1 : ksize;
  };
  // The first tap on or after cell 0.
  const int64_t begin = start >= 0 ? 0 : (-start + step - 1) / step;
  Taps taps;
  taps.first = start + begin * step;
  taps.count = std::max<int64_t>(0, taps_before(input) - begin);
  taps.padded = taps_before(CheckedAdd(input, w.pad_after[axis])
                                .value_or(std::numeric_limits<int64_t>::max()));
  return taps;
}

}  // namespace pool
}  // namespace scopeflow
