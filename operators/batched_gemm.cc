#include "operators/batched_gemm.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "operators/gemm.h"
#include "operators/onednn_matmul.h"
#include "platform/mutex.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The fewest multiply-adds worth a thread of their own: about 10
// microseconds of one core's (an AVX-512 core does some 15 billion a
// second), against a few to wake a thread on an idle machine, and many
// more on a loaded one, where the threads of a parallel region wait for
// each other's turns on the cores.
constexpr int64_t kMultiplyAddsWorthAThread = int64_t{1} << 17;

// The threads worth spreading `multiply_adds` over.
int ThreadsWorth(int64_t multiply_adds) {
  return static_cast<int>(std::clamp<int64_t>(
      multiply_adds / kMultiplyAddsWorthAThread, 1, MaxParallelThreads()));
}

absl::Span<const int64_t> BatchOf(const Dims& dims) {
  return absl::MakeConstSpan(dims).first(dims.size() - 2);
}

// The sizes of one product of `shape`, and its batch.
struct ProductSizes {
  int64_t m, k, n, batches;
};

std::string Describe(const BatchedGemmShape& s) {
  return absl::StrCat("[", absl::StrJoin(s.a, ", "), "]",
                      s.transpose_a ? "^T" : "", " x [",
                      absl::StrJoin(s.b, ", "), "]", s.transpose_b ? "^T" : "",
                      " into [", absl::StrJoin(s.c, ", "), "]");
}

// Whether `operand`'s batch dims broadcast against C's `out` (each 1 or
// C's, and no more of them).
bool Broadcasts(absl::Span<const int64_t> operand,
                absl::Span<const int64_t> out) {
  if (operand.size() > out.size()) return false;
  const size_t lead = out.size() - operand.size();
  for (size_t d = 0; d < operand.size(); ++d) {
    if (operand[d] != 1 && operand[d] != out[lead + d]) return false;
  }
  return true;
}

absl::StatusOr<ProductSizes> SizesOf(const BatchedGemmShape& s) {
  if (s.a.size() < 2 || s.b.size() < 2 || s.c.size() < 2) {
    return absl::InternalError(
        absl::StrCat("batched product of rank below 2: ", Describe(s)));
  }
  const int64_t a_rows = s.a[s.a.size() - 2], a_cols = s.a.back();
  const int64_t b_rows = s.b[s.b.size() - 2], b_cols = s.b.back();
  ProductSizes p;
  p.m = s.transpose_a ? a_cols : a_rows;
  p.k = s.transpose_a ? a_rows : a_cols;
  p.n = s.transpose_b ? b_rows : b_cols;
  p.batches = NumElements(BatchOf(s.c));
  const int64_t b_k = s.transpose_b ? b_cols : b_rows;
  if (b_k != p.k || s.c[s.c.size() - 2] != p.m || s.c.back() != p.n ||
      !Broadcasts(BatchOf(s.a), BatchOf(s.c)) ||
      !Broadcasts(BatchOf(s.b), BatchOf(s.c))) {
    return absl::InternalError(
        absl::StrCat("inconsistent batched product: ", Describe(s)));
  }
  return p;
}

// One Gemm per batch: in turn (each Gemm threaded by oneDNN) or with the
// batches spread over the threads.
template <typename T>
absl::Status GemmLoop(const BatchedGemmShape& s, const ProductSizes& p,
                      T alpha, const T* a, const T* b, T beta, T* c,
                      bool threads_over_batch) {
  const auto c_batch = BatchOf(s.c);
  const auto a_batch = BatchOf(s.a);
  const auto b_batch = BatchOf(s.b);
  const int64_t lda = s.a.back(), ldb = s.b.back();
  const int64_t a_size = s.a[s.a.size() - 2] * lda;
  const int64_t b_size = s.b[s.b.size() - 2] * ldb;
  auto product = [&](int64_t i) {
    return Gemm(s.transpose_a, s.transpose_b, p.m, p.n, p.k, alpha,
                a + BroadcastBatchOffset(i, c_batch, a_batch, a_size), lda,
                b + BroadcastBatchOffset(i, c_batch, b_batch, b_size), ldb,
                beta, c + i * p.m * p.n, p.n);
  };
  if (!threads_over_batch) {
    for (int64_t i = 0; i < p.batches; ++i) {
      SF_RETURN_IF_ERROR(product(i));
    }
    return absl::OkStatus();
  }
  Mutex mutex;
  absl::Status status;
  const int64_t grain = std::max<int64_t>(
      1, kMultiplyAddsWorthAThread / std::max<int64_t>(1, p.m * p.n * p.k));
  // Gemm inside a ParallelFor body runs on its thread alone: oneDNN's
  // sgemm keeps to one thread within an OpenMP parallel region.
  ParallelFor(p.batches, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      absl::Status one = product(i);
      if (!one.ok()) {
        MutexLock lock(&mutex);
        status.Update(one);
        return;
      }
    }
  });
  return status;
}

