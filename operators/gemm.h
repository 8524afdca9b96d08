// Row-major matrix products for the CPU kernels, through oneDNN.
#ifndef SCOPEFLOW_OPERATORS_GEMM_H_
#define SCOPEFLOW_OPERATORS_GEMM_H_

#include <cstdint>

#include "absl/status/status.h"
#include "platform/allocator.h"

namespace scopeflow {

// C[m x n] = alpha * op(A) * op(B) + beta * C, row-major; op transposes when
// asked. lda/ldb/ldc are row strides in elements.
//
// `b_buffer`, if given, is the allocation B lies in (a weight's buffer).
// Where Gemm copies B before the product (gemm.cc says when), it then keeps
// the copy with that allocation for later products of the same contents:
// from the second product of a version of the contents on, the copy is not
// made again (platform/kept_copies.h).
absl::Status Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                  int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc, const Allocation* b_buffer = nullptr);

// The same for float64 (oneDNN has no double gemm: a cache-blocked loop,
// which reads B where it lies: `b_buffer` is not used).
absl::Status Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                  int64_t k, double alpha, const double* a, int64_t lda,
                  const double* b, int64_t ldb, double beta, double* c,
                  int64_t ldc, const Allocation* b_buffer = nullptr);

// Whether Gemm copies a B of k x n floats, rows `ldb` apart, before a product
// of m rows on this machine (for tests and benchmarks).
bool GemmCopiesB(bool transpose_b, int64_t m, int64_t n, int64_t k,
                 int64_t ldb);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_GEMM_H_
