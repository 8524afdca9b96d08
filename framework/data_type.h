// Element types of tensors: the DataType enum of proto/framework.proto, with
// short names for C++ and the facts each type carries.
#ifndef SCOPEFLOW_FRAMEWORK_DATA_TYPE_H_
#define SCOPEFLOW_FRAMEWORK_DATA_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/bfloat16.h"
#include "framework/float16.h"
#include "framework/float8.h"
#include "framework/small_types.h"
#include "proto/framework.pb.h"

namespace scopeflow {

inline constexpr DataType kFloat32 = DATA_TYPE_FLOAT32;
inline constexpr DataType kFloat64 = DATA_TYPE_FLOAT64;
inline constexpr DataType kFloat16 = DATA_TYPE_FLOAT16;
inline constexpr DataType kInt32 = DATA_TYPE_INT32;
inline constexpr DataType kInt64 = DATA_TYPE_INT64;
inline constexpr DataType kUInt8 = DATA_TYPE_UINT8;
inline constexpr DataType kBool = DATA_TYPE_BOOL;
inline constexpr DataType kInt8 = DATA_TYPE_INT8;
inline constexpr DataType kInt16 = DATA_TYPE_INT16;
inline constexpr DataType kUInt16 = DATA_TYPE_UINT16;
inline constexpr DataType kUInt32 = DATA_TYPE_UINT32;
inline constexpr DataType kUInt64 = DATA_TYPE_UINT64;
inline constexpr DataType kBFloat16 = DATA_TYPE_BFLOAT16;
inline constexpr DataType kFloat8E4M3FN = DATA_TYPE_FLOAT8E4M3FN;
inline constexpr DataType kFloat8E4M3FNUZ = DATA_TYPE_FLOAT8E4M3FNUZ;
inline constexpr DataType kFloat8E5M2 = DATA_TYPE_FLOAT8E5M2;
inline constexpr DataType kFloat8E5M2FNUZ = DATA_TYPE_FLOAT8E5M2FNUZ;
// framework/small_types.h: one element per byte in memory (it says why).
inline constexpr DataType kInt4 = DATA_TYPE_INT4;
inline constexpr DataType kUInt4 = DATA_TYPE_UINT4;
inline constexpr DataType kInt2 = DATA_TYPE_INT2;
inline constexpr DataType kUInt2 = DATA_TYPE_UINT2;
inline constexpr DataType kFloat4E2M1 = DATA_TYPE_FLOAT4E2M1;
inline constexpr DataType kFloat8E8M0 = DATA_TYPE_FLOAT8E8M0;

// Bytes per element in memory (1 for the sub-byte dtypes, see
// framework/small_types.h); 0 for DATA_TYPE_UNSPECIFIED and values outside the
// enum.
size_t SizeOf(DataType dtype);

// "float32", "float64", "float16", "int32", "int64", "uint8", "bool",
// "int8", "int16", "uint16", "uint32", "uint64", "bfloat16",
// "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "int4",
// "uint4", "int2", "uint2", "float4e2m1", "float8e8m0"; for
// anything else "unspecified" or "DataType(N)".
std::string DataTypeName(DataType dtype);

// The inverse of DataTypeName for the element types; an InvalidArgument
// error listing them otherwise.
absl::StatusOr<DataType> ParseDataType(absl::string_view name);

// True for the element types (not UNSPECIFIED, not unknown numbers).
bool IsValidDataType(DataType dtype);

// The element types, in enum order.
const std::vector<DataType>& AllDataTypes();

// "float32, float64, ..., bfloat16": every element type's name, for errors.
std::string AllDataTypeNames();

// The integer element types of 8 bits and more, signed and unsigned (not
// bool; not the sub-byte ones, which only cast and (de)quantize).
bool IsIntegerDataType(DataType dtype);

// float16, bfloat16, float32, float64 and the float8 dtypes (not
// float4e2m1 or float8e8m0, which only cast and (de)quantize).
bool IsFloatDataType(DataType dtype);

// The DataType of C++ element type T, e.g. DataTypeOf<float>() == kFloat32.
template <typename T>
constexpr DataType DataTypeOf();
template <>
constexpr DataType DataTypeOf<float>() {
  return kFloat32;
}
template <>
constexpr DataType DataTypeOf<double>() {
  return kFloat64;
}
template <>
constexpr DataType DataTypeOf<float16>() {
  return kFloat16;
}
template <>
constexpr DataType DataTypeOf<int32_t>() {
  return kInt32;
}
template <>
constexpr DataType DataTypeOf<int64_t>() {
  return kInt64;
}
template <>
constexpr DataType DataTypeOf<uint8_t>() {
  return kUInt8;
}
template <>
constexpr DataType DataTypeOf<bool>() {
  return kBool;
}
template <>
constexpr DataType DataTypeOf<int8_t>() {
  return kInt8;
}
template <>
constexpr DataType DataTypeOf<int16_t>() {
  return kInt16;
}
template <>
constexpr DataType DataTypeOf<uint16_t>() {
  return kUInt16;
}
template <>
constexpr DataType DataTypeOf<uint32_t>() {
  return kUInt32;
}
template <>
constexpr DataType DataTypeOf<uint64_t>() {
  return kUInt64;
}
template <>
constexpr DataType DataTypeOf<bfloat16>() {
  return kBFloat16;
}
template <>
constexpr DataType DataTypeOf<float8_e4m3fn>() {
  return kFloat8E4M3FN;
}
template <>
constexpr DataType DataTypeOf<float8_e4m3fnuz>() {
  return kFloat8E4M3FNUZ;
}
template <>
constexpr DataType DataTypeOf<float8_e5m2>() {
  return kFloat8E5M2;
}
template <>
constexpr DataType DataTypeOf<float8_e5m2fnuz>() {
  return kFloat8E5M2FNUZ;
}
template <>
constexpr DataType DataTypeOf<qint4>() {
  return kInt4;
}
template <>
constexpr DataType DataTypeOf<quint4>() {
  return kUInt4;
}
template <>
constexpr DataType DataTypeOf<qint2>() {
  return kInt2;
}
template <>
constexpr DataType DataTypeOf<quint2>() {
  return kUInt2;
}
template <>
constexpr DataType DataTypeOf<float4_e2m1>() {
  return kFloat4E2M1;
}
template <>
constexpr DataType DataTypeOf<float8_e8m0>() {
  return kFloat8E8M0;
}

// C++ element types as a list, for registering one kernel template per
// type (OpSpec::Kernels), e.g. TypeList<float, double, int32_t>().
template <typename... Ts>
struct TypeList {};

// A C++ element type as a value, for generic lambdas:
//   [](auto t) { return &Kernel<typename decltype(t)::type>; }
template <typename T>
struct TypeTag {
  using type = T;
};

// Every integer type, signed and unsigned.
using IntegerTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t,
                              uint16_t, uint32_t, uint64_t>;
// The integers and float32, float64: the types of the arithmetic kernels.
using NumberTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t,
                             uint8_t, uint16_t, uint32_t, uint64_t>;
// The float8 types.
using Float8Types =
    TypeList<float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz>;
// The types of framework/small_types.h.
using SmallTypes =
    TypeList<qint4, quint4, qint2, quint2, float4_e2m1, float8_e8m0>;
// Every element type but SmallTypes: for kernels that move elements without
// computing. (The small types move byte-wise too, but no model has needed
// them past a cast or a dequantization yet.)
using AllTypes =
    TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t,
             int64_t, uint8_t, uint16_t, uint32_t, uint64_t, bool,
             float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz>;

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_DATA_TYPE_H_