// Runs `shape`'s products on `path`; float64 on oneDNN's paths takes
// kGemmThreadsOverBatch instead.
template <typename T>
absl::Status RunBatchedGemm(const BatchedGemmShape& shape, T alpha,
                            const T* a, const T* b, T beta, T* c,
                            BatchedGemmPath path) {
  SF_ASSIGN_OR_RETURN(const ProductSizes p, SizesOf(shape));
  if (p.batches == 0 || p.m == 0 || p.n == 0) return absl::OkStatus();
  if (p.k == 0) {
    // C = beta * C, which oneDNN would reject the empty operands of. Beta
    // 0 ignores C, as in BLAS.
    T* const end = c + p.batches * p.m * p.n;
    for (T* value = c; value < end; ++value) {
      *value = beta == T(0) ? T(0) : *value * beta;
    }
    return absl::OkStatus();
  }
  if (path == BatchedGemmPath::kGemmPerBatch) {
    return GemmLoop(shape, p, alpha, a, b, beta, c, false);
  }
  if constexpr (std::is_same_v<T, float>) {
    const int threads = ThreadsWorth(p.batches * p.m * p.n * p.k);
    if (path == BatchedGemmPath::kOneDnnMatmul) {
      return OneDnnBatchedMatmul(shape, alpha, a, b, beta, c, threads);
    }
    // A single product: Gemm, oneDNN's sgemm, which multiplies one large
    // matrix a few percent faster than its matmul primitive (and rank-2
    // products stay on the path they always took).
    if (path == BatchedGemmPath::kChoose && p.batches == 1) {
      return GemmLoop(shape, p, alpha, a, b, beta, c, false);
    }
    if (path == BatchedGemmPath::kChoose) {
      const absl::Status status =
          OneDnnBatchedMatmul(shape, alpha, a, b, beta, c, threads);
      if (!absl::IsUnimplemented(status)) return status;
    }
  }
  return GemmLoop(shape, p, alpha, a, b, beta, c, true);
}

}  // namespace

int64_t BroadcastBatchOffset(int64_t b, absl::Span<const int64_t> out_batch,
                             absl::Span<const int64_t> in_batch,
                             int64_t matrix_size) {
  int64_t offset = 0;
  int64_t in_stride = matrix_size;
  const size_t lead = out_batch.size() - in_batch.size();
  for (int i = static_cast<int>(out_batch.size()) - 1; i >= 0; --i) {
    const int64_t index = b % out_batch[i];
    b /= out_batch[i];
    if (i >= static_cast<int>(lead)) {
      const int64_t in_dim = in_batch[i - lead];
      if (in_dim != 1) offset += index * in_stride;
      in_stride *= in_dim;
    }
  }
  return offset;
}

absl::Status BatchedGemm(const BatchedGemmShape& shape, float alpha,
                         const float* a, const float* b, float beta, float* c,
                         BatchedGemmPath path) {
  return RunBatchedGemm(shape, alpha, a, b, beta, c, path);
}

absl::Status BatchedGemm(const BatchedGemmShape& shape, double alpha,
                         const double* a, const double* b, double beta,
                         double* c, BatchedGemmPath path) {
  return RunBatchedGemm(shape, alpha, a, b, beta, c, path);
}

}  // namespace scopeflow
