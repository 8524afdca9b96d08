// The integer matrix product shared by matmul_integer and qlinear_matmul:
// numpy matmul shapes (1-D operands, broadcast batch dims) over uint8 or
// int8 operands with zero points, accumulated in int32.
#ifndef SCOPEFLOW_OPERATORS_QUANTIZATION_INTEGER_MATMUL_H_
#define SCOPEFLOW_OPERATORS_QUANTIZATION_INTEGER_MATMUL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {

// The output shape of numpy's matmul of `a` and `b` (-1 dims unknown);
// `describe_a` and `describe_b` name the inputs in the error.
absl::StatusOr<Dims> IntegerMatmulDims(const Dims& a, const Dims& b,
                                       const std::string& describe_a,
                                       const std::string& describe_b);

// The sizes of one product: [m x k] times [k x n], `batches` of them.
struct IntegerMatmulSizes {
  int64_t m = 1, k = 1, n = 1;
  int64_t batches = 1;
  // Per output batch, the matrix index into A and into B.
  std::vector<int64_t> a_batch, b_batch;
};
IntegerMatmulSizes IntegerMatmulSizesOf(const Dims& a, const Dims& b,
                                        const Dims& out);

// acc = (A - a_zero[row]) x (B - b_zero[col]) for every batch, into `acc`
// (batches * m * n int32s). A and B are uint8 or int8. Through oneDNN's
// int8 matmul where it takes the operands (onednn_integer_matmul.h: int8 B,
// one zero point each), else IntegerMatmulLoop.
void IntegerMatmul(const Tensor& a, const Tensor& b,
                   const std::vector<int32_t>& a_zero,
                   const std::vector<int32_t>& b_zero,
                   const IntegerMatmulSizes& sizes, int32_t* acc);

// The same by plain loops, for any operands: each row of A against B,
// accumulated in int32, rows spread over the threads.
void IntegerMatmulLoop(const Tensor& a, const Tensor& b,
                       const std::vector<int32_t>& a_zero,
                       const std::vector<int32_t>& b_zero,
                       const IntegerMatmulSizes& sizes, int32_t* acc);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_QUANTIZATION_INTEGER_MATMUL_H_
