#include "operators/attention/attention_shape.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "operators/batched_gemm.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// An operand seen as a batch of matrices.
struct MatrixView {
  Dims batch;
  int64_t rows = -1;
  int64_t cols = -1;
};

// `dims` (rank >= 2) in `seq_first` layout or not, as described in
// attention_shape.h.
MatrixView ViewOf(const Dims& dims, bool seq_first) {
  const size_t r = dims.size();
  MatrixView view;
  view.cols = dims[r - 1];
  if (seq_first) {
    view.rows = dims[0];
    view.batch.assign(dims.begin() + 1, dims.end() - 1);
  } else {
    view.rows = dims[r - 2];
    view.batch.assign(dims.begin(), dims.end() - 2);
  }
  return view;
}

bool Agree(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

bool AgreeAll(const Dims& a, const Dims& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!Agree(a[i], b[i])) return false;
  }
  return true;
}

MatrixLayout LayoutOf(const MatrixView& view, bool seq_first) {
  if (seq_first) {
    return {view.cols, NumElements(view.batch) * view.cols};
  }
  return {view.rows * view.cols, view.cols};
}

}  // namespace

absl::StatusOr<Dims> AttentionOutDims(
    const AttentionInputs& in,
    absl::FunctionRef<std::string(absl::string_view slot)> describe) {
  SF_CHECK(!(in.transpose_k && in.seq_first),
           "attributes \"transpose_k\" and \"seq_first\" are both set: K is "
           "stored transposed only in the batch-first layout");
  const size_t rank = in.q.size();
  SF_CHECK(rank >= 2 && rank <= 8, "%s: expected rank 2 to 8", describe("Q"));
  for (const auto& [slot, dims] :
       {std::pair<const char*, const Dims*>{"K", &in.k}, {"V", &in.v}}) {
    SF_CHECK(dims->size() == rank, "%s: expected the rank of Q, %d",
             describe(slot), rank);
  }
  const MatrixView q = ViewOf(in.q, in.seq_first);
  MatrixView k = ViewOf(in.k, in.seq_first);
  if (in.transpose_k) std::swap(k.rows, k.cols);
  const MatrixView v = ViewOf(in.v, in.seq_first);
  SF_CHECK(AgreeAll(q.batch, k.batch) && AgreeAll(q.batch, v.batch),
           "batch dimensions differ: %s has %s, %s has %s, %s has %s",
           describe("Q"), DimsToString(q.batch), describe("K"),
           DimsToString(k.batch), describe("V"), DimsToString(v.batch));
  SF_CHECK(Agree(q.cols, k.cols), "head_dim differs: %s has %d, %s has %d%s",
           describe("Q"), q.cols, describe("K"), k.cols,
           in.transpose_k ? " (K is stored transposed, [..., D, Lk])" : "");
  SF_CHECK(Agree(k.rows, v.rows),
           "sequence lengths differ: %s has %d keys, %s has %d values",
           describe("K"), k.rows, describe("V"), v.rows);
  Dims batch = q.batch;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] < 0) batch[i] = std::max(k.batch[i], v.batch[i]);
  }
  if (in.has_mask) {
    Dims scores = batch;
    scores.push_back(q.rows);
    scores.push_back(k.rows < 0 ? v.rows : k.rows);
    bool broadcasts = in.mask.size() <= scores.size();
    for (size_t i = 0; broadcasts && i < in.mask.size(); ++i) {
      const int64_t m = in.mask[in.mask.size() - 1 - i];
      const int64_t s = scores[scores.size() - 1 - i];
      broadcasts = m == 1 || Agree(m, s);
    }
    SF_CHECK(broadcasts, "%s does not broadcast to the scores %s",
             describe("Mask"), DimsToString(scores));
  }
  Dims out;
  if (in.seq_first) out.push_back(q.rows);
  out.insert(out.end(), batch.begin(), batch.end());
  if (!in.seq_first) out.push_back(q.rows);
  out.push_back(v.cols);
  return out;
}

AttentionShape MakeAttentionShape(const AttentionInputs& in) {
  const MatrixView q = ViewOf(in.q, in.seq_first);
  const MatrixView k = ViewOf(in.k, in.seq_first);
  const MatrixView v = ViewOf(in.v, in.seq_first);
  AttentionShape s;
  s.batch = NumElements(q.batch);
  s.lq = q.rows;
  s.d = q.cols;
  s.lk = v.rows;
  s.dv = v.cols;
  s.transpose_k = in.transpose_k;
  s.q = LayoutOf(q, in.seq_first);
  s.k = LayoutOf(k, in.seq_first);
  s.v = LayoutOf(v, in.seq_first);
  MatrixView out{q.batch, s.lq, s.dv};
  s.out = LayoutOf(out, in.seq_first);
  s.has_mask = in.has_mask;
  if (in.has_mask) {
    // The mask padded with leading 1s to the scores' rank.
    Dims mask(q.batch.size() + 2 - in.mask.size(), 1);
    mask.insert(mask.end(), in.mask.begin(), in.mask.end());
    const int64_t mask_rows = mask[mask.size() - 2];
    const int64_t mask_cols = mask.back();
    s.mask_row_stride = mask_rows == 1 ? 0 : mask_cols;
    s.mask_col_stride = mask_cols == 1 ? 0 : 1;
    s.mask_numel = NumElements(mask);
    const Dims mask_batch(mask.begin(), mask.end() - 2);
    s.mask_offset.resize(s.batch);
    for (int64_t b = 0; b < s.batch; ++b) {
      s.mask_offset[b] =
          BroadcastBatchOffset(b, q.batch, mask_batch, mask_rows * mask_cols);
    }
  }
  return s;
}

}  // namespace scopeflow
