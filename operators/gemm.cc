#include "operators/gemm.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>

#include "absl/strings/str_format.h"

namespace scopeflow {

absl::Status Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                  int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc) {
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {
    // The product is empty, so C = beta * C; oneDNN would reject the zero
    // leading dimension an empty operand has. Beta 0 ignores C, as in BLAS.
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        c[i * ldc + j] = beta == 0 ? 0.0f : c[i * ldc + j] * beta;
      }
    }
    return absl::OkStatus();
  }
  const dnnl_status_t status =
      dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k,
                 alpha, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success) {
    return absl::InternalError(
        absl::StrFormat("oneDNN sgemm of %dx%dx%d failed with status %d", m, n,
                        k, static_cast<int>(status)));
  }
  return absl::OkStatus();
}

absl::Status Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                  int64_t k, double alpha, const double* a, int64_t lda,
                  const double* b, int64_t ldb, double beta, double* c,
                  int64_t ldc) {
  // As in BLAS, beta 0 ignores C's old contents: a fresh output buffer may
  // hold anything, NaN included, and 0 * NaN would keep it.
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      c[i * ldc + j] = beta == 0 ? 0.0 : c[i * ldc + j] * beta;
    }
  }
  constexpr int64_t kBlock = 64;
  for (int64_t p0 = 0; p0 < k; p0 += kBlock) {
    const int64_t p1 = std::min(k, p0 + kBlock);
    for (int64_t i = 0; i < m; ++i) {
      double* c_row = c + i * ldc;
      for (int64_t p = p0; p < p1; ++p) {
        const double a_ip =
            alpha * (transpose_a ? a[p * lda + i] : a[i * lda + p]);
        if (transpose_b) {
          for (int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b[j * ldb + p];
        } else {
          const double* b_row = b + p * ldb;
          for (int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace scopeflow
