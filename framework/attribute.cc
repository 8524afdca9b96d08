#include "framework/attribute.h"

#include "absl/strings/str_format.h"

namespace scopeflow {

const char* AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return "int";
    case AttrType::kFloat:
      return "float";
    case AttrType::kString:
      return "string";
    case AttrType::kBool:
      return "bool";
    case AttrType::kInt64:
      return "int64";
    case AttrType::kInts:
      return "ints";
    case AttrType::kFloats:
      return "floats";
    case AttrType::kStrings:
      return "strings";
    case AttrType::kBools:
      return "bools";
    case AttrType::kInt64s:
      return "int64s";
    case AttrType::kBlock:
      return "block";
  }
  return "unknown";
}

absl::StatusOr<AttrValue> AttrValueFromProto(const AttrDef& attr) {
  switch (attr.value_case()) {
    case AttrDef::kI:
      return AttrValue(attr.i());
    case AttrDef::kF:
      return AttrValue(attr.f());
    case AttrDef::kS:
      return AttrValue(attr.s());
    case AttrDef::kB:
      return AttrValue(attr.b());
    case AttrDef::kI64:
      return AttrValue(attr.i64());
    case AttrDef::kInts:
      return AttrValue(std::vector<int32_t>(attr.ints().values().begin(),
                                            attr.ints().values().end()));
    case AttrDef::kFloats:
      return AttrValue(std::vector<float>(attr.floats().values().begin(),
                                          attr.floats().values().end()));
    case AttrDef::kStrings:
      return AttrValue(std::vector<std::string>(attr.strings().values().begin(),
                                                attr.strings().values().end()));
    case AttrDef::kBools:
      return AttrValue(std::vector<bool>(attr.bools().values().begin(),
                                         attr.bools().values().end()));
    case AttrDef::kI64S:
      return AttrValue(std::vector<int64_t>(attr.i64s().values().begin(),
                                            attr.i64s().values().end()));
    case AttrDef::kBlockIdx:
      return AttrValue(BlockIndex{attr.block_idx()});
    case AttrDef::VALUE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("attribute \"%s\" has no value", attr.name()));
}

absl::StatusOr<AttrValue> ConvertAttrValue(const AttrValue& value,
                                           AttrType type) {
  if (TypeOf(value) == type) return value;
  if (type == AttrType::kInt64 && TypeOf(value) == AttrType::kInt) {
    return AttrValue(static_cast<int64_t>(std::get<int32_t>(value)));
  }
  if (type == AttrType::kInt64s && TypeOf(value) == AttrType::kInts) {
    const auto& ints = std::get<std::vector<int32_t>>(value);
    return AttrValue(std::vector<int64_t>(ints.begin(), ints.end()));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "expected %s, got %s", AttrTypeName(type), AttrTypeName(TypeOf(value))));
}

}  // namespace scopeflow
