// Batched float32 matrix products through oneDNN's matmul primitive, which
// multiplies a whole batch in one call, broadcast batch dims and stored
// transposes included, spreading the batch and the rows over the threads.
#ifndef SCOPEFLOW_OPERATORS_ONEDNN_MATMUL_H_
#define SCOPEFLOW_OPERATORS_ONEDNN_MATMUL_H_

#include "absl/status/status.h"
#include "operators/batched_gemm.h"

namespace scopeflow {

// C = alpha * op(A) op(B) + beta * C over the batch (batched_gemm.h says
// what `shape` describes; it must be consistent and hold no zero dim), on
// at most `threads` threads (oneDNN fixes a primitive's threads when it is
// made: each count has its own).
// Making a primitive costs from a tenth of a millisecond to several (the
// first one JIT-compiles its kernels), more than a small product, so each
// shape's primitive is made once and kept in a cache shared by every
// thread: callers may run products of any shapes from many threads at
// once. Unimplemented where oneDNN has no implementation for the shape on
// this CPU (remembered too, so that the answer is quick the second time).
absl::Status OneDnnBatchedMatmul(const BatchedGemmShape& shape, float alpha,
                                 const float* a, const float* b, float beta,
                                 float* c, int threads);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ONEDNN_MATMUL_H_
