// Dead-code elimination: removes the ops whose outputs nothing reads.
//
// Other passes leave such ops behind: a transpose folded into the matmul
// reading it (transpose_matmul.h), a duplicate merged into its first
// instance (common_subexpression.h), an import that computed what the
// model then ignored. An op goes when it is pure (OpSpec::pure: no random
// state, no control flow, no update in place, no block run) and each of
// its outputs is a temporary that no op of the block reads now but some op
// of the block as written read: a variable nothing reads as written is
// what the net is run for (a fetched output), and stays computed. A run
// that fetches a removed variable runs the block as written
// (PreparedNet::PlanFor). Removing an op may leave its inputs' producers
// unread in turn; they go in the same pass.
#ifndef SCOPEFLOW_FRAMEWORK_PASSES_DEAD_CODE_H_
#define SCOPEFLOW_FRAMEWORK_PASSES_DEAD_CODE_H_

#include "framework/passes/pass.h"

namespace scopeflow {

// Named "dead_code"; stateless.
class DeadCodePass final : public GraphPass {
 public:
  absl::string_view name() const override { return "dead_code"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PASSES_DEAD_CODE_H_
