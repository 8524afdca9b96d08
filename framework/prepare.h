// Prepare: a block of a net validated for a place (prepare_block.h), then
// rewritten by the passes the options ask for (framework/passes/), into
// the PreparedNet an Executor runs.
#ifndef SCOPEFLOW_FRAMEWORK_PREPARE_H_
#define SCOPEFLOW_FRAMEWORK_PREPARE_H_

#include "absl/status/statusor.h"
#include "framework/passes/layout_rewrite.h"
#include "framework/passes/pipeline.h"
#include "framework/prepared_net.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// What Prepare does to a block beyond validating it: which passes run.
struct PrepareOptions {
  // On the CPU, run chains of conv2d, pool2d and elementwise ops on
  // channels-last (NHWC) or channel-blocked (NCHW8c, NCHW16c) activations,
  // as oneDNN's convolutions want them, instead of reordering around each
  // convolution (framework/passes/layout_rewrite.h).
  bool channels_last = true;
  // The layout channels_last keeps activations in; kAuto: the one this
  // CPU's convolutions run fastest on (PreferredCpuActivationLayout), or
  // NHWC where channel counts that do not fill its blocks would leave
  // convolutions out of a blocked one.
  ActivationLayout activation_layout = ActivationLayout::kAuto;
  // On every place, fuse a matrix product and the bias added to it, and an
  // fc and the relu after it, into one fc (framework/passes/op_fusion.h);
  // x * sigmoid(x) and x * hard_sigmoid(x) into silu and hard_swish
  // (framework/passes/gated_activation.h); merge ops computing the same
  // value, fold transposes into matmuls and remove ops whose outputs
  // nothing reads (common_subexpression.h, transpose_matmul.h,
  // dead_code.h).
  bool fuse_ops = true;

  // Options under which a PreparedNet's ops and variables are exactly the
  // net's, as analyses of a net expect: no pass runs.
  static PrepareOptions AsWritten() {
    PrepareOptions options;
    options.channels_last = false;
    options.fuse_ops = false;
    return options;
  }
};

// The passes `options` ask for on `place`, in the order they run.
PassPipeline DefaultPasses(const PrepareOptions& options, const Place& place);

// Validates block `block` of `net` for `place` (PrepareAsWritten says what
// is checked and how problems are reported), then runs DefaultPasses. A run
// that fetches a variable a pass renamed or removed runs the block as
// written (PreparedNet::PlanFor). Thread-safe.
absl::StatusOr<PreparedNet> PrepareNet(const NetDef& net, int block,
                                       const Place& place,
                                       const PrepareOptions& options = {});

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PREPARE_H_
