// bfloat16 (the top half of an IEEE 754 binary32), for storing tensors of
// dtype bfloat16.
#ifndef SCOPEFLOW_FRAMEWORK_BFLOAT16_H_
#define SCOPEFLOW_FRAMEWORK_BFLOAT16_H_

#include <cstdint>

namespace scopeflow {

// The bits of a bfloat16 value. Arithmetic happens in float: convert with
// FloatToBFloat16 / BFloat16ToFloat.
struct bfloat16 {
  uint16_t bits = 0;

  friend bool operator==(bfloat16 a, bfloat16 b) { return a.bits == b.bits; }
  friend bool operator!=(bfloat16 a, bfloat16 b) { return a.bits != b.bits; }
};

// Rounds to the nearest bfloat16, ties to even; overflow gives infinity and
// NaN stays NaN (a quiet NaN of the same sign).
bfloat16 FloatToBFloat16(float value);
// Exact.
float BFloat16ToFloat(bfloat16 value);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_BFLOAT16_H_
