// Reading and setting the attributes of an OpDef as a net writes them, for
// the passes that rewrite a block before Prepare (layout_rewrite.h,
// op_fusion.h).
#ifndef SCOPEFLOW_FRAMEWORK_OP_DEF_ATTRS_H_
#define SCOPEFLOW_FRAMEWORK_OP_DEF_ATTRS_H_

#include "absl/strings/string_view.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// The attribute `name` as `op` sets it, or null where it leaves it to the
// op's default.
const AttrDef* FindAttr(const OpDef& op, absl::string_view name);

// The attribute `name` of `op`, added (with no value) where absent.
AttrDef& MutableAttr(OpDef& op, absl::string_view name);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_OP_DEF_ATTRS_H_
