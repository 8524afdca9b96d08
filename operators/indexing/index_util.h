// Helpers shared by the indexing operators (gather_elements,
// scatter_elements, gather_nd, scatter_nd, top_k, non_zero): reading and
// checking index tensors, and the reductions of the scatter ops.
#ifndef SCOPEFLOW_OPERATORS_INDEXING_INDEX_UTIL_H_
#define SCOPEFLOW_OPERATORS_INDEXING_INDEX_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace indexing {

// For inference: OK unless input `slot` has a dtype other than int32 and
// int64; the error names the slot and the variable.
absl::Status CheckIndexDtype(const InferContext& context,
                             absl::string_view slot);

// For gather_elements and scatter_elements (and their gradients), whose
// input "Index" holds, for each of its elements, a position along
// attribute "axis" of input `data_slot`: checks Index's dtype, that both
// have one rank (at least 1) and that Index is no larger than the data
// along the other axes. The axis made non-negative, or -1 where the rank is
// not known yet.
absl::StatusOr<int> CheckElementsIndex(const InferContext& context,
                                       absl::string_view data_slot);

// Whether two shapes as inference knows them can be the same: true unless
// both ranks are known and differ, or a dimension known in both differs.
bool ShapesAgree(const VarInfo& a, const VarInfo& b);

// "[1, 0]": the index of element `flat` of a row-major tensor of `dims`.
std::string UnravelIndex(int64_t flat, absl::Span<const int64_t> dims);

// The elements of the int32 or int64 input `index_slot`, each made
// non-negative: element j indexes axis axes[j % axes.size()] of a tensor
// of `data_dims` (input `data_slot` of the op, or the one it is the
// gradient of), and must lie in [-n, n) for that axis' size n. An index
// out of range is an InvalidArgument error naming both inputs, their
// variables, the value, where it sits and the range expected.
absl::StatusOr<std::vector<int64_t>> ReadIndices(
    const KernelContext& context, absl::string_view index_slot,
    absl::string_view data_slot, absl::Span<const int64_t> data_dims,
    absl::Span<const int> axes);

// Calls f(j, offset) for each element j (row-major) of a tensor of `dims`,
// where offset = sum over the axes d other than `skip` of j's coordinate
// d times strides[d] (`skip` -1: every axis): where element j's
// counterpart sits in a tensor of `strides`, but for its position along
// axis `skip`, which the caller adds from an index.
template <typename F>
void ForEachOffset(absl::Span<const int64_t> dims,
                   absl::Span<const int64_t> strides, int skip, F&& f) {
  const int64_t count = NumElements(dims);
  if (count == 0) return;
  const int rank = static_cast<int>(dims.size());
  absl::InlinedVector<int64_t, 8> coord(rank, 0);
  int64_t offset = 0;
  for (int64_t j = 0; j < count; ++j) {
    f(j, offset);
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t step = d == skip ? 0 : strides[d];
      if (++coord[d] < dims[d]) {
        offset += step;
        break;
      }
      offset -= step * (dims[d] - 1);
      coord[d] = 0;
    }
  }
}

// For gather_nd and scatter_nd (and their gradients), whose input "Index"
// of shape [B..., M..., K] picks, for each of its rows (its last axis), the
// slice of the data at [b..., row[0], ..., row[K - 1]] for the row's
// `batch_dims` leading (batch) coordinates b: the offset, in elements, of
// each row's slice in a row-major tensor of `data_dims` (input `data_slot`),
// and the slice's size. Errors as ReadIndices.
struct Slices {
  std::vector<int64_t> offsets;
  int64_t size = 0;
};
absl::StatusOr<Slices> SliceOffsets(const KernelContext& context,
                                    absl::string_view data_slot,
                                    absl::Span<const int64_t> data_dims,
                                    int batch_dims);

// How a scatter op combines an update with the element it lands on.
enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// The names of attribute "reduction": "none", "add", "mul", "max", "min".
std::vector<std::string> ReductionNames();

// The attribute "reduction" of the op (checked by OneOf at Prepare).
Reduction ReductionOf(const Attributes& attrs);

// For the gradient ops of the scatter ops: OK for reductions "none" and
// "add", which have gradients here; an Unimplemented error otherwise.
absl::Status CheckDifferentiableReduction(const Attributes& attrs);

// `dst` combined with `update` by `reduction`.
template <typename T>
void Combine(Reduction reduction, T& dst, T update) {
  switch (reduction) {
    case Reduction::kNone:
      dst = update;
      break;
    case Reduction::kAdd:
      dst = static_cast<T>(dst + update);
      break;
    case Reduction::kMul:
      dst = static_cast<T>(dst * update);
      break;
    case Reduction::kMax:
      dst = std::max(dst, update);
      break;
    case Reduction::kMin:
      dst = std::min(dst, update);
      break;
  }
}

// bool has no arithmetic: add is logical or, mul logical and, as ONNX
// Runtime does; max is or and min is and too.
template <>
inline void Combine<bool>(Reduction reduction, bool& dst, bool update) {
  switch (reduction) {
    case Reduction::kNone:
      dst = update;
      break;
    case Reduction::kAdd:
    case Reduction::kMax:
      dst = dst || update;
      break;
    case Reduction::kMul:
    case Reduction::kMin:
      dst = dst && update;
      break;
  }
}

}  // namespace indexing
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_INDEXING_INDEX_UTIL_H_
