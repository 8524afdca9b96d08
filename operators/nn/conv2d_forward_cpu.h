// conv2d's float32 forward pass on the CPU: oneDNN's primitive (conv_onednn.h)
// with its reorders between our layouts and oneDNN's, kept per thread and
// shape, and the filter reordered once per version of its contents.
#ifndef SCOPEFLOW_OPERATORS_NN_CONV2D_FORWARD_CPU_H_
#define SCOPEFLOW_OPERATORS_NN_CONV2D_FORWARD_CPU_H_

#include "absl/status/status.h"
#include "framework/tensor.h"
#include "operators/image_layout.h"
#include "operators/nn/conv_epilogue.h"
#include "operators/nn/window.h"

namespace scopeflow {

// Output = epilogue(conv(Input) + Bias (where not null) + Residual (where
// epilogue.residual; of Output's dims and layout, and may be Output's own
// buffer)). `input_nchw` and `output_nchw` are Input's and Output's dims in
// [N, C, H, W] order, `input_format` Input's layout; Output is in
// a.format. Throws dnnl::error where oneDNN fails (RunOneDnn turns that
// into a status).
absl::Status RunConv2d(const Conv2dAttrs& a, const Dims& input_nchw,
                       ImageFormat input_format, const Tensor& input,
                       const Tensor& filter, const Tensor* bias,
                       const Tensor* residual, const ConvEpilogue& epilogue,
                       const Dims& output_nchw, Tensor& output);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_CONV2D_FORWARD_CPU_H_
