// Gated activation fusion: x * gate(x), written as two ops, into one op.
//
// Exporters write SiLU (x * sigmoid(x)) and HardSwish (x * hardsigmoid(x))
// apart when the ONNX opset has no op for them: torch writes nn.SiLU as a
// Sigmoid and a Mul at every opset, and nn.Hardswish as a HardSigmoid
// (alpha 1/6, beta 1/2) and a Mul below opset 14. Two passes over the
// activation (and a temporary the size of it) where silu and hard_swish
// make one: in EfficientNet-B0 the sigmoids alone are a third of the time.
// So, on every place where the fused op has a kernel for the dtype,
// Prepare (PrepareOptions::fuse_ops) rewrites
// - sigmoid(X) -> G, mul(X, G) or mul(G, X) -> Out   into silu(X) -> Out;
// - hard_sigmoid(X) with alpha 1/6 and beta 1/2 -> G, then the same mul,
//   into hard_swish(X) -> Out.
// G must be a temporary of float32 or float64 that the gate alone writes
// and the mul alone reads, once, with Out of X's dims and dtype; no op
// between the two may write X, and Out must not be X. G is gone from the
// fused block, so a run that fetches it runs the block as written
// (PreparedNet::PlanFor).
#ifndef SCOPEFLOW_FRAMEWORK_PASSES_GATED_ACTIVATION_H_
#define SCOPEFLOW_FRAMEWORK_PASSES_GATED_ACTIVATION_H_

#include "framework/passes/pass.h"

namespace scopeflow {

// Named "gated_activation"; stateless.
class GatedActivationPass final : public GraphPass {
 public:
  absl::string_view name() const override { return "gated_activation"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PASSES_GATED_ACTIVATION_H_
