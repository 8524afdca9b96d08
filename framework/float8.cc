#include "framework/float8.h"

#include <cmath>
#include <limits>

namespace scopeflow {
namespace {

// What sets the formats apart.
struct Layout {
  int mantissa_bits;
  int bias;
  // The bits of the largest finite magnitude.
  uint8_t largest;
  // Whether the format has no -0 and one NaN, 0x80 ("fnuz").
  bool unsigned_zero;
  // Whether it has infinities (float8e5m2 only).
  bool infinities;
};

Layout LayoutOf(Float8Format format) {
  switch (format) {
    case Float8Format::kE4M3FN:
      return {3, 7, 0x7e, false, false};
    case Float8Format::kE4M3FNUZ:
      return {3, 8, 0x7f, true, false};
    case Float8Format::kE5M2:
      return {2, 15, 0x7b, false, true};
    case Float8Format::kE5M2FNUZ:
      return {2, 16, 0x7f, true, false};
  }
  return {3, 7, 0x7e, false, false};
}

uint8_t NanBits(const Layout& layout, uint8_t sign) {
  return layout.unsigned_zero ? 0x80 : static_cast<uint8_t>(sign | 0x7f);
}

}  // namespace

uint8_t FloatToFloat8Bits(float value, Float8Format format, bool saturate) {
  const Layout layout = LayoutOf(format);
  const uint8_t sign = std::signbit(value) ? 0x80 : 0;
  if (std::isnan(value)) return NanBits(layout, sign);
  const uint8_t overflow =
      saturate            ? static_cast<uint8_t>(sign | layout.largest)
      : layout.infinities ? static_cast<uint8_t>(sign | 0x7c)
                          : NanBits(layout, sign);
  if (std::isinf(value)) return overflow;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude == 0) return layout.unsigned_zero ? 0 : sign;
  const int m = layout.mantissa_bits;
  // The exponent of the smallest normal value; below it, steps of
  // 2^(min_exponent - m) (subnormals), which the bits count directly.
  const int min_exponent = 1 - layout.bias;
  int exponent;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(e-1), 2^e).
  exponent -= 1;
  if (exponent < min_exponent) exponent = min_exponent;
  // The magnitude in units of the last place at `exponent`, rounded to
  // nearest even (exact in double: a float has 24 bits).
  const double units = std::nearbyint(std::ldexp(magnitude, m - exponent));
  // units is in [2^m, 2^(m+1)] for normals (2^(m+1): rounding carried into
  // the next exponent) and in [0, 2^m] for subnormals (2^m: the smallest
  // normal); field = exponent + bias - 1 + units / 2^m in both cases.
  const int64_t code = static_cast<int64_t>(units) +
                       (static_cast<int64_t>(exponent - min_exponent) << m);
  if (code > layout.largest) return overflow;
  const uint8_t bits = static_cast<uint8_t>(code);
  if (bits == 0 && layout.unsigned_zero) return 0;
  return static_cast<uint8_t>(sign | bits);
}

float Float8BitsToFloat(uint8_t bits, Float8Format format) {
  const Layout layout = LayoutOf(format);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (layout.unsigned_zero && bits == 0x80) return nan;
  const uint8_t magnitude = bits & 0x7f;
  if (magnitude > layout.largest) {
    // Above the largest finite value: infinity (0x7c in float8e5m2) or NaN.
    if (layout.infinities && magnitude == 0x7c) {
      return (bits & 0x80) ? -std::numeric_limits<float>::infinity()
                           : std::numeric_limits<float>::infinity();
    }
    return nan;
  }
  const int m = layout.mantissa_bits;
  const int field = magnitude >> m;
  const int mantissa = magnitude & ((1 << m) - 1);
  const float value =
      field == 0 ? std::ldexp(static_cast<float>(mantissa), 1 - layout.bias - m)
                 : std::ldexp(static_cast<float>(mantissa + (1 << m)),
                              field - layout.bias - m);
  return (bits & 0x80) ? -value : value;
}

}  // namespace scopeflow
