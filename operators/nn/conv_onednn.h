// A 2-D convolution as oneDNN describes it, and the forward, backward-data
// and backward-weights primitives that conv2d's and conv2d_grad's float32
// kernels run: by Winograd's minimal filtering where that pays and oneDNN
// has it for the CPU, directly otherwise.
#ifndef SCOPEFLOW_OPERATORS_NN_CONV_ONEDNN_H_
#define SCOPEFLOW_OPERATORS_NN_CONV_ONEDNN_H_

#include "dnnl.hpp"
#include "framework/tensor.h"
#include "operators/image_layout.h"
#include "operators/nn/conv_epilogue.h"
#include "operators/nn/window.h"

namespace scopeflow {

// Lets oneDNN choose the layout its fastest implementation wants.
dnnl::memory::desc AnyLayout(const dnnl::memory::dims& dims);

// A convolution as oneDNN describes it, in our layouts (NCHW, NHWC, nChw8c
// or nChw16c data, OIHW filters seen as GOIHW with groups).
struct OneDnnConv {
  // In [N, C, H, W] order whatever the layout: oneDNN's logical order.
  dnnl::memory::dims src, weights, dst, strides, dilates, pad_l, pad_r;
  dnnl::memory::desc src_md, weights_md, dst_md;
  // The src (and diff_src) and dst (and diff_dst) layouts the direct
  // primitives are asked for (Winograd's choose their own). NHWC, NCHW8c
  // and NCHW16c: ours, which oneDNN's direct kernels run on (on AVX-512
  // CPUs, its AVX-512 kernels on NHWC and NCHW16c, its AVX2 ones on
  // NCHW8c), so activations are never reordered (a blocked op's NCHW Input
  // too: its first-convolution kernels read NCHW and write blocks). NCHW:
  // any, as oneDNN prefers its blocked layouts to plain NCHW, reordered to
  // and from.
  dnnl::memory::desc src_want, dst_want;
};

// `input` and `output` in [N, C, H, W] order, `input_format` and
// `output_format` the layouts of Input and Output.
OneDnnConv DescribeConv(const Conv2dAttrs& a, const Dims& input,
                        ImageFormat input_format, const Dims& filter,
                        const Dims& output, ImageFormat output_format);

// Whether Winograd's algorithm computes `c` faster than oneDNN's direct
// kernels, in the forward pass and in both backward ones, counting the
// reorders each needs: oneDNN runs Winograd's on its own 16-channel blocks
// only, so activations in any of our layouts but NCHW16c go in and out
// through copies. F(2x2, 3x3) and F(4x4, 3x3) take a 3x3 filter of stride
// 1 with 2.25 and 4 times fewer multiplications, but transform every tile
// of input and output on the way. It pays from 32 input channels, and from
// 64 output channels where direct runs on NHWC as it is, 32 where direct
// reorders NCHW to and from its blocks too, takes NCHW8c with AVX2's
// kernels, or runs on NCHW16c, where Winograd's needs no reorders at all.
// Winograd's speed-up over direct, measured on an AVX-512 Xeon with oneDNN
// 2.6 at 1 and 2 threads, reorders from and to the user's layouts
// included, the filter's too in the backward passes
// (conv_algorithm_benchmark: batch 1 on 16x16 and 32x32 images, batch 16
// on 16x16 to 64x64):
//   NHWC, 32 -> 64 channels and up: forward 1.0-1.9x; backward data and
//   weights 1.02-2.1x at batch 16, 0.54-1.6x at batch 1 (below 1 on
//   16x16 images, and for 32 -> 64 on 32x32 ones). 32 -> 32 and 64 -> 32
//   either way: forward 0.88-1.28x, backward 0.46-1.63x.
//   NCHW, 32 -> 32 channels and up: forward 1.28-2.3x; backward 1.12-3.3x
//   at batch 16, 0.6-2.1x at batch 1 (below 1 on 16x16 images, and for
//   32 -> 32's weights on 32x32 ones).
//   NCHW8c, 32 -> 32 channels and up: forward 1.26-4.0x; backward
//   1.63-4.3x at batch 16, 0.7-3.3x at batch 1 (below 1 on 16x16 images).
//   NCHW16c, 32 -> 32 channels and up, neither reordering and direct on
//   AVX-512's kernels: forward 1.12-2.5x (once 0.86, 32 -> 64 on 16x16
//   at batch 1, 1.46 in another run); backward 1.1-3.0x at batch 16
//   (0.78 and 0.95 for the weights of 32 -> 64 and 32 -> 32 on 16x16),
//   0.38-1.75x at batch 1 (below 1 on 16x16 images, and on 32x32 ones
//   for 32 -> 32 and for 32 -> 64's weights).
// With 16 input channels mostly losses on NHWC, NCHW and NCHW16c
// (0.3-1.65x), either way on NCHW8c (0.37-2.8x). A training step of
// train_benchmark's CNN (NCHW, batch 16) runs 1.15x as fast at 1 thread
// and 1.23x at 2 with its 32 -> 32 layer taken by Winograd's too, in all
// three passes.
bool WinogradPays(const OneDnnConv& c);

// The float32 inference primitive of `algorithm` for `c` (`epilogue`'s
// post-ops, a bias with `has_bias`): direct on src_want and
// dst_want, Winograd's on the layouts it chooses. Throws dnnl::error where
// oneDNN has no implementation on this CPU.
dnnl::convolution_forward::primitive_desc ForwardPrimitiveOf(
    const OneDnnConv& c, dnnl::algorithm algorithm, bool has_bias,
    const ConvEpilogue& epilogue, const dnnl::engine& engine);

// The primitive conv2d runs for `c`: Winograd's where WinogradPays and
// oneDNN implements it on this CPU (AVX-512), otherwise direct; on the
// layouts oneDNN chooses where it has only its reference kernel for ours
// (a blocked op's NCHW Input of more channels than its first-convolution
// kernels read). Throws dnnl::error where oneDNN has neither.
dnnl::convolution_forward::primitive_desc ForwardPrimitive(
    const OneDnnConv& c, bool has_bias, const ConvEpilogue& epilogue,
    const dnnl::engine& engine);

// The float32 backward-data (Input's gradient) and backward-weights
// (Filter's) primitives of `algorithm` for `c`, each chosen to match a
// forward-training primitive of the same algorithm, as oneDNN asks: direct
// on src_want and dst_want (for diff_src and diff_dst too), Winograd's on
// the layouts it chooses. Throw dnnl::error where oneDNN has no
// implementation on this CPU.
dnnl::convolution_backward_data::primitive_desc BackwardDataPrimitiveOf(
    const OneDnnConv& c, dnnl::algorithm algorithm, const dnnl::engine& engine);
dnnl::convolution_backward_weights::primitive_desc BackwardWeightsPrimitiveOf(
    const OneDnnConv& c, dnnl::algorithm algorithm, const dnnl::engine& engine);

// The primitives conv2d_grad runs for `c`, chosen as ForwardPrimitive's,
// each on its own: Winograd's where WinogradPays and oneDNN implements that
// pass on this CPU (AVX-512), otherwise direct, on oneDNN's layouts where
// it has only its reference kernel for ours. Throw dnnl::error where
// oneDNN has neither.
dnnl::convolution_backward_data::primitive_desc BackwardDataPrimitive(
    const OneDnnConv& c, const dnnl::engine& engine);
dnnl::convolution_backward_weights::primitive_desc BackwardWeightsPrimitive(
    const OneDnnConv& c, const dnnl::engine& engine);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_CONV_ONEDNN_H_
