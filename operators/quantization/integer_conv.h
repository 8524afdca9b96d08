// The integer convolution shared by conv_integer and qlinear_conv: NC[spatial]
// inputs over any number of spatial axes, with strides, paddings, dilations
// and groups, on uint8 or int8 data with zero points, accumulated in int32.
#ifndef SCOPEFLOW_OPERATORS_QUANTIZATION_INTEGER_CONV_H_
#define SCOPEFLOW_OPERATORS_QUANTIZATION_INTEGER_CONV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/attribute.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {

// The window of a convolution over `spatial` axes, read from the
// attributes "strides", "paddings" ([before_0, after_0, before_1, ...]),
// "dilations" (each empty for the defaults: 1, 0, 1) and "groups".
struct ConvWindow {
  std::vector<int64_t> strides, pads_before, pads_after, dilations;
  int64_t groups = 1;
};
absl::StatusOr<ConvWindow> ConvWindowOf(const Attributes& attrs, int spatial);

// The output shape [N, M, out...] of input X and filter W (shapes may hold
// -1s); errors name both inputs by `describe_x` and `describe_w`.
absl::StatusOr<Dims> IntegerConvDims(const Dims& x, const Dims& w,
                                     const ConvWindow& window,
                                     const std::string& describe_x,
                                     const std::string& describe_w);

// acc[n, m, out...] = sum over the window of (X - x_zero) * (W - w_zero[m]),
// with padding reading as x_zero (contributing nothing). X and W are uint8
// or int8; `out` the output dims. A product per image and group of the
// windows and the filters (IntegerMatmul: oneDNN's int8 matmul for int8
// filters with one zero point, else loops).
void IntegerConv(const Tensor& x, const Tensor& w, int32_t x_zero,
                 const std::vector<int32_t>& w_zero, const ConvWindow& window,
                 const Dims& out, int32_t* acc);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_QUANTIZATION_INTEGER_CONV_H_
