// Element types of tensors: the DataType enum of proto/framework.proto, with
// short names for C++ and the facts each type carries.
#ifndef SCOPEFLOW_FRAMEWORK_DATA_TYPE_H_
#define SCOPEFLOW_FRAMEWORK_DATA_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/float16.h"
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

// Bytes per element; 0 for DATA_TYPE_UNSPECIFIED and values outside the enum.
size_t SizeOf(DataType dtype);

// "float32", "float64", "float16", "int32", "int64", "uint8", "bool",
// "int8"; for anything else "unspecified" or "DataType(N)".
std::string DataTypeName(DataType dtype);

// The inverse of DataTypeName for the eight element types; an
// InvalidArgument error listing them otherwise.
absl::StatusOr<DataType> ParseDataType(absl::string_view name);

// True for the eight element types (not UNSPECIFIED, not unknown numbers).
bool IsValidDataType(DataType dtype);

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

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_DATA_TYPE_H_
