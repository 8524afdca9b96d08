#include "operators/matmul_shapes.h"

#include "framework/tensor.h"

namespace scopeflow {

std::pair<int64_t, int64_t> MatrixDims(const Dims& dims, bool transpose) {
  const int64_t rows = dims[dims.size() - 2];
  const int64_t cols = dims[dims.size() - 1];
  return transpose ? std::make_pair(cols, rows) : std::make_pair(rows, cols);
}

absl::Span<const int64_t> BatchDims(const Dims& dims) {
  return absl::MakeConstSpan(dims).first(dims.size() - 2);
}

MatmulSizes MatmulSizesOf(const Attributes& attrs, const Tensor& x,
                          const Tensor& y, const Dims& out) {
  MatmulSizes s;
  s.tx = attrs.Get<bool>("transpose_x");
  s.ty = attrs.Get<bool>("transpose_y");
  s.m = MatrixDims(x.dims(), s.tx).first;
  s.k = MatrixDims(x.dims(), s.tx).second;
  s.n = MatrixDims(y.dims(), s.ty).second;
  s.x_cols = x.dim(-1);
  s.y_cols = y.dim(-1);
  s.batches = NumElements(BatchDims(out));
  const auto x_batch = BatchDims(x.dims());
  const auto y_batch = BatchDims(y.dims());
  s.fold = !s.tx && NumElements(y_batch) == 1 &&
           x_batch.size() >= y_batch.size() &&
           NumElements(x_batch) == s.batches;
  return s;
}

FcSizes FcSizesOf(const Attributes& attrs, const Tensor& x, const Tensor& w) {
  const int in_num_col_dims = attrs.Get<int32_t>("in_num_col_dims");
  return {NumElements(absl::MakeConstSpan(x.dims()).first(in_num_col_dims)),
          w.dim(0), w.dim(1)};
}

}  // namespace scopeflow
