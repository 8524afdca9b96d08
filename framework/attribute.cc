#include "framework/attribute.h"

#include <type_traits>
#include <variant>

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

void AttrValueToProto(const AttrValue& value, AttrDef& attr) {
  std::visit(
      [&attr](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int32_t>) {
          attr.set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          attr.set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          attr.set_s(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          attr.set_b(v);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          attr.set_i64(v);
        } else if constexpr (std::is_same_v<T, std::vector<int32_t>>) {
          attr.mutable_ints()->mutable_values()->Add(v.begin(), v.end());
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          attr.mutable_floats()->mutable_values()->Add(v.begin(), v.end());
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          auto* strings = attr.mutable_strings();
          for (const std::string& s : v) strings->add_values(s);
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          auto* bools = attr.mutable_bools();
          for (bool b : v) bools->add_values(b);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          attr.mutable_i64s()->mutable_values()->Add(v.begin(), v.end());
        } else {
          static_assert(std::is_same_v<T, BlockIndex>);
          attr.set_block_idx(v.index);
        }
      },
      value);
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
