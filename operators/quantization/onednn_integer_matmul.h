// The integer matrix product of integer_matmul.h through oneDNN's int8
// matmul primitive (uint8 or int8 A, int8 B, int32 result, zero points per
// tensor), which uses the CPU's 8-bit dot-product instructions.
#ifndef SCOPEFLOW_OPERATORS_QUANTIZATION_ONEDNN_INTEGER_MATMUL_H_
#define SCOPEFLOW_OPERATORS_QUANTIZATION_ONEDNN_INTEGER_MATMUL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "framework/tensor.h"
#include "operators/quantization/integer_matmul.h"

namespace scopeflow {

// acc = (A - a_zero) x (B - b_zero) over `sizes`' batches, as
// IntegerMatmul computes it, for a B of int8 whose batch is one matrix (a
// weight) or matches A's batch one for one. Unimplemented for other
// operands or where oneDNN has no implementation on this CPU; the caller
// then computes it itself. Primitives are made once per shape and thread
// and kept in a cache of the calling thread: any thread may call this.
absl::Status OneDnnIntegerMatmul(const Tensor& a, const Tensor& b,
                                 int32_t a_zero, int32_t b_zero,
                                 const IntegerMatmulSizes& sizes, int32_t* acc);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_QUANTIZATION_ONEDNN_INTEGER_MATMUL_H_
