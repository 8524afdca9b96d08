// The channels-last rewrite: runs chains of convolutions, pooling and
// elementwise activations on NHWC activations instead of NCHW.
//
// oneDNN's fastest CPU convolutions want channels-last data, so a conv2d on
// NCHW tensors pays two reorders per call (input in, output back), about a
// sixth to a quarter of a CNN's time. The executor knows the whole block
// ahead of time: where every reader of a convolution's output is an op that
// can take NHWC too (another conv2d, a pool2d, relu and other elementwise
// ops), those variables are kept NHWC under new names and the ops are told
// so by their "data_format" attribute; a transpose enters the region where
// NCHW data comes in and another leaves it where NCHW data goes out. Inside
// the region, a relu that alone reads a conv2d's output is fused into it
// (conv2d's fuse_relu, a oneDNN post-op): one pass over the output less.
//
// Only temporaries written by one op and read only by ops of the region
// change; parameters, inputs, variables that control-flow ops or gradient
// ops read, and every other variable keep their names and layouts. A
// variable the rewrite renamed does not exist in the rewritten block under
// its old name: the executor runs the block as written when such a
// variable is fetched.
#ifndef SCOPEFLOW_FRAMEWORK_LAYOUT_REWRITE_H_
#define SCOPEFLOW_FRAMEWORK_LAYOUT_REWRITE_H_

#include <optional>
#include <vector>

#include "proto/framework.pb.h"

namespace scopeflow {

struct LayoutRewrite {
  BlockDef block;
  // Per op of `block`, the index of the op of the original block it comes
  // from (an inserted transpose: the op it serves), for error messages.
  std::vector<int> source_op;
};

// `block` rewritten channels-last, or nullopt when no region with an op that
// prefers channels-last (conv2d) can be rewritten. Expects a block that
// Prepare has accepted (ops registered, slots bound as their specs say).
std::optional<LayoutRewrite> RewriteChannelsLast(const BlockDef& block);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_LAYOUT_REWRITE_H_
