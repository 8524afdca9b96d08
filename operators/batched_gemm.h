// Batched row-major matrix products for the CPU kernels of matmul and
// matmul_grad: C[b] = alpha * op(A[b]) op(B[b]) + beta * C[b] for every
// batch index b of C, where A's and B's batch dims broadcast against C's as
// numpy's do (aligned from the right, a dim of 1 or a missing one standing
// for every index).
#ifndef SCOPEFLOW_OPERATORS_BATCHED_GEMM_H_
#define SCOPEFLOW_OPERATORS_BATCHED_GEMM_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "framework/tensor.h"

namespace scopeflow {

// The operands as stored, row-major, each of rank 2 or more: op(A) is
// [m x k] (A stored [k x m] if transpose_a), op(B) [k x n], and C holds
// the batch dims A's and B's broadcast to, then [m x n].
struct BatchedGemmShape {
  Dims a, b, c;
  bool transpose_a = false;
  bool transpose_b = false;
};

// How BatchedGemm runs the products. Choose picks; the others are there
// for the tests and the benchmark, which compare them.
enum class BatchedGemmPath {
  // oneDNN's matmul primitive where oneDNN implements the shape on this
  // CPU, otherwise kGemmThreadsOverBatch.
  kChoose,
  // One oneDNN matmul primitive for the whole batch, made once per shape
  // and kept in a cache that all threads share, on no more threads than
  // the batch's multiply-adds are worth (a batch of small products runs on
  // the calling thread alone). Unimplemented where oneDNN has no
  // implementation for the shape on this CPU.
  kOneDnnMatmul,
  // One Gemm (operators/gemm.h) per batch in turn, each spread by oneDNN
  // over the threads: the path before oneDNN's matmul primitive.
  kGemmPerBatch,
  // The batches spread over the threads, each product one single-threaded
  // Gemm.
  kGemmThreadsOverBatch,
};

// C = alpha * op(A) op(B) + beta * C over the batch; beta 0 ignores C's old
// contents. `shape` must be consistent (inner dims equal, C's dims the
// broadcast ones): an InternalError says what is not. float64, which
// oneDNN does not multiply, takes kGemmThreadsOverBatch where `path` names
// a oneDNN one.
absl::Status BatchedGemm(const BatchedGemmShape& shape, float alpha,
                         const float* a, const float* b, float beta, float* c,
                         BatchedGemmPath path = BatchedGemmPath::kChoose);
absl::Status BatchedGemm(const BatchedGemmShape& shape, double alpha,
                         const double* a, const double* b, double beta,
                         double* c,
                         BatchedGemmPath path = BatchedGemmPath::kChoose);

// Offset of the matrix for batch index `b` of `out_batch` (row-major) in
// an operand whose batch dims `in_batch` broadcast against `out_batch`, its
// matrices `matrix_size` elements each.
int64_t BroadcastBatchOffset(int64_t b, absl::Span<const int64_t> out_batch,
                             absl::Span<const int64_t> in_batch,
                             int64_t matrix_size);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_BATCHED_GEMM_H_
