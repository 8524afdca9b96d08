// The shapes of matmul and fc as their kernels on either device read them:
// matrix and batch dims, the sizes of the products, and when a batch of X
// against one matrix Y folds into a single product.
#ifndef SCOPEFLOW_OPERATORS_MATMUL_SHAPES_H_
#define SCOPEFLOW_OPERATORS_MATMUL_SHAPES_H_

#include <cstdint>
#include <utility>

#include "absl/types/span.h"
#include "framework/attribute.h"
#include "framework/tensor.h"

namespace scopeflow {

// The matrix dims of an input after its transpose flag: (rows, cols).
std::pair<int64_t, int64_t> MatrixDims(const Dims& dims, bool transpose);

// The batch dims of a matmul operand: all but its last two.
absl::Span<const int64_t> BatchDims(const Dims& dims);

// A matmul of X and Y (attributes transpose_x and transpose_y) writing
// (or reading the gradient of) Out of dims `out`: op(X) is [m x k], op(Y)
// [k x n], and Out holds `batches` products of [m x n].
struct MatmulSizes {
  bool tx, ty;
  int64_t m, k, n;
  // The row lengths of X and Y as stored.
  int64_t x_cols, y_cols;
  int64_t batches;
  // A batch of X against one matrix Y (and no transpose of X): one product
  // of batches * m rows instead of a batch of products.
  bool fold;
};
MatmulSizes MatmulSizesOf(const Attributes& attrs, const Tensor& x,
                          const Tensor& y, const Dims& out);

// fc_grad's X as [m x k] (its first in_num_col_dims dims as rows) against
// W [k x n].
struct FcSizes {
  int64_t m, k, n;
};
FcSizes FcSizesOf(const Attributes& attrs, const Tensor& x, const Tensor& w);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_MATMUL_SHAPES_H_
