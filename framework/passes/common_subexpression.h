// Common-subexpression elimination: of two ops computing the same value,
// the second goes and its readers read the first's outputs.
//
// Exporters repeat work the model wrote once: torch writes x.size(i) as a
// Shape and a Gather at each use, and an attention block reads one input
// through several identical reshapes. Two ops compute the same when they
// are of one type, with equal attributes (compared as serialized, so -0.0
// and 0.0 differ) and the same variables in the same slots, and are pure
// (OpSpec::pure: no random state, no control flow, no update in place, no
// block run). Merged only where the values are the same wherever read:
// each input is written by at most one op, before the first of the two;
// each output is a temporary written by its op alone, and the duplicate's
// outputs are read by some op of the block as written (one that nothing
// reads may be a fetched output, and stays). A run fetching a merged-away
// variable runs the block as written (PreparedNet::PlanFor).
#ifndef SCOPEFLOW_FRAMEWORK_PASSES_COMMON_SUBEXPRESSION_H_
#define SCOPEFLOW_FRAMEWORK_PASSES_COMMON_SUBEXPRESSION_H_

#include "framework/passes/pass.h"

namespace scopeflow {

// Named "common_subexpression"; stateless.
class CommonSubexpressionPass final : public GraphPass {
 public:
  absl::string_view name() const override { return "common_subexpression"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PASSES_COMMON_SUBEXPRESSION_H_
