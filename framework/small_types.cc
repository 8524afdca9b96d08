#include "framework/small_types.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace scopeflow {
namespace {

// The magnitudes of float4e2m1 codes 0..7 (the sign is bit 3).
constexpr float kFloat4E2M1Magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f,
                                            2.0f, 3.0f, 4.0f, 6.0f};

// `bits` low bits of `value` as a two's-complement (or unsigned) number.
int WrapToBits(uint64_t value, int bits, bool is_signed) {
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  const int low = static_cast<int>(value & mask);
  if (is_signed && low >= (1 << (bits - 1))) return low - (1 << bits);
  return low;
}

}  // namespace

// ONNX Cast into int4/uint4/int2/uint2 keeps the low bits, as a cast between
// integers of different widths does: the suite's cases cast -9.0 to int4 7
// and 8.0 to -8 (ONNX's reference casts with ml_dtypes, whose sub-byte
// integers are built from a C++ integer conversion). A fraction is
// truncated toward zero first, as a C++ float-to-integer conversion does;
// NaN gives 0 and a magnitude beyond int64 keeps the low bits of int64's
// bound of that sign (both undefined in C++: chosen so that every input has
// an answer). QuantizeLinear saturates instead (operators/quantization).
int SmallIntFromFloat(double value, int bits, bool is_signed) {
  if (std::isnan(value)) return 0;
  const double truncated = std::trunc(value);
  int64_t whole;
  if (truncated >= 9.2233720368547758e18) {
    whole = std::numeric_limits<int64_t>::max();
  } else if (truncated < -9.2233720368547758e18) {
    whole = std::numeric_limits<int64_t>::min();
  } else {
    whole = static_cast<int64_t>(truncated);
  }
  return WrapToBits(static_cast<uint64_t>(whole), bits, is_signed);
}

int SmallIntFromInteger(int64_t value, int bits, bool is_signed) {
  return WrapToBits(static_cast<uint64_t>(value), bits, is_signed);
}

// Round to nearest, ties to the even code (the one whose mantissa bit is 0),
// saturating at +-6, as ONNX's reference (ml_dtypes.float4_e2m1fn) does and
// the suite's cases show: 0.25 -> 0, 3.5 -> 4, 9 and infinity -> 6. The
// format has no NaN: ml_dtypes, and so the suite, gives NaN the code 0x8
// (-0), whatever the NaN's sign.
uint8_t FloatToFloat4E2M1Bits(float value) {
  if (std::isnan(value)) return 0x8;
  const uint8_t sign = std::signbit(value) ? 0x8 : 0;
  const float magnitude = std::fabs(value);
  // 6 and beyond (infinity too, whose distance to every code is the same).
  if (magnitude >= 6.0f) return static_cast<uint8_t>(sign | 0x7);
  uint8_t best = 0;
  for (uint8_t code = 1; code < 8; ++code) {
    const float distance = std::fabs(magnitude - kFloat4E2M1Magnitudes[code]);
    const float best_distance =
        std::fabs(magnitude - kFloat4E2M1Magnitudes[best]);
    if (distance < best_distance ||
        (distance == best_distance && code % 2 == 0)) {
      best = code;
    }
  }
  return static_cast<uint8_t>(sign | best);
}

float Float4E2M1BitsToFloat(uint8_t bits) {
  const float magnitude = kFloat4E2M1Magnitudes[bits & 0x7];
  return (bits & 0x8) ? -magnitude : magnitude;
}

