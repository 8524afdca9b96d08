#include "framework/data_type.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace scopeflow {
namespace {

struct DataTypeInfo {
  DataType dtype;
  const char* name;
  size_t size;
};

constexpr DataTypeInfo kDataTypes[] = {
    {kFloat32, "float32", 4},
    {kFloat64, "float64", 8},
    {kFloat16, "float16", 2},
    {kInt32, "int32", 4},
    {kInt64, "int64", 8},
    {kUInt8, "uint8", 1},
    {kBool, "bool", 1},
    {kInt8, "int8", 1},
    {kInt16, "int16", 2},
    {kUInt16, "uint16", 2},
    {kUInt32, "uint32", 4},
    {kUInt64, "uint64", 8},
    {kBFloat16, "bfloat16", 2},
    {kFloat8E4M3FN, "float8e4m3fn", 1},
    {kFloat8E4M3FNUZ, "float8e4m3fnuz", 1},
    {kFloat8E5M2, "float8e5m2", 1},
    {kFloat8E5M2FNUZ, "float8e5m2fnuz", 1},
    {kInt4, "int4", 1},
    {kUInt4, "uint4", 1},
    {kInt2, "int2", 1},
    {kUInt2, "uint2", 1},
    {kFloat4E2M1, "float4e2m1", 1},
    {kFloat8E8M0, "float8e8m0", 1},
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
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown data type \"%s\": expected one of %s", name,
                      AllDataTypeNames()));
}

bool IsValidDataType(DataType dtype) { return Find(dtype) != nullptr; }

const std::vector<DataType>& AllDataTypes() {
  static const std::vector<DataType>* const dtypes = [] {
    auto* all = new std::vector<DataType>();
    for (const DataTypeInfo& info : kDataTypes) all->push_back(info.dtype);
    return all;
  }();
  return *dtypes;
}

std::string AllDataTypeNames() {
  std::vector<std::string> names;
  for (const DataTypeInfo& info : kDataTypes) names.push_back(info.name);
  return absl::StrJoin(names, ", ");
}

bool IsIntegerDataType(DataType dtype) {
  switch (dtype) {
    case kInt8:
    case kInt16:
    case kInt32:
    case kInt64:
    case kUInt8:
    case kUInt16:
    case kUInt32:
    case kUInt64:
      return true;
    default:
      return false;
  }
}

bool IsFloatDataType(DataType dtype) {
  switch (dtype) {
    case kFloat16:
    case kBFloat16:
    case kFloat32:
    case kFloat64:
    case kFloat8E4M3FN:
    case kFloat8E4M3FNUZ:
    case kFloat8E5M2:
    case kFloat8E5M2FNUZ:
      return true;
    default:
      return false;
  }
}

}  // namespace scopeflow
