#include "framework/op_def_attrs.h"

#include <string>

namespace scopeflow {

const AttrDef* FindAttr(const OpDef& op, absl::string_view name) {
  for (const AttrDef& attr : op.attrs()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

AttrDef& MutableAttr(OpDef& op, absl::string_view name) {
  for (AttrDef& attr : *op.mutable_attrs()) {
    if (attr.name() == name) return attr;
  }
  AttrDef* attr = op.add_attrs();
  attr->set_name(std::string(name));
  return *attr;
}

}  // namespace scopeflow
