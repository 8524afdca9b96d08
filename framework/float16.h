// IEEE 754 half precision, for storing tensors of dtype float16.
#ifndef SCOPEFLOW_FRAMEWORK_FLOAT16_H_
#define SCOPEFLOW_FRAMEWORK_FLOAT16_H_

#include <cstdint>

namespace scopeflow {

// The bits of a binary16 value. Arithmetic happens in float: convert with
// FloatToHalf / HalfToFloat.
struct float16 {
  uint16_t bits = 0;

  friend bool operator==(float16 a, float16 b) { return a.bits == b.bits; }
  friend bool operator!=(float16 a, float16 b) { return a.bits != b.bits; }
};

// Rounds to the nearest half, ties to even; overflow gives infinity and NaN
// stays NaN.
float16 FloatToHalf(float value);
// Exact.
float HalfToFloat(float16 value);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_FLOAT16_H_
