#include "operators/gemm.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "platform/parallel.h"

namespace scopeflow {
namespace {

// oneDNN 2.6's sgemm multiplies products with few rows or columns (the
// batches of inference) without packing B first: its kernels read B's rows
// where they are. When those rows lie a multiple of 4 KiB apart (1024
// floats: any layer 1024 or 2048 wide), the rows read together fall into
// the same cache sets and evict each other: with oneDNN's AVX2 kernels the
// product runs at half speed, with its AVX-512 kernels on an Intel Xeon
// (Emerald Rapids) 10-45% slower at 4 to 64 rows (docs/PERFORMANCE.md,
// "Matrix products with rows 4 KiB apart"). So
// Gemm first copies B to rows one cache line further apart, which costs
// one pass over B (none for weights, whose copy is kept between runs).
constexpr int64_t kCacheAliasingStride = 1024;  // floats: 4 KiB
constexpr int64_t kPaddedStrideExtra = 16;      // floats: one cache line
// Below this many rows of C the copy costs about what it saves.
constexpr int64_t kFewestRowsToPad = 8;
// Copies up to this size stay with the thread for its next product (a
// serving thread keeps one of at most 16 MiB); larger ones are freed after
// their product, and beyond the second limit B is used as it is rather
// than doubled in memory.
constexpr int64_t kMostFloatsKept = int64_t{4} << 20;    // 16 MiB
constexpr int64_t kMostFloatsToPad = int64_t{64} << 20;  // 256 MiB

// oneDNN 2.6 takes the path that reads B in place where 1/m + 1/n reaches
// this (its gemm driver's own threshold for AVX2): larger products pack B.
bool ReadsBInPlace(int64_t m, int64_t n) {
  return 1.0 / static_cast<double>(m) + 1.0 / static_cast<double>(n) >= 0.0038;
}

bool ShouldPadB(bool transpose_b, int64_t m, int64_t n, int64_t k,
                int64_t ldb) {
  return !transpose_b && ldb % kCacheAliasingStride == 0 &&
         m >= kFewestRowsToPad &&
         k * (ldb + kPaddedStrideExtra) <= kMostFloatsToPad &&
         ReadsBInPlace(m, n);
}

// B (k rows of n floats, rows ldb apart) copied to `padded`, rows
// `padded_ldb` apart.
void CopyRows(const float* b, int64_t k, int64_t n, int64_t ldb, float* padded,
              int64_t padded_ldb) {
  // Rows of 4 KiB or more: a few hundred are worth a thread.
  ParallelFor(k, 256, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      std::memcpy(padded + row * padded_ldb, b + row * ldb, n * sizeof(float));
    }
  });
}

// B copied to rows `padded_ldb` apart: into a buffer the calling thread
// keeps, or, for a copy larger than kMostFloatsKept, into `temporary`.
const float* PaddedCopy(const float* b, int64_t k, int64_t n, int64_t ldb,
                        int64_t padded_ldb, std::vector<float>* temporary) {
  thread_local std::vector<float> kept;
  const int64_t size = k * padded_ldb;
  std::vector<float>& buffer = size <= kMostFloatsKept ? kept : *temporary;
  if (buffer.size() < static_cast<size_t>(size)) buffer.resize(size);
  CopyRows(b, k, n, ldb, buffer.data(), padded_ldb);
  return buffer.data();
}

// The padded copy of B kept with `buffer` (see KeptCopyOf): a weight read
// once per run is asked for again on the next run; a training step's
// weights change before that. Null where no copy is kept.
std::shared_ptr<const Allocation> KeptPaddedCopy(const Allocation& buffer,
                                                 const float* b, int64_t k,
                                                 int64_t n, int64_t ldb,
                                                 int64_t padded_ldb) {
  const char* const begin = static_cast<const char*>(buffer.data());
  const char* const first = reinterpret_cast<const char*>(b);
  if (begin == nullptr || first < begin || first >= begin + buffer.size()) {
    return nullptr;
  }
  const KeptCopyKey key{static_cast<size_t>(first - begin), k, n, ldb};
  return KeptCopyOf(
      buffer, key, k * padded_ldb * sizeof(float), [&](void* copy) {
        CopyRows(b, k, n, ldb, static_cast<float*>(copy), padded_ldb);
      });
}

}  // namespace

bool GemmCopiesB(bool transpose_b, int64_t m, int64_t n, int64_t k,
                 int64_t ldb) {
  return ShouldPadB(transpose_b, m, n, k, ldb);
}

absl::Status Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                  int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc, const Allocation* b_buffer) {
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
  std::vector<float> temporary;
  std::shared_ptr<const Allocation> kept;
  if (ShouldPadB(transpose_b, m, n, k, ldb)) {
    const int64_t padded_ldb = ldb + kPaddedStrideExtra;
    if (b_buffer != nullptr) {
      kept = KeptPaddedCopy(*b_buffer, b, k, n, ldb, padded_ldb);
    }
    b = kept != nullptr ? static_cast<const float*>(kept->data())
                        : PaddedCopy(b, k, n, ldb, padded_ldb, &temporary);
    ldb = padded_ldb;
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
                  int64_t ldc, const Allocation* b_buffer) {
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