// As ONNX's reference (onnx.numpy_helper.to_float8e8m0) does, on the bits
// of the float32: the result is the float's biased exponent field, so the
// sign is dropped, 0 gives 0x00 (2^-127) and subnormals count from it; NaN
// and the infinities give 0xff (NaN) whatever `saturate` says. With a
// nonzero mantissa the field goes up by one for kUp, stays for kDown, and
// for kNearest goes up when the mantissa's top bit is set and any bit below
// it is, or the field is nonzero (so a normal number's tie, 1.5 * 2^e,
// rounds up). With `saturate` a field of 0xfe (2^127) never rounds up into
// 0xff.
uint8_t FloatToFloat8E8M0Bits(float value, E8M0Rounding rounding,
                              bool saturate) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint32_t exponent = (bits >> 23) & 0xff;
  if (exponent == 0xff) return 0xff;
  const uint32_t mantissa = bits & 0x7fffff;
  bool round_up = false;
  switch (rounding) {
    case E8M0Rounding::kUp:
      round_up = mantissa != 0;
      break;
    case E8M0Rounding::kDown:
      break;
    case E8M0Rounding::kNearest: {
      const bool guard = (mantissa & 0x400000) != 0;
      const bool below = (mantissa & 0x3fffff) != 0;
      round_up = guard && (below || exponent > 0);
      break;
    }
  }
  if (round_up && saturate && exponent == 0xfe) round_up = false;
  return static_cast<uint8_t>(exponent + (round_up ? 1 : 0));
}

float Float8E8M0BitsToFloat(uint8_t bits) {
  if (bits == 0xff) return std::numeric_limits<float>::quiet_NaN();
  // 2^-127 is a float32 subnormal: exact.
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

bool IsSubByteDataType(DataType dtype) {
  switch (dtype) {
    case DATA_TYPE_INT4:
    case DATA_TYPE_UINT4:
    case DATA_TYPE_INT2:
    case DATA_TYPE_UINT2:
    case DATA_TYPE_FLOAT4E2M1:
      return true;
    default:
      return false;
  }
}

int PackedBitsOf(DataType dtype) {
  switch (dtype) {
    case DATA_TYPE_INT4:
    case DATA_TYPE_UINT4:
    case DATA_TYPE_FLOAT4E2M1:
      return 4;
    case DATA_TYPE_INT2:
    case DATA_TYPE_UINT2:
      return 2;
    default:
      return 8;
  }
}

int64_t PackedByteSize(DataType dtype, int64_t count) {
  const int per_byte = 8 / PackedBitsOf(dtype);
  return count / per_byte + (count % per_byte != 0 ? 1 : 0);
}

std::string PackSmallElements(DataType dtype, const uint8_t* elements,
                              int64_t count) {
  const int bits = PackedBitsOf(dtype);
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  std::string packed(PackedByteSize(dtype, count), '\0');
  for (int64_t i = 0; i < count; ++i) {
    const int shift = static_cast<int>(i % per_byte) * bits;
    packed[i / per_byte] =
        static_cast<char>(static_cast<uint8_t>(packed[i / per_byte]) |
                          static_cast<uint8_t>((elements[i] & mask) << shift));
  }
  return packed;
}

void UnpackSmallElements(DataType dtype, absl::string_view packed,
                         int64_t count, uint8_t* elements) {
  const int bits = PackedBitsOf(dtype);
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1 << bits) - 1);
  const bool sign_extend = dtype == DATA_TYPE_INT4 || dtype == DATA_TYPE_INT2;
  for (int64_t i = 0; i < count; ++i) {
    const int shift = static_cast<int>(i % per_byte) * bits;
    const uint8_t field =
        (static_cast<uint8_t>(packed[i / per_byte]) >> shift) & mask;
    elements[i] =
        sign_extend
            ? static_cast<uint8_t>(WrapToBits(field, bits, /*is_signed=*/true))
            : field;
  }
}

int64_t FindInvalidSmallElement(DataType dtype, const void* elements,
                                int64_t count) {
  int low = 0;
  int high = 255;
  switch (dtype) {
    case DATA_TYPE_INT4:
      low = -8, high = 7;
      break;
    case DATA_TYPE_UINT4:
    case DATA_TYPE_FLOAT4E2M1:
      high = 15;
      break;
    case DATA_TYPE_INT2:
      low = -2, high = 1;
      break;
    case DATA_TYPE_UINT2:
      high = 3;
      break;
    default:
      return -1;
  }
  const bool is_signed = low < 0;
  const auto* bytes = static_cast<const uint8_t*>(elements);
  for (int64_t i = 0; i < count; ++i) {
    const int value =
        is_signed ? static_cast<int8_t>(bytes[i]) : static_cast<int>(bytes[i]);
    if (value < low || value > high) return i;
  }
  return -1;
}

}  // namespace scopeflow
