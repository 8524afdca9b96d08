#include "framework/check_numerics.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/float16.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Whether any element has every exponent bit set (an infinity or a NaN):
// integer operations the compiler vectorizes, where std::isfinite is a
// branch per element. `Bits` is the unsigned integer of T's size.
template <typename T, typename Bits>
bool AnyNonFinite(const T* data, int64_t n, Bits exponent) {
  Bits any = 0;
  for (int64_t i = 0; i < n; ++i) {
    Bits bits;
    std::memcpy(&bits, data + i, sizeof(bits));
    any |= static_cast<Bits>((bits & exponent) == exponent);
  }
  return any != 0;
}

template <typename T>
std::optional<NonFinite> FirstNonFinite(const T* data, int64_t n) {
  if constexpr (sizeof(T) == 4) {
    if (!AnyNonFinite(data, n, uint32_t{0x7f800000})) return std::nullopt;
  } else {
    if (!AnyNonFinite(data, n, uint64_t{0x7ff0000000000000})) {
      return std::nullopt;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(data[i])) return NonFinite{i, double{data[i]}};
  }
  return std::nullopt;
}

std::optional<NonFinite> FirstNonFiniteHalf(const float16* data, int64_t n) {
  static_assert(sizeof(float16) == 2, "binary16");
  if (!AnyNonFinite(data, n, uint16_t{0x7c00})) return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    const float value = HalfToFloat(data[i]);
    if (!std::isfinite(value)) return NonFinite{i, double{value}};
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::optional<NonFinite>> FindNonFinite(const Tensor& tensor) {
  const DataType dtype = tensor.dtype();
  if (!tensor.initialized() ||
      (dtype != kFloat32 && dtype != kFloat64 && dtype != kFloat16)) {
    return std::nullopt;
  }
  Tensor host = tensor;
  if (!host.place().is_cpu()) {
    SF_ASSIGN_OR_RETURN(host, tensor.CopyTo(CPUPlace()));
  }
  switch (dtype) {
    case kFloat32:
      return FirstNonFinite(host.data<float>(), host.numel());
    case kFloat64:
      return FirstNonFinite(host.data<double>(), host.numel());
    default:
      return FirstNonFiniteHalf(host.data<float16>(), host.numel());
  }
}

absl::Status CheckOutputsFinite(const PreparedOp& op,
                                const std::vector<std::string>& names,
                                Tensor* const* tensors) {
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    for (int v : op.outputs[o]) {
      if (tensors[v] == nullptr) continue;
      absl::StatusOr<std::optional<NonFinite>> found =
          FindNonFinite(*tensors[v]);
      if (!found.ok()) {
        return absl::Status(
            found.status().code(),
            absl::StrFormat("%s: checking output \"%s\" for NaN and Inf: %s",
                            OpName(op), names[v], found.status().message()));
      }
      if (!found->has_value()) continue;
      const NonFinite& bad = **found;
      return absl::InvalidArgumentError(absl::StrFormat(
          "check_numerics: %s wrote %s to output \"%s\" (slot %s, %s %s) at "
          "element %d",
          OpName(op), std::isnan(bad.value) ? "NaN" : absl::StrCat(bad.value),
          names[v], op.spec->outputs()[o].name,
          DataTypeName(tensors[v]->dtype()), DimsToString(tensors[v]->dims()),
          bad.index));
    }
  }
  return absl::OkStatus();
}

}  // namespace scopeflow
