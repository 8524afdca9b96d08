#include "operators/nn/window.h"

#include <optional>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {

AttrCheckFn PositivePair() {
  return [](const AttrValue& value) -> absl::Status {
    const auto& values = std::get<std::vector<int32_t>>(value);
    SF_CHECK(values.size() == 2, "must hold 2 values [h, w], got [%s]",
             absl::StrJoin(values, ", "));
    SF_CHECK(values[0] > 0 && values[1] > 0, "must be positive, got [%s]",
             absl::StrJoin(values, ", "));
    return absl::OkStatus();
  };
}

AttrCheckFn PaddingList() {
  return [](const AttrValue& value) -> absl::Status {
    const auto& values = std::get<std::vector<int32_t>>(value);
    SF_CHECK(values.size() == 2 || values.size() == 4,
             "must hold 2 values [pad_h, pad_w] or 4 values [top, bottom, "
             "left, right], got [%s]",
             absl::StrJoin(values, ", "));
    for (int32_t v : values) {
      SF_CHECK(v >= 0, "must be non-negative, got [%s]",
               absl::StrJoin(values, ", "));
    }
    return absl::OkStatus();
  };
}

std::array<int64_t, 2> PairOf(const std::vector<int32_t>& values) {
  return {values[0], values[1]};
}

Padding2d PaddingOf(const std::vector<int32_t>& values) {
  if (values.size() == 4) {
    return {values[0], values[1], values[2], values[3]};
  }
  return {values[0], values[0], values[1], values[1]};
}

std::string PaddingToString(const Padding2d& padding) {
  return absl::StrFormat("[%d, %d, %d, %d]", padding.top, padding.bottom,
                         padding.left, padding.right);
}

absl::StatusOr<int64_t> WindowOutputSize(int64_t input, int64_t extent,
                                         int64_t pad_before, int64_t pad_after,
                                         int64_t stride, bool ceil_mode) {
  if (input < 0) return -1;
  const auto beyond_int64 = [&] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a window of %d cells moving by %d over %d cells padded by %d and %d "
        "makes sizes beyond int64",
        extent, stride, input, pad_before, pad_after));
  };
  // The cells the window can move over. input - extent cannot overflow, as
  // both are non-negative; adding the pads can.
  std::optional<int64_t> room = CheckedAdd(input - extent, pad_before);
  if (room.has_value()) room = CheckedAdd(*room, pad_after);
  if (!room.has_value()) return beyond_int64();
  if (*room < 0) return 0;
  // The index of the last window, rounded up with ceil_mode.
  const int64_t last =
      *room / stride + (ceil_mode && *room % stride != 0 ? 1 : 0);
  const std::optional<int64_t> size = CheckedAdd(last, 1);
  if (!size.has_value()) return beyond_int64();
  // With ceil_mode, a last window starting past the input and the leading
  // padding would see only trailing padding (as one starting beyond int64
  // would).
  if (ceil_mode) {
    const std::optional<int64_t> last_start = CheckedMul(last, stride);
    if (!last_start.has_value() || *last_start - pad_before >= input) {
      return last;
    }
  }
  return *size;
}

Dims Rank4DimsOf(const VarInfo& info) {
  return info.has_dims ? info.dims : Dims(4, -1);
}

Conv2dAttrs Conv2dAttrsOf(const Attributes& attrs) {
  return {PairOf(attrs.Get<std::vector<int32_t>>("strides")),
          PairOf(attrs.Get<std::vector<int32_t>>("dilations")),
          PaddingOf(attrs.Get<std::vector<int32_t>>("paddings")),
          attrs.Get<int32_t>("groups"),
          // The op's OneOf check accepted the name.
          ImageFormatNamed(attrs.Get<std::string>("data_format"))
              .value_or(ImageFormat::kNchw)};
}

}  // namespace scopeflow
