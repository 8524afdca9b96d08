#include "framework/bfloat16.h"

#include <cstring>

namespace scopeflow {

bfloat16 FloatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it quiet, not inf.
    return {static_cast<uint16_t>((bits >> 16) | 0x0040u)};
  }
  // Round the 16 dropped bits to nearest, ties to even; a carry out of the
  // mantissa steps the exponent, up to infinity.
  const uint32_t odd = (bits >> 16) & 1u;
  return {static_cast<uint16_t>((bits + 0x7fffu + odd) >> 16)};
}

float BFloat16ToFloat(bfloat16 value) {
  const uint32_t bits = static_cast<uint32_t>(value.bits) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

}  // namespace scopeflow
