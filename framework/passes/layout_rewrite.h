// The layout rewrite: runs chains of convolutions, pooling and elementwise
// activations on NHWC or channel-blocked (NCHW8c, NCHW16c) activations
// instead of NCHW.
//
// oneDNN's fastest CPU convolutions want channels-last data, so a conv2d on
// NCHW tensors pays two reorders per call (input in, output back), about a
// sixth to a quarter of a CNN's time. The executor knows the whole block
// ahead of time: where every reader of a convolution's output is an op that
// can take NHWC too (another conv2d, a pool2d, relu and other elementwise
// ops), those variables are kept NHWC under new names and the ops are told
// so by their "data_format" attribute; a transpose enters the region where
// NCHW data comes in and another leaves it where NCHW data goes out. A
// concat of images along their channels (Inception's, DenseNet's) and an
// inference batch_norm (a per-channel scale and shift) join the region as
// well, given the images' dims. Inside
// the region, a relu that alone reads a conv2d's output is fused into it
// (conv2d's fuse_relu, a oneDNN post-op): one pass over the output less.
//
// NCHW8c and NCHW16c (operators/channel_blocks.h) are oneDNN's own layouts
// on CPUs whose vectors hold 8 floats (AVX2) and 16 (AVX-512): on AVX2 its
// convolutions run about a tenth faster on NCHW8c than on NHWC; on AVX-512
// its Winograd kernels take NCHW16c as it is, where NHWC activations go in
// and out of them through two reorders. Only variables whose channel count
// inference knows to be a multiple of the block are blocked, and only
// convolutions whose groups
// fill whole blocks (or are depthwise), which oneDNN runs on its JIT
// kernels; a region enters and leaves through transfer_layout ops, and a
// convolution whose NCHW input has another channel count (an image's 3)
// reads it as it is and writes blocks.
//
// A training net's gradient ops join the region too: the gradient op of an
// op with a layout role (the op its GradSpec names: conv2d_grad,
// pool2d_grad, relu_grad...) reads and writes the images of that op's
// data slots and their gradients (conv2d_grad's Input, Output@GRAD and
// Input@GRAD) in the layout, so the activations and their gradients stay
// in it through the backward pass; a filter's gradient is no image and
// keeps its name.
//
// Only temporaries written by one op and read only by ops of the region
// change; parameters, inputs, variables that control-flow ops or other
// ops read, and every other variable keep their names and layouts. A
// variable the rewrite renamed does not exist in the rewritten block under
// its old name: the executor runs the block as written when such a
// variable is fetched.
#ifndef SCOPEFLOW_FRAMEWORK_LAYOUT_REWRITE_H_
#define SCOPEFLOW_FRAMEWORK_LAYOUT_REWRITE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "framework/passes/pass.h"
#include "framework/prepared_net.h"
#include "proto/framework.pb.h"

namespace scopeflow {

struct LayoutRewrite {
  BlockDef block;
  // Per op of `block`, the index of the op of the original block it comes
  // from (an inserted transpose: the op it serves), for error messages.
  std::vector<int> source_op;
  // The ops that prefer channels-last (conv2d) left as written: outside
  // the layout, each pays oneDNN's reorders into its blocks and out again.
  int convolutions_left_out = 0;
};

// The layout a rewritten region keeps its activations in.
enum class ActivationLayout {
  // The layout this CPU runs convolutions fastest on
  // (PreferredCpuActivationLayout).
  kAuto,
  kNhwc,
  kNchw8c,
  kNchw16c,
};

// The blocked layout whose blocks fill the CPU's widest vectors: NCHW16c
// with AVX-512, NCHW8c with AVX2 (oneDNN's own layouts there); NHWC on
// older CPUs. Where ONEDNN_MAX_CPU_ISA (or DNNL_MAX_CPU_ISA) keeps oneDNN
// below those instructions, its kernels for those blocks are off, and the
// layout follows the cap.
ActivationLayout PreferredCpuActivationLayout();

// The same for a CPU with or without AVX-512 (oneDNN's avx512_core: F, BW,
// VL and DQ) and AVX2, under oneDNN's cap `max_cpu_isa` (null or empty
// where unset).
ActivationLayout PreferredActivationLayoutFor(bool avx512_core, bool avx2,
                                              const char* max_cpu_isa);

// `block` rewritten channels-last, or nullopt when no region with an op that
// prefers channels-last (conv2d) can be rewritten. Expects a block that
// Prepare has accepted (ops registered, slots bound as their specs say).
// `images`, where given, holds the NCHW dims inference found for rank-4
// variables: with them, a mul or add of two images of the same batch and
// channels, one of them broadcast over height or width only (as
// squeeze-excitation scales an image by a [N, C, 1, 1] one), joins the
// region too, since broadcasting works alike in every layout.
std::optional<LayoutRewrite> RewriteChannelsLast(
    const BlockDef& block,
    const absl::flat_hash_map<std::string, Dims>* images = nullptr);

// The same rewrite to `layout`, NCHW8c or NCHW16c. `channels` gives the
// channel count inference found for each rank-4 variable (-1, or absent,
// where unknown): only variables with a known positive multiple of the
// block are blocked.
std::optional<LayoutRewrite> RewriteChannelBlocked(
    const BlockDef& block,
    const absl::flat_hash_map<std::string, int64_t>& channels,
    ActivationLayout layout,
    const absl::flat_hash_map<std::string, Dims>* images = nullptr);

// The layout rewrite as a pass of Prepare (PrepareOptions::channels_last,
// on the CPU), named "layout". With ActivationLayout::kAuto it takes the
// preferred layout, or NHWC where the blocked one would leave more
// convolutions out; the variables' channel counts come from the prepared
// block.
class LayoutPass final : public GraphPass {
 public:
  explicit LayoutPass(ActivationLayout layout) : layout_(layout) {}
  absl::string_view name() const override { return "layout"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override;

 private:
  std::optional<LayoutRewrite> Rewrite(const BlockDef& block,
                                       const PreparedNet& prepared) const;

  const ActivationLayout layout_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_LAYOUT_REWRITE_H_
