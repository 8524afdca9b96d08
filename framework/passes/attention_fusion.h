// Attention fusion: scaled dot-product attention, as exporters write it,
// into one attention op (operators/attention/attention.cc).
//
// torch 1.13 exports nn.MultiheadAttention (nn.TransformerEncoder and
// Decoder layers, torchvision's ViT), at every opset, as
//   Qt = Transpose(Q, [1, 0, 2])   Kt = Transpose(K, [1, 2, 0])
//   Vt = Transpose(V, [1, 0, 2])   Qs = Div(Qt, sqrt(d))
//   S = MatMul(Qs, Kt) [, Mul(S, alpha)] [, Add(S, mask)]
//   O = MatMul(Softmax(S, -1), Vt)  Out = Transpose(O, [1, 0, 2])
// with Q, K, V of [L, batch * heads, d]: three transposes of Q, K, V, a
// pass over Q, the whole score matrix written and read four times, and a
// transpose of the result. attention reads Q, K, V where they lie (its
// "seq_first" layout), writes Out there, and keeps the scores of a block
// of rows in a thread's cache. So, where the place has an attention kernel
// for the dtype, Prepare (PrepareOptions::fuse_ops) rewrites
//   matmul(Qs, Kt) -> S; then mul and div of S by one-element tensors,
//   at most one of each; then an optional add of a mask M (either
//   operand); softmax over the last axis -> P; matmul(P, Vt) -> O
// into attention(Q, K, V, Mask = M, Scale, Divisor) -> O, where
// - Qs may be Qt times or divided by a one-element tensor (the Scale or
//   Divisor, if the scores do not already have one);
// - Kt may be a transpose the matmul makes (transpose_y), or a stored
//   K^T (attribute "transpose_k"), or a transpose of K swapping its last
//   two axes;
// - with Qt, Kt, Vt the transposes of torch's layout above and O read by
//   Transpose(O, [1, 0, 2]) alone, the transposes go too: attention with
//   "seq_first" reads their inputs and writes the last transpose's output.
// The alpha of matmul(Qs, Kt) goes into attribute "scale"; that of
// matmul(P, Vt) must be 1. Imported nets leave the heads' ranks unknown at
// Prepare (the reshapes take their shapes from tensors computed at run
// time) and declare the scalar constants without a shape: there only the
// sequence-first layout fuses (its transposes fix the rank at 3), and a
// parameter of unknown rank is taken as a scale, attention checking at run
// time that it holds one element. Every variable between
// the fused ops must be a temporary that one op writes and the next alone
// reads, and no op between the first and the last fused may write what
// the fused op reads. The variables fused away are gone from the block, so
// a run that fetches one runs the block as written (PreparedNet::PlanFor).
#ifndef SCOPEFLOW_FRAMEWORK_PASSES_ATTENTION_FUSION_H_
#define SCOPEFLOW_FRAMEWORK_PASSES_ATTENTION_FUSION_H_

#include "framework/passes/pass.h"

namespace scopeflow {

// Named "attention_fusion"; stateless.
class AttentionFusionPass final : public GraphPass {
 public:
  absl::string_view name() const override { return "attention_fusion"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PASSES_ATTENTION_FUSION_H_
