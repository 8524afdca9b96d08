// Matrix products: matmul (batched, with transpose flags) and fc (matmul
// plus bias).
#include <algorithm>
#include <utility>
#include <vector>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/gemm.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The matrix dims of an input after its transpose flag: (rows, cols).
std::pair<int64_t, int64_t> MatrixDims(const Dims& dims, bool transpose) {
  const int64_t rows = dims[dims.size() - 2];
  const int64_t cols = dims[dims.size() - 1];
  return transpose ? std::make_pair(cols, rows) : std::make_pair(rows, cols);
}

absl::Status InferMatmul(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 2, 8));
  SF_RETURN_IF_ERROR(CheckRank(context, "Y", 2, 8));
  const VarInfo& x = context.Input("X");
  const VarInfo& y = context.Input("Y");
  if (!x.has_dims || !y.has_dims) {
    context.SetOutput("Out", VarInfo{x.dtype, {}, false});
    return absl::OkStatus();
  }
  const auto [m, kx] =
      MatrixDims(x.dims, context.attrs().Get<bool>("transpose_x"));
  const auto [ky, n] =
      MatrixDims(y.dims, context.attrs().Get<bool>("transpose_y"));
  SF_CHECK(kx < 0 || ky < 0 || kx == ky,
           "inner dimensions differ: \"X\" (variable \"%s\") %s gives %d, "
           "\"Y\" (variable \"%s\") %s gives %d",
           context.InputName("X"), DimsToString(x.dims), kx,
           context.InputName("Y"), DimsToString(y.dims), ky);
  absl::StatusOr<Dims> batch =
      BroadcastDims(absl::MakeConstSpan(x.dims).first(x.dims.size() - 2),
                    absl::MakeConstSpan(y.dims).first(y.dims.size() - 2));
  SF_CHECK(batch.ok(), "batch dimensions of \"%s\" and \"%s\": %s",
           context.InputName("X"), context.InputName("Y"),
           batch.status().message());
  Dims out = *batch;
  out.push_back(m);
  out.push_back(n);
  context.SetOutput("Out", 0, x.dtype, out);
  return absl::OkStatus();
}

