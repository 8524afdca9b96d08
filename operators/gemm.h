// Row-major matrix products for the CPU kernels, through oneDNN.
#ifndef SCOPEFLOW_OPERATORS_GEMM_H_
#define SCOPEFLOW_OPERATORS_GEMM_H_

#include <cstdint>

#include "absl/status/status.h"

namespace scopeflow {

// C[m x n] = alpha * op(A) * op(B) + beta * C, row-major; op transposes when
// asked. lda/ldb/ldc are row strides in elements.
absl::Status Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                  int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc);

// The same for float64 (oneDNN has no double gemm: a cache-blocked loop).
absl::Status Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                  int64_t k, double alpha, const double* a, int64_t lda,
                  const double* b, int64_t ldb, double beta, double* c,
                  int64_t ldc);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_GEMM_H_
