// Helpers shared by the shape operators: error wording, dimension
// arithmetic with unknown (-1) dimensions.
#ifndef SCOPEFLOW_OPERATORS_SHAPE_SHAPE_UTIL_H_
#define SCOPEFLOW_OPERATORS_SHAPE_SHAPE_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "operators/strided_copy.h"

namespace scopeflow {
namespace shape_util {

// `input "X" (variable "x") of shape [2, -1]`, or `... of unknown rank` when
// inference does not know the rank yet.
std::string DescribeInput(const InferContext& context, absl::string_view slot,
                          int i = 0);

// Whether every dimension of `info` is known (and so is its rank).
bool FullyKnown(const VarInfo& info);

// `axes` made non-negative for `rank` (each in [-rank, rank)), in the given
// order. Errors name the attribute `attr` and describe input `slot`, and
// reject an axis given twice.
absl::StatusOr<std::vector<int>> NormalizeAxes(const InferContext& context,
                                               absl::string_view slot,
                                               absl::Span<const int32_t> axes,
                                               int rank,
                                               absl::string_view attr);

// One axis, as NormalizeAxes.
absl::StatusOr<int> NormalizeAxisOf(const InferContext& context,
                                    absl::string_view slot, int64_t axis,
                                    int rank, absl::string_view attr = "axis");

// A variable of `dtype` whose rank inference does not know yet.
VarInfo UnknownRank(DataType dtype);

// For a gradient op: OK unless input "Out@GRAD" contradicts `out`, the
// forward op's output as the gradient op's own inputs and attributes give
// it (the dtype, the rank or a dim known on both sides differs). Kernels
// index by these dims, so a wrong gradient must not reach them.
absl::Status CheckOutGrad(const InferContext& context, const VarInfo& out);

// Adds a box of `dims` elements into `dst`: for every index (i_0, ...,
// i_{n-1}) below `dims`,
//   dst[sum_k i_k * dst_strides[k]] += src[sum_k i_k * src_strides[k]],
// offsets in elements. Destination strides may be 0, so that elements of
// `src` that share a destination are summed into it: the gradient of a copy
// that broadcast or repeated its source (expand, tile).
template <typename T>
void AddStrided(T* dst, absl::Span<const int64_t> dst_strides, const T* src,
                absl::Span<const int64_t> src_strides,
                absl::Span<const int64_t> dims) {
  const std::optional<MergedBox> box = MergeBox(dims, dst_strides, src_strides);
  if (!box.has_value()) return;
  const auto& d = box->dims;
  const auto& ds = box->dst_strides;
  const auto& ss = box->src_strides;
  if (d.empty()) {
    *dst += *src;
    return;
  }
  const int inner = static_cast<int>(d.size()) - 1;
  const int64_t n = d[inner], dst_step = ds[inner], src_step = ss[inner];
  absl::InlinedVector<int64_t, 8> index(inner, 0);
  int64_t dst_offset = 0, src_offset = 0;
  while (true) {
    T* row = dst + dst_offset;
    const T* in = src + src_offset;
    if (dst_step == 0) {
      // A reduction: sum the row before touching memory once.
      T total = T(0);
      for (int64_t i = 0; i < n; ++i) total += in[i * src_step];
      *row += total;
    } else {
      for (int64_t i = 0; i < n; ++i) row[i * dst_step] += in[i * src_step];
    }
    int k = inner - 1;
    for (; k >= 0; --k) {
      dst_offset += ds[k];
      src_offset += ss[k];
      if (++index[k] < d[k]) break;
      dst_offset -= ds[k] * d[k];
      src_offset -= ss[k] * d[k];
      index[k] = 0;
    }
    if (k < 0) return;
  }
}

// concat_grad: the input of "X" whose gradient is variable i of "X@GRAD"
// (attribute "grad_inputs" maps them; empty, one to one).
int ConcatGradInputIndex(const Attributes& attrs, int i);

// Makes `out` a view of `in` with the dims `out` was allocated with: the
// kernel of ops that only change dims (reshape, flatten, squeeze,
// unsqueeze).
absl::Status ViewKernel(KernelContext& context);

}  // namespace shape_util
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SHAPE_SHAPE_UTIL_H_