// Offset of the matrix for output batch index `b` in an input whose batch
// dims broadcast against `out_batch`.
int64_t BatchOffset(int64_t b, absl::Span<const int64_t> out_batch,
                    absl::Span<const int64_t> in_batch, int64_t matrix_size) {
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

template <typename T>
absl::Status Matmul(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  Tensor* out = context.Output("Out");
  const bool tx = context.attrs().Get<bool>("transpose_x");
  const bool ty = context.attrs().Get<bool>("transpose_y");
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  const auto [m, k] = MatrixDims(x.dims(), tx);
  const int64_t n = MatrixDims(y.dims(), ty).second;
  const int64_t x_cols = x.dim(-1), y_cols = y.dim(-1);
  const auto x_batch = absl::MakeConstSpan(x.dims()).first(x.rank() - 2);
  const auto y_batch = absl::MakeConstSpan(y.dims()).first(y.rank() - 2);
  const auto out_batch =
      absl::MakeConstSpan(out->dims()).first(out->rank() - 2);
  const int64_t batches = NumElements(out_batch);
  const T* x_data = x.data<T>();
  const T* y_data = y.data<T>();
  T* out_data = out->data<T>();
  const bool x_single = NumElements(x_batch) == 1;
  // One matrix X against a batch-free Y folds the batch into the rows: a
  // single large product instead of many small ones.
  if (!tx && NumElements(y_batch) == 1 && x_batch.size() >= y_batch.size() &&
      NumElements(x_batch) == batches) {
    return Gemm(false, ty, batches * m, n, k, alpha, x_data, x_cols, y_data,
                y_cols, T(0), out_data, n);
  }
  for (int64_t b = 0; b < batches; ++b) {
    const T* xb = x_single ? x_data
                           : x_data + BatchOffset(b, out_batch, x_batch,
                                                  x.dim(-2) * x_cols);
    const T* yb =
        y_data + BatchOffset(b, out_batch, y_batch, y.dim(-2) * y_cols);
    SF_RETURN_IF_ERROR(Gemm(tx, ty, m, n, k, alpha, xb, x_cols, yb, y_cols,
                            T(0), out_data + b * m * n, n));
  }
  return absl::OkStatus();
}

absl::Status InferFc(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "W"));
  SF_RETURN_IF_ERROR(CheckRank(context, "W", 2, 2));
  const VarInfo& x = context.Input("X");
  const VarInfo& w = context.Input("W");
  const int in_num_col_dims = context.attrs().Get<int32_t>("in_num_col_dims");
  if (!x.has_dims || !w.has_dims) {
    context.SetOutput("Out", VarInfo{x.dtype, {}, false});
    return absl::OkStatus();
  }
  SF_CHECK(in_num_col_dims < static_cast<int>(x.dims.size()),
           "attribute \"in_num_col_dims\" = %d needs \"X\" (variable \"%s\") "
           "of rank above %d, got %s",
           in_num_col_dims, context.InputName("X"), in_num_col_dims,
           DimsToString(x.dims));
  const int64_t k =
      NumElements(absl::MakeConstSpan(x.dims).subspan(in_num_col_dims));
  const bool k_known =
      std::all_of(x.dims.begin() + in_num_col_dims, x.dims.end(),
                  [](int64_t d) { return d >= 0; });
  SF_CHECK(!k_known || w.dims[0] < 0 || k == w.dims[0],
           "\"X\" (variable \"%s\") %s has %d features per row but \"W\" "
           "(variable \"%s\") %s expects %d",
           context.InputName("X"), DimsToString(x.dims), k,
           context.InputName("W"), DimsToString(w.dims), w.dims[0]);
  if (context.HasInput("Bias")) {
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Bias"));
    const VarInfo& bias = context.Input("Bias");
    SF_CHECK(!bias.has_dims || w.dims[1] < 0 ||
                 NumElements(bias.dims) == w.dims[1] ||
                 std::any_of(bias.dims.begin(), bias.dims.end(),
                             [](int64_t d) { return d < 0; }),
             "\"Bias\" (variable \"%s\") %s must hold %d values, one per "
             "column of \"W\"",
             context.InputName("Bias"), DimsToString(bias.dims), w.dims[1]);
  }
  Dims out(x.dims.begin(), x.dims.begin() + in_num_col_dims);
  out.push_back(w.dims[1]);
  context.SetOutput("Out", 0, x.dtype, out);
  return absl::OkStatus();
}

template <typename T>
absl::Status Fc(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& w = context.Input("W");
  Tensor* out = context.Output("Out");
  const int64_t k = w.dim(0), n = w.dim(1);
  const int64_t m = k == 0 ? out->numel() / n : x.numel() / k;
  T* out_data = out->data<T>();
  T beta = 0;
  if (context.HasInput("Bias")) {
    // Start from the bias in every row; the product is added to it.
    const T* bias = context.Input("Bias").data<T>();
    for (int64_t i = 0; i < m; ++i) {
      std::copy(bias, bias + n, out_data + i * n);
    }
    beta = 1;
  }
  return Gemm(false, false, m, n, k, T(1), x.data<T>(), k, w.data<T>(), n, beta,
              out_data, n);
}

}  // namespace

SF_REGISTER_OP(matmul)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Attr("transpose_x", AttrType::kBool, AttrValue(false))
    .Attr("transpose_y", AttrType::kBool, AttrValue(false))
    .Attr("alpha", AttrType::kFloat, AttrValue(1.0f))
    .Infer(InferMatmul)
    .Kernel(DeviceType::kCPU, kFloat32, &Matmul<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Matmul<double>);

SF_REGISTER_OP(fc)
    .Input("X")
    .Input("W")
    .Input("Bias", /*optional=*/true)
    .Output("Out")
    .Attr("in_num_col_dims", AttrType::kInt, AttrValue(1), Positive())
    .Infer(InferFc)
    .Kernel(DeviceType::kCPU, kFloat32, &Fc<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Fc<double>);

}  // namespace scopeflow
