// The 8-bit float formats of ONNX (and of NVIDIA's and Graphcore's float8
// hardware), for storing tensors of the float8 dtypes. Each is a sign bit,
// E exponent bits and M mantissa bits:
//   float8e4m3fn:   E4 M3, bias 7; no infinities, NaN is S.1111.111;
//                   largest 448.
//   float8e4m3fnuz: E4 M3, bias 8; no infinities, no -0, NaN is 0x80;
//                   largest 240.
//   float8e5m2:     E5 M2, bias 15; IEEE-like, with infinities and NaNs;
//                   largest 57344.
//   float8e5m2fnuz: E5 M2, bias 16; no infinities, no -0, NaN is 0x80;
//                   largest 57344.
// Arithmetic happens in float: convert with FloatToFloat8 / Float8ToFloat.
#ifndef SCOPEFLOW_FRAMEWORK_FLOAT8_H_
#define SCOPEFLOW_FRAMEWORK_FLOAT8_H_

#include <cstdint>

namespace scopeflow {

enum class Float8Format { kE4M3FN, kE4M3FNUZ, kE5M2, kE5M2FNUZ };

// The bits of a value of format F.
template <Float8Format F>
struct float8 {
  static constexpr Float8Format kFormat = F;
  uint8_t bits = 0;

  friend bool operator==(float8 a, float8 b) { return a.bits == b.bits; }
  friend bool operator!=(float8 a, float8 b) { return a.bits != b.bits; }
};

// Whether T is one of the float8 types.
template <typename T>
inline constexpr bool kIsFloat8 = false;
template <Float8Format F>
inline constexpr bool kIsFloat8<float8<F>> = true;

using float8_e4m3fn = float8<Float8Format::kE4M3FN>;
using float8_e4m3fnuz = float8<Float8Format::kE4M3FNUZ>;
using float8_e5m2 = float8<Float8Format::kE5M2>;
using float8_e5m2fnuz = float8<Float8Format::kE5M2FNUZ>;

// `value` rounded to the nearest value of `format`, ties to even. NaN gives
// NaN. Beyond the largest finite value (after rounding), and for the
// infinities: with `saturate` the largest finite value of that sign;
// without it infinity of that sign for float8e5m2 and NaN for the formats
// without infinities (ONNX Cast's "saturate" attribute).
uint8_t FloatToFloat8Bits(float value, Float8Format format, bool saturate);
// Exact.
float Float8BitsToFloat(uint8_t bits, Float8Format format);

template <Float8Format F>
float8<F> FloatToFloat8(float value, bool saturate = true) {
  return {FloatToFloat8Bits(value, F, saturate)};
}

template <Float8Format F>
float Float8ToFloat(float8<F> value) {
  return Float8BitsToFloat(value.bits, F);
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_FLOAT8_H_
