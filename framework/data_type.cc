#include "framework/data_type.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace scopeflow {
namespace {

struct DataTypeInfo {
  DataType dtype;
  const char* name;
  size_t size;
};

constexpr DataTypeInfo kDataTypes[] = {
    {kFloat32, "float32", 4}, {kFloat64, "float64", 8},
    {kFloat16, "float16", 2}, {kInt32, "int32", 4},
    {kInt64, "int64", 8},     {kUInt8, "uint8", 1},
    {kBool, "bool", 1},       {kInt8, "int8", 1},
};

const DataTypeInfo* Find(DataType dtype) {
  for (const DataTypeInfo& info : kDataTypes) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

}  // namespace

size_t SizeOf(DataType dtype) {
  const DataTypeInfo* info = Find(dtype);
  return info == nullptr ? 0 : info->size;
}

std::string DataTypeName(DataType dtype) {
  const DataTypeInfo* info = Find(dtype);
  if (info != nullptr) return info->name;
  if (dtype == DATA_TYPE_UNSPECIFIED) return "unspecified";
  return absl::StrCat("DataType(", static_cast<int>(dtype), ")");
}

absl::StatusOr<DataType> ParseDataType(absl::string_view name) {
  for (const DataTypeInfo& info : kDataTypes) {
    if (name == info.name) return info.dtype;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown data type \"%s\": expected one of float32, float64, float16, "
      "int32, int64, uint8, bool, int8",
      name));
}

bool IsValidDataType(DataType dtype) { return Find(dtype) != nullptr; }

}  // namespace scopeflow
