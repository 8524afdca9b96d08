// A 2-D convolution as oneDNN describes it, and the forward, backward-data
// and backward-weights primitives that conv2d's and conv2d_grad's float32
// kernels run: by Winograd's minimal filtering where that pays and oneDNN
// has it for the CPU, directly otherwise.
#ifndef SCOPEFLOW_OPERATORS_NN_CONV_ONEDNN_H_
#define SCOPEFLOW_OPERATORS_NN_CONV_ONEDNN_H_

#include "dnnl.hpp"
#include "framework/tensor.h"
#include "operators/image_layout.h"
#include "operators/nn/window.h"

namespace scopeflow {

// Lets oneDNN choose the layout its fastest implementation wants.
dnnl::memory::desc AnyLayout(const dnnl::memory::dims& dims);

// A convolution as oneDNN describes it, in our layouts (NCHW, NHWC or
// nChw8c data, OIHW filters seen as GOIHW with groups).
struct OneDnnConv {
  // In [N, C, H, W] order whatever the layout: oneDNN's logical order.
  dnnl::memory::dims src, weights, dst, strides, dilates, pad_l, pad_r;
  dnnl::memory::desc src_md, weights_md, dst_md;
  // The src (and diff_src) and dst (and diff_dst) layouts the direct
  // primitives are asked for (Winograd's choose their own). NHWC and
  // NCHW8c: ours, which oneDNN's direct kernels run on, so activations are
  // never reordered (a blocked op's NCHW Input too: its first-convolution
  // kernels read NCHW and write blocks). NCHW: any, as oneDNN prefers its
  // blocked layouts to plain NCHW, reordered to and from.
  dnnl::memory::desc src_want, dst_want;
};

// `input` and `output` in [N, C, H, W] order, `input_format` and
// `output_format` the layouts of Input and Output.
OneDnnConv DescribeConv(const Conv2dAttrs& a, const Dims& input,
                        ImageFormat input_format, const Dims& filter,
                        const Dims& output, ImageFormat output_format);

// Whether Winograd's algorithm computes `c` faster than oneDNN's direct
// kernels, counting the reorders it needs: oneDNN runs it on its own
// 16-channel blocks only, so activations in our layouts go in and out
// through copies. F(2x2, 3x3) and F(4x4, 3x3) take a 3x3 filter of stride
// 1 with 2.25 and 4 times fewer multiplications, but transform every tile
// of input and output on the way. Measured on an AVX-512 Xeon with oneDNN
// 2.6, reorders from and to NHWC included (conv_algorithm_benchmark; batch
// 1 and 16, images 16x16 to 64x64): from 32 input and 64 output channels
// up 1.06-2.0x as fast as direct at 1 thread, 0.93-2.0x at 2 (below 1 only
// on 16x16 images); with 16 channels 0.4-0.85x; 32 -> 32 and 64 -> 32
// channels either way. Training's backward passes gain too, on the 32 ->
// 64 and 64 -> 64 layers of train_benchmark's CNN at 1 thread: backward
// data 2.1-2.9x and backward weights 1.4-1.75x as fast as direct at batch
// 16 and 64 alone, both 1.8-1.95x inside a training step at batch 16
// (kernels only, ONEDNN_VERBOSE).
bool WinogradPays(const OneDnnConv& c);

// The float32 inference primitive of `algorithm` for `c` (a relu post-op
// with `fuse_relu`, a bias with `has_bias`): direct on src_want and
// dst_want, Winograd's on the layouts it chooses. Throws dnnl::error where
// oneDNN has no implementation on this CPU.
dnnl::convolution_forward::primitive_desc ForwardPrimitiveOf(
    const OneDnnConv& c, dnnl::algorithm algorithm, bool has_bias,
    bool fuse_relu, const dnnl::engine& engine);

// The primitive conv2d runs for `c`: Winograd's where WinogradPays and
// oneDNN implements it on this CPU (AVX-512), otherwise direct. Throws
// dnnl::error where oneDNN has neither.
dnnl::convolution_forward::primitive_desc ForwardPrimitive(
    const OneDnnConv& c, bool has_bias, bool fuse_relu,
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
// pass on this CPU (AVX-512), otherwise direct. Throw dnnl::error where
// oneDNN has neither.
dnnl::convolution_backward_data::primitive_desc BackwardDataPrimitive(
    const OneDnnConv& c, const dnnl::engine& engine);
dnnl::convolution_backward_weights::primitive_desc BackwardWeightsPrimitive(
    const OneDnnConv& c, const dnnl::engine& engine);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_CONV_ONEDNN_H_
