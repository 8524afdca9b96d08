// The CPU kernels of attention and attention_grad, on raw buffers laid out
// as an AttentionShape says (attention_shape.h).
//
// Neither materialises the score matrix: the work is split into blocks of
// a few query rows of one batch index (RowsPerBlock), and each block's
// scores [rows x Lk] live in a buffer of the thread working on it, where
// the mask is added, the softmax taken and the product with V made while
// they are in the cache. The products go through Gemm (operators/gemm.h,
// oneDNN's sgemm), which reads the strided operands where they lie.
//
// Thread-safe: any number of calls may run at once (each thread keeps its
// own buffers).
#ifndef SCOPEFLOW_OPERATORS_ATTENTION_ATTENTION_CPU_H_
#define SCOPEFLOW_OPERATORS_ATTENTION_ATTENTION_CPU_H_

#include <cstdint>

#include "absl/status/status.h"
#include "operators/attention/attention_shape.h"

namespace scopeflow {

// Query rows per block where AttentionShape::rows_per_block is 0: the
// fewest blocks of at most max(16, 64Ki / Lk) rows, the rows spread evenly
// over them (no short tail). A block's scores then take at most 256 KiB of
// floats, which a core's L2 cache holds beside the blocks of Q and the
// output and all of K and V. Fewer blocks pay: each block's products
// repack K and V.
int64_t RowsPerBlock(const AttentionShape& shape);

// Out = softmax(scale * Q K^T + Mask) V; `mask` may be null where the
// shape has none.
template <typename T>
absl::Status AttentionForward(const AttentionShape& shape, T scale, const T* q,
                              const T* k, const T* v, const T* mask, T* out);

// The gradients of AttentionForward's output `out` given its gradient
// `out_grad`: each of q_grad, k_grad, v_grad, mask_grad, scale_grad (one
// element, of `scale`) may be null (not wanted); they are laid out as their
// inputs. The probabilities are recomputed block by block, as the forward
// made them.
template <typename T>
absl::Status AttentionBackward(const AttentionShape& shape, T scale, const T* q,
                               const T* k, const T* v, const T* mask,
                               const T* out, const T* out_grad, T* q_grad,
                               T* k_grad, T* v_grad, T* mask_grad,
                               T* scale_grad);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ATTENTION_ATTENTION_CPU_H_
