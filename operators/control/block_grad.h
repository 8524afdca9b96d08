// The gradient of a control-flow op's block, built as a new block of the
// net that the op's gradient op runs in the scope where the block ran.
#ifndef SCOPEFLOW_OPERATORS_CONTROL_BLOCK_GRAD_H_
#define SCOPEFLOW_OPERATORS_CONTROL_BLOCK_GRAD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/grad_spec.h"

namespace scopeflow {

struct BlockGradient {
  // The new block's index in the net (a child of the forward op's block).
  int block = -1;
  // Per variable of `wrt`: the name its gradient has inside the new block.
  std::vector<std::string> grads;
};

// Appends to context.net() a block computing the gradients of `wrt` (floating
// variables the forward op's block `attr` reads: its inputs, or enclosing
// variables) from `target_grads`, the gradients flowing into `targets`
// (variables the block writes). A target gradient the enclosing block does
// not define is declared in the new block, to be fed at each run.
//
// The new block reads the forward block's values by name in the scope the
// forward block ran in (they are declared persistable there, so lookup
// finds them in that scope), and the enclosing variables the forward block
// read through the enclosing scope: the gradient op must list those among
// its inputs. Differentiating a block that itself holds control-flow ops
// is not supported (an error says so).
absl::StatusOr<BlockGradient> AppendBlockGradient(
    const GradOpContext& context, absl::string_view attr,
    const std::vector<std::string>& targets,
    const std::vector<std::string>& target_grads,
    const std::vector<std::string>& wrt);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CONTROL_BLOCK_GRAD_H_
