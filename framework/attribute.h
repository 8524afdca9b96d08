// Typed attributes of ops.
#ifndef SCOPEFLOW_FRAMEWORK_ATTRIBUTE_H_
#define SCOPEFLOW_FRAMEWORK_ATTRIBUTE_H_

#include <cassert>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// The index of a block of the same net.
struct BlockIndex {
  int32_t index = 0;
  friend bool operator==(BlockIndex a, BlockIndex b) {
    return a.index == b.index;
  }
};

// One attribute value; the alternatives are in AttrType's order.
using AttrValue = std::variant<int32_t, float, std::string, bool, int64_t,
                               std::vector<int32_t>, std::vector<float>,
                               std::vector<std::string>, std::vector<bool>,
                               std::vector<int64_t>, BlockIndex>;

enum class AttrType {
  kInt,
  kFloat,
  kString,
  kBool,
  kInt64,
  kInts,
  kFloats,
  kStrings,
  kBools,
  kInt64s,
  kBlock,
};

inline AttrType TypeOf(const AttrValue& value) {
  return static_cast<AttrType>(value.index());
}

// "int", "float", "string", "bool", "int64", "ints", ... "block".
const char* AttrTypeName(AttrType type);

// The value an AttrDef holds; InvalidArgument if it holds none.
absl::StatusOr<AttrValue> AttrValueFromProto(const AttrDef& attr);

// Sets `attr`'s value field to `value` (the inverse of AttrValueFromProto;
// an empty list still sets its field).
void AttrValueToProto(const AttrValue& value, AttrDef& attr);

// `value` as `type`, widening int to int64 and ints to int64s (a net may
// write `i: 3` for an int64 attribute); InvalidArgument otherwise.
absl::StatusOr<AttrValue> ConvertAttrValue(const AttrValue& value,
                                           AttrType type);

// The attributes of one op, after validation against its OpSpec: every
// declared attribute is present with its declared type (given or default).
class Attributes {
 public:
  void Set(absl::string_view name, AttrValue value) {
    values_[name] = std::move(value);
  }
  bool Has(absl::string_view name) const { return values_.contains(name); }

  // The attribute `name` as T. Validation guarantees presence and type for
  // declared attributes; asking for an undeclared one is a programming
  // error (asserted in debug builds).
  template <typename T>
  const T& Get(absl::string_view name) const {
    auto it = values_.find(name);
    assert(it != values_.end() && std::holds_alternative<T>(it->second));
    return std::get<T>(it->second);
  }

  const absl::flat_hash_map<std::string, AttrValue>& values() const {
    return values_;
  }

 private:
  absl::flat_hash_map<std::string, AttrValue> values_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ATTRIBUTE_H_
