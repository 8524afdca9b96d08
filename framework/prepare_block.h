// Prepare's first stage: a block of a net as written, validated for a
// place and bound (ops to their specs, attributes and kernels, variables
// to indices), with every variable's dtype and shape inferred, and what a
// run needs beyond the ops (when each temporary dies, the inputs to feed,
// the enclosing variables used). The blocks of control-flow ops are
// prepared with their op. No pass rewrites the block here (prepare.h
// runs the passes).
#ifndef SCOPEFLOW_FRAMEWORK_PREPARE_BLOCK_H_
#define SCOPEFLOW_FRAMEWORK_PREPARE_BLOCK_H_

#include "absl/status/statusor.h"
#include "framework/prepared_net.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// Validates block `block` of `net` for `place` and reports every problem
// found, one per line, each naming the op (index and type) and the
// variable: unknown op type, unknown or missing slot, missing, mistyped or
// out-of-range attribute, a variable read before anything writes it (and
// neither declared as an input nor persistable), shapes or dtypes that
// inference finds incompatible, no kernel for the place and dtype.
// The blocks of control-flow ops are prepared with them and checked the
// same way: a name a block does not declare, and that an enclosing block
// defines before the op, is that enclosing variable (found through the
// scope at run time), and the op must list it among its inputs (read) or
// outputs (written).
absl::StatusOr<PreparedNet> PrepareAsWritten(const NetDef& net, int block,
                                             const Place& place);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PREPARE_BLOCK_H_
