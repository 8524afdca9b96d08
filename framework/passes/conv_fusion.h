// Convolution fusion: the ops an imported CNN writes after each
// convolution, into the convolution.
//
// ONNX has no fused convolutions, so every layer of a CNN comes as a Conv
// and then ops over its whole output: a Relu (Clip 0..6 in MobileNet V2, a
// Sigmoid and a Mul for SiLU in EfficientNet, HardSwish in MobileNet V3),
// and in residual nets an Add of the block's shortcut first. oneDNN
// applies those as post-ops to each block of the output while it is still
// in cache (operators/nn/conv_epilogue.h): conv2d's Residual input and its
// fuse_relu and activation attributes. So, on the CPU, Prepare
// (PrepareOptions::fuse_ops) rewrites, in this order:
// - conv2d -> T, add(T, R) or add(R, T) -> Out, with R of T's dims and
//   dtype, into conv2d(Residual = R) -> Out;
// - conv2d -> T, then an activation of T -> Out: relu into fuse_relu;
//   leaky_relu, elu, clip (bounds as attributes), sigmoid, tanh, gelu,
//   hard_sigmoid, hard_swish, silu, mish into activation (and
//   activation_alpha and activation_beta);
// - conv2d -> T, sigmoid(T) -> G, mul(T, G) -> Out into activation "silu",
//   and hard_sigmoid with alpha 1/6 and beta 1/2 in place of the sigmoid
//   into "hard_swish" (the gated activations of gated_activation.h, found
//   here before the layout rewrite so that the convolution's output never
//   leaves its layout).
// The conv2d must write float32 (other dtypes stay as written), with no
// activation yet; T (and G) must be temporaries that one op writes and
// the ops named read, once each, after it; no op between the first and
// the last may write what the convolution reads. The fused op runs where
// the last op was. T and G are gone from the fused block, so a run that
// fetches them runs the block as written (PreparedNet::PlanFor). Runs
// before the layout rewrite, which then takes Residual into its layout
// with the convolution's output.
#ifndef SCOPEFLOW_FRAMEWORK_PASSES_CONV_FUSION_H_
#define SCOPEFLOW_FRAMEWORK_PASSES_CONV_FUSION_H_

#include "framework/passes/pass.h"

namespace scopeflow {

// Named "conv_fusion"; stateless. Changes nothing off the CPU, where
// conv2d's kernels have no residual or activation but relu.
class ConvFusionPass final : public GraphPass {
 public:
  absl::string_view name() const override { return "conv_fusion"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PASSES_CONV_FUSION_H_
