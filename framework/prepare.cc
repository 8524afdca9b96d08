#include "framework/prepare.h"

#include <memory>

#include "framework/passes/attention_fusion.h"
#include "framework/passes/common_subexpression.h"
#include "framework/passes/conv_fusion.h"
#include "framework/passes/dead_code.h"
#include "framework/passes/gated_activation.h"
#include "framework/passes/op_fusion.h"
#include "framework/passes/transpose_matmul.h"
#include "framework/prepare_block.h"
#include "platform/status_macros.h"

namespace scopeflow {

PassPipeline DefaultPasses(const PrepareOptions& options, const Place& place) {
  PassPipeline pipeline;
  // First, while the attention's matmuls, softmax and transposes are as
  // the exporter wrote them.
  if (options.fuse_ops) pipeline.Add(std::make_unique<AttentionFusionPass>());
  // Fusion pays on every place, on a device by one op's dispatch per op
  // removed.
  if (options.fuse_ops) pipeline.Add(std::make_unique<OpFusionPass>());
  // Before the layout rewrite, which takes a fused Residual into the
  // convolution's layout; the adds and activations it fuses would
  // otherwise leave that layout around them.
  if (options.fuse_ops && place.is_cpu()) {
    pipeline.Add(std::make_unique<ConvFusionPass>());
  }
  // The layout rewrite is the CPU's (its blocked and NHWC kernels).
  if (options.channels_last && place.is_cpu()) {
    pipeline.Add(std::make_unique<LayoutPass>(options.activation_layout));
  }
  // After the layout rewrite, which places its transfers around the ops as
  // written: placed around silu, it puts twice as many in EfficientNet-B0.
  if (options.fuse_ops) pipeline.Add(std::make_unique<GatedActivationPass>());
  // Last, over what the passes before left: duplicates merged, transposes
  // folded into matmuls, then whatever that left unread removed.
  if (options.fuse_ops) {
    pipeline.Add(std::make_unique<CommonSubexpressionPass>());
    pipeline.Add(std::make_unique<TransposeMatmulPass>());
    pipeline.Add(std::make_unique<DeadCodePass>());
  }
  return pipeline;
}

absl::StatusOr<PreparedNet> PrepareNet(const NetDef& net, int block,
                                       const Place& place,
                                       const PrepareOptions& options) {
  SF_ASSIGN_OR_RETURN(PreparedNet as_written,
                      PrepareAsWritten(net, block, place));
  return DefaultPasses(options, place).Run(net, block, std::move(as_written));
}

}  // namespace scopeflow
