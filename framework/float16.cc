#include "framework/float16.h"

#include <cstring>

namespace scopeflow {
namespace {

uint32_t BitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float FloatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace

float16 FloatToHalf(float value) {
  const uint32_t bits = BitsOf(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits >= 0x7f800000u) {  // Inf or NaN; NaN keeps a payload bit.
    const uint16_t nan_bit = abs_bits > 0x7f800000u ? 0x0200u : 0;
    return {static_cast<uint16_t>(sign | 0x7c00u | nan_bit)};
  }
  if (abs_bits >= 0x477ff000u) {  // Rounds to 65520 or above: infinity.
    return {static_cast<uint16_t>(sign | 0x7c00u)};
  }
  if (abs_bits < 0x38800000u) {  // Below the smallest normal half: subnormal.
    // Adding 0.5 makes the float unit's own round-to-nearest-even place the
    // subnormal half's bits in the low mantissa bits.
    const float shifted = FloatOf(abs_bits) + 0.5f;
    return {static_cast<uint16_t>(sign | (BitsOf(shifted) - 0x3f000000u))};
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to
  // nearest, ties to even.
  const uint32_t odd = (abs_bits >> 13) & 1u;
  const uint32_t rounded = abs_bits + 0xc8000fffu + odd;
  return {static_cast<uint16_t>(sign | (rounded >> 13))};
}

float HalfToFloat(float16 value) {
  const uint32_t sign = static_cast<uint32_t>(value.bits & 0x8000u) << 16;
  const uint32_t exponent = (value.bits >> 10) & 0x1fu;
  const uint32_t mantissa = value.bits & 0x3ffu;
  if (exponent == 0x1f) {  // Inf or NaN.
    return FloatOf(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {  // Zero or subnormal: mantissa * 2^-24.
    const float magnitude =
        static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  return FloatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace scopeflow
