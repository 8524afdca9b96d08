// The element types of ONNX narrower than a byte, and the exponent-only
// float8e8m0:
//   qint4, quint4:  4-bit integers in [-8, 7] and [0, 15] (ONNX INT4, UINT4);
//   qint2, quint2:  2-bit integers in [-2, 1] and [0, 3] (ONNX INT2, UINT2);
//   float4_e2m1:    sign, 2 exponent bits (bias 1), 1 mantissa bit: 0, 0.5,
//                   1, 1.5, 2, 3, 4, 6 and their negatives; no infinities,
//                   no NaN (ONNX FLOAT4E2M1, the OCP MX FP4 element);
//   float8_e8m0:    8 exponent bits, no sign, no mantissa: 2^(bits - 127),
//                   0xff is NaN (ONNX FLOAT8E8M0, the OCP MX block scale).
// The integers are named as PyTorch's quantized dtypes are (qint8, quint8):
// CUDA's vector types int2, int4, uint2, uint4 take the plain names in the
// global namespace, which .cu files of namespace scopeflow use.
//
// Storage: ONE ELEMENT PER BYTE, in memory and in scopeflow's own files
// (parameter files, framework TensorProto). An integer's byte is its value
// (int8_t for the signed ones, uint8_t for the unsigned); a float4_e2m1's
// byte holds its 4 bits S.EE.M in the low nibble, the high nibble 0.
// Why: every kernel that indexes, slices, gathers, transposes or copies
// elements works on these types unchanged (an element has an address), and
// a cast is one load per element rather than nibble arithmetic on every
// access; the cost is 2x (4-bit) or 4x (2-bit) memory, which matters for
// packed weights only, and none of scopeflow's kernels compute on 4-bit
// weights yet. Packing happens where ONNX's layout is the contract: ONNX
// TensorProto raw_data/int32_data (framework/onnx/onnx_tensor.cc) packs two
// 4-bit elements per byte, the first in the low nibble, and four 2-bit
// elements per byte, the first in the lowest two bits; an element count that
// does not fill the last byte leaves its high bits zero. Files and tensors
// read from outside are checked element by element (FindInvalidSmallElement):
// a byte that is no value of its dtype is an error, never a value kernels
// see.
#ifndef SCOPEFLOW_FRAMEWORK_SMALL_TYPES_H_
#define SCOPEFLOW_FRAMEWORK_SMALL_TYPES_H_

#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/strings/string_view.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// A kBits-bit integer stored in a byte. `value` is always within
// [kMin, kMax].
template <int kBits, bool kSigned>
struct small_int {
  using Storage = std::conditional_t<kSigned, int8_t, uint8_t>;
  static constexpr int kBitWidth = kBits;
  static constexpr bool kIsSigned = kSigned;
  static constexpr int kMin = kSigned ? -(1 << (kBits - 1)) : 0;
  static constexpr int kMax =
      kSigned ? (1 << (kBits - 1)) - 1 : (1 << kBits) - 1;
  Storage value = 0;

  friend bool operator==(small_int a, small_int b) {
    return a.value == b.value;
  }
  friend bool operator!=(small_int a, small_int b) {
    return a.value != b.value;
  }
};

using qint4 = small_int<4, true>;
using quint4 = small_int<4, false>;
using qint2 = small_int<2, true>;
using quint2 = small_int<2, false>;

// Whether T is one of the small_int types.
template <typename T>
inline constexpr bool kIsSmallInt = false;
template <int kBits, bool kSigned>
inline constexpr bool kIsSmallInt<small_int<kBits, kSigned>> = true;

// The bits of a float4e2m1 value, in the low nibble.
struct float4_e2m1 {
  uint8_t bits = 0;

  friend bool operator==(float4_e2m1 a, float4_e2m1 b) {
    return a.bits == b.bits;
  }
  friend bool operator!=(float4_e2m1 a, float4_e2m1 b) {
    return a.bits != b.bits;
  }
};

// The bits of a float8e8m0 value (the biased exponent).
struct float8_e8m0 {
  uint8_t bits = 0;

  friend bool operator==(float8_e8m0 a, float8_e8m0 b) {
    return a.bits == b.bits;
  }
  friend bool operator!=(float8_e8m0 a, float8_e8m0 b) {
    return a.bits != b.bits;
  }
};

// `value` as a kBits-bit integer the way ONNX Cast converts into these
// types (framework/small_types.cc says which rule and why).
int SmallIntFromFloat(double value, int bits, bool is_signed);
// An integer wider than the type: its low `bits` bits, two's complement.
int SmallIntFromInteger(int64_t value, int bits, bool is_signed);

template <typename T>
T ToSmallInt(double value) {
  return {static_cast<typename T::Storage>(
      SmallIntFromFloat(value, T::kBitWidth, T::kIsSigned))};
}
template <typename T>
T ToSmallIntFromInteger(int64_t value) {
  return {static_cast<typename T::Storage>(
      SmallIntFromInteger(value, T::kBitWidth, T::kIsSigned))};
}

// `value` rounded to the nearest float4e2m1, ties to even; beyond +-6 (and
// the infinities) +-6; NaN as framework/small_types.cc says.
uint8_t FloatToFloat4E2M1Bits(float value);
// Exact.
float Float4E2M1BitsToFloat(uint8_t bits);

// How a value between two powers of two rounds into float8e8m0 (ONNX Cast's
// "round_mode"): kUp to the larger, kDown to the smaller, kNearest to the
// nearer, a tie to the larger.
enum class E8M0Rounding { kUp, kDown, kNearest };

// `value` as float8e8m0 (framework/small_types.cc has the rules for zero,
// negative values, NaN and infinities); `saturate` as ONNX Cast's
// attribute: beyond 2^127 the largest value rather than NaN.
uint8_t FloatToFloat8E8M0Bits(float value, E8M0Rounding rounding,
                              bool saturate);
// Exact: 2^(bits - 127); 0xff is NaN.
float Float8E8M0BitsToFloat(uint8_t bits);

// int4, uint4, int2, uint2 and float4e2m1: the dtypes ONNX packs.
bool IsSubByteDataType(DataType dtype);
// Bits of an element in ONNX's packed layout: 4 or 2 for the sub-byte
// dtypes, 8 * SizeOf otherwise.
int PackedBitsOf(DataType dtype);
// Bytes of `count` elements of `dtype` in ONNX's packed layout.
int64_t PackedByteSize(DataType dtype, int64_t count);

// `count` elements of sub-byte `dtype`, one per byte, packed as ONNX does.
std::string PackSmallElements(DataType dtype, const uint8_t* elements,
                              int64_t count);
// The inverse: `packed` holds PackedByteSize(dtype, count) bytes (callers
// check that and name the tensor); writes `count` bytes to `elements`.
void UnpackSmallElements(DataType dtype, absl::string_view packed,
                         int64_t count, uint8_t* elements);

// The index of the first of `count` bytes that is no element of `dtype`
// (an int4 byte outside [-8, 7], a float4e2m1 byte above 0x0f, ...), or -1
// when all are; -1 for every dtype whose every byte pattern is a value.
int64_t FindInvalidSmallElement(DataType dtype, const void* elements,
                                int64_t count);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_SMALL_TYPES_H_
