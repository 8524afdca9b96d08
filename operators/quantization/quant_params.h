// What the quantization ops share: reading scales and zero points of any
// accepted dtype as numbers, mapping each element of a tensor to its scale
// (per tensor, per axis or per block, as ONNX QuantizeLinear and
// DequantizeLinear allow), and rounding to an integer type as ONNX says
// (half to even, then saturated to the type's range).
#ifndef SCOPEFLOW_OPERATORS_QUANTIZATION_QUANT_PARAMS_H_
#define SCOPEFLOW_OPERATORS_QUANTIZATION_QUANT_PARAMS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {

// The dtypes of quantized tensors and zero points.
inline constexpr DataType kQuantizedDtypes[] = {kUInt8, kInt8};
// The dtypes quantize_linear writes and dequantize_linear reads (besides
// int32): the 8-bit integers, the 16-bit ones of higher-precision
// activations, the float8 types, and the 4- and 2-bit integers and
// float4e2m1 of packed weights (framework/small_types.h).
inline constexpr DataType kLinearQuantizedDtypes[] = {
    kUInt8,          kInt8,       kUInt16,         kInt16, kFloat8E4M3FN,
    kFloat8E4M3FNUZ, kFloat8E5M2, kFloat8E5M2FNUZ, kInt4,  kUInt4,
    kInt2,           kUInt2,      kFloat4E2M1};
// The dtypes of scales (and of the float side of quantize/dequantize).
inline constexpr DataType kScaleDtypes[] = {kFloat32, kFloat16};

// The elements of a float32, float16 or float64 host tensor as floats.
std::vector<float> FloatsOf(const Tensor& tensor);

// The elements of a uint8, int8, uint16, int16, int32, int4, uint4, int2 or
// uint2 host tensor as int32s.
std::vector<int32_t> IntsOf(const Tensor& tensor);

// `value` rounded half to even and saturated to Q's range; NaN gives
// `nan_value` (ONNX leaves it undefined).
template <typename Q>
Q RoundAndSaturate(double value, int32_t nan_value = 0) {
  if (std::isnan(value)) return static_cast<Q>(nan_value);
  // nearbyint rounds in the default mode, to nearest with ties to even.
  const double rounded = std::nearbyint(value);
  if (rounded <= std::numeric_limits<Q>::min()) {
    return std::numeric_limits<Q>::min();
  }
  if (rounded >= std::numeric_limits<Q>::max()) {
    return std::numeric_limits<Q>::max();
  }
  return static_cast<Q>(rounded);
}

// Where element [o, a, i] of a tensor seen as [outer, size, inner] around
// the quantization axis finds its scale and zero point:
// o * outer_stride + (a / block) * axis_stride + i * inner_stride.
struct ParamLayout {
  int64_t outer = 1, size = 1, inner = 1;
  int64_t block = 1;
  int64_t outer_stride = 0, axis_stride = 0, inner_stride = 0;
  int64_t Index(int64_t o, int64_t a, int64_t i) const {
    return o * outer_stride + (a / block) * axis_stride + i * inner_stride;
  }
};

// The layout of a scale of `scale_dims` for a tensor of `dims`: one element
// (per tensor), a 1-D tensor of dims[axis] elements (per axis), or with
// `block_size` > 0 a tensor of dims' rank whose dims[axis] is
// ceil(dims[axis] / block_size) (per block). `axis` is normalized against
// dims' rank. The error says which shapes were expected; `what` names the
// op's input and its shape, e.g. `input "Scale" (variable "s", shape [2])`.
absl::StatusOr<ParamLayout> ParamLayoutOf(const Dims& dims,
                                          const Dims& scale_dims, int64_t axis,
                                          int64_t block_size,
                                          const std::string& what);

// Whether `dims` is [] or [1]: one value per tensor (ONNX models give a
// scale of one shape and its zero point of the other).
bool IsOneElement(const Dims& dims);

// Inference-time checks of a (Scale, ZeroPoint) pair for the input of
// `data_slot`: ZeroPoint (if bound) has Scale's shape, and where the
// shapes are known the layout is one ParamLayoutOf accepts.
absl::Status CheckScaleAndZeroPoint(const InferContext& context,
                                    absl::string_view data_slot,
                                    absl::string_view scale_slot,
                                    absl::string_view zero_point_slot,
                                    int64_t axis, int64_t block_size);

// Checks that the zero point of `zero_slot`, if bound, has the dtype of the
// input of `data_slot` (the integer products' operands).
absl::Status CheckZeroPointDtype(const InferContext& context,
                                 absl::string_view zero_slot,
                                 absl::string_view data_slot);

// Checks that the input of `slot` holds one element (a per-tensor scale or
// zero point) where its shape is known.
absl::Status CheckPerTensor(const InferContext& context,
                            absl::string_view slot);

// Checks that the input of `slot` holds one element or is 1-D of `count`
// elements (a per-row or per-column scale or zero point), where known.
absl::Status CheckOneOrVector(const InferContext& context,
                              absl::string_view slot, int64_t count,
                              absl::string_view per);

// The values of a per-tensor or per-row/column input of `count` entries,
// expanded to `count` entries (an absent input gives `count` copies of
// `absent`).
absl::StatusOr<std::vector<float>> FloatsPer(const KernelContext& context,
                                             absl::string_view slot,
                                             int64_t count);
absl::StatusOr<std::vector<int32_t>> IntsPer(const KernelContext& context,
                                             absl::string_view slot,
                                             int64_t count);

// A float16 product a * b / c as float16 arithmetic gives it (each step
// rounded to half), for requantization multipliers of float16 scales.
float HalfMultiplier(float a, float b, float c);

// The requantization multipliers a_scale[i] * b_scale[j] / y_scale as the
// scales' dtype computes them (float32, or float16 step by step).
float Multiplier(DataType scale_dtype, float a, float b, float y);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_QUANTIZATION_QUANT_PARAMS_H_
