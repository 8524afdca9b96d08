// The shapes the attention op accepts, and where its kernels find each
// matrix of a batch in memory.
//
// attention computes, for every batch index b,
//   Out[b] = softmax(scale * Q[b] K[b]^T + Mask[b]) V[b]
// with Q[b] of [Lq x D], K[b] of [Lk x D], V[b] of [Lk x Dv]. The operands
// are stored in one of two layouts (attribute "seq_first"):
// - batch first: Q [*B, Lq, D], K [*B, Lk, D], V [*B, Lk, Dv], Out
//   [*B, Lq, Dv]; with "transpose_k", K is stored [*B, D, Lk];
// - sequence first: Q [Lq, *B, D], K [Lk, *B, D], V [Lk, *B, Dv], Out
//   [Lq, *B, Dv], the layout torch's nn.MultiheadAttention holds its heads
//   in before the transposes it exports, so that a fused op reads and
//   writes them in place. K is not transposed in this layout.
// *B are the batch dims (none or more; equal in Q, K and V). Mask, when
// given, broadcasts (numpy's rules) to the scores [*B, Lq, Lk] whatever the
// layout.
#ifndef SCOPEFLOW_OPERATORS_ATTENTION_ATTENTION_SHAPE_H_
#define SCOPEFLOW_OPERATORS_ATTENTION_ATTENTION_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/tensor.h"

namespace scopeflow {

// The dims of attention's inputs (-1: unknown; an unknown dim matches
// anything), and its layout attributes.
struct AttentionInputs {
  Dims q, k, v;
  bool has_mask = false;
  Dims mask;
  bool transpose_k = false;
  bool seq_first = false;
};

// Out's dims, or an InvalidArgument error saying which inputs disagree
// (the head_dim of Q and K, the sequence length of K and V, batch dims,
// ranks, a mask that does not broadcast to the scores). `describe(slot)`
// names an input in the errors (`input "Q" (variable "q", shape [...])`).
absl::StatusOr<Dims> AttentionOutDims(
    const AttentionInputs& inputs,
    absl::FunctionRef<std::string(absl::string_view slot)> describe);

// Where a batch's matrix lies: row i of batch b starts at element
// b * batch_stride + i * row_stride of its tensor; its columns are
// contiguous.
struct MatrixLayout {
  int64_t batch_stride = 0;
  int64_t row_stride = 0;
};

// Everything the kernels index by, from inputs whose dims are all known
// and that AttentionOutDims accepted.
struct AttentionShape {
  int64_t batch = 1;  // the product of the batch dims
  int64_t lq = 0, lk = 0, d = 0, dv = 0;
  // K's layout is of its stored rows: Lk rows of D, or with transpose_k D
  // rows of Lk.
  MatrixLayout q, k, v, out;
  bool transpose_k = false;
  bool has_mask = false;
  // Mask element (b, i, j) is at mask_offset[b] + i * mask_row_stride +
  // j * mask_col_stride (strides 0 along broadcast dims).
  std::vector<int64_t> mask_offset;
  int64_t mask_row_stride = 0;
  int64_t mask_col_stride = 0;
  int64_t mask_numel = 0;
  // Query rows per block of the kernels (attention_cpu.h); 0 lets them
  // choose (tests set it to run several blocks on small inputs).
  int64_t rows_per_block = 0;
};

AttentionShape MakeAttentionShape(const AttentionInputs& inputs);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ATTENTION_ATTENTION_SHAPE_H_
