// det: ONNX's Det. The determinant of each square matrix in the last two
// axes of X (float32, float64; [..., M, M] -> [...]), by LU decomposition
// with partial pivoting, computed in double. A 0x0 matrix has determinant
// 1, the empty product.
//
// det_grad reads X and Out@GRAD and writes X@GRAD = Out@GRAD * cofactors
// of X (d det / d X_ij is the (i, j) cofactor). Where the LU has no zero
// pivot the cofactors are det(X) * inv(X)^T; a singular matrix, whose
// inverse does not exist, gets each cofactor as the signed determinant of
// its minor.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kDetDtypes[] = {kFloat32, kFloat64};

// X's matrices must be square where their sizes are known.
absl::Status CheckSquare(const InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kDetDtypes));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 2, 64));
  const VarInfo& x = context.Input("X");
  if (!x.has_dims) return absl::OkStatus();
  const int64_t rows = x.dims[x.dims.size() - 2];
  const int64_t cols = x.dims[x.dims.size() - 1];
  SF_CHECK(rows < 0 || cols < 0 || rows == cols,
           "%s: expected square matrices in the last two axes",
           DescribeInputShape(context, "X"));
  return absl::OkStatus();
}

absl::Status InferDet(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSquare(context));
  const VarInfo& x = context.Input("X");
  VarInfo out;
  out.dtype = x.dtype;
  out.has_dims = x.has_dims;
  if (x.has_dims) out.dims.assign(x.dims.begin(), x.dims.end() - 2);
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

// The LU decomposition of an n x n matrix `a` (row-major, overwritten by L
// below the diagonal and U on and above it) with partial pivoting; returns
// the determinant. `pivot` gets each step's row, for solving.
double LuDecompose(std::vector<double>& a, int64_t n,
                   std::vector<int64_t>& pivot) {
  double det = 1;
  pivot.resize(n);
  for (int64_t k = 0; k < n; ++k) {
    int64_t best = k;
    for (int64_t i = k + 1; i < n; ++i) {
      if (std::fabs(a[i * n + k]) > std::fabs(a[best * n + k])) best = i;
    }
    pivot[k] = best;
    if (best != k) {
      std::swap_ranges(a.begin() + k * n, a.begin() + (k + 1) * n,
                       a.begin() + best * n);
      det = -det;
    }
    const double p = a[k * n + k];
    det *= p;
    if (p == 0) continue;  // The column is zero below too: singular.
    for (int64_t i = k + 1; i < n; ++i) {
      const double f = a[i * n + k] / p;
      a[i * n + k] = f;
      for (int64_t j = k + 1; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
    }
  }
  return det;
}

// The size of X's square matrices; inference checks this where the shape
// is known before the run.
absl::StatusOr<int64_t> MatrixSize(const KernelContext& context,
                                   const Tensor& x) {
  const int64_t n = x.dim(x.rank() - 1);
  SF_CHECK(x.dim(x.rank() - 2) == n,
           "input \"X\" (variable \"%s\", shape %s): expected square "
           "matrices in the last two axes",
           context.InputName("X"), DimsToString(x.dims()));
  return n;
}

template <typename T>
std::vector<double> MatrixAt(const T* x, int64_t m, int64_t n) {
  return std::vector<double>(x + m * n * n, x + (m + 1) * n * n);
}

template <typename T>
absl::Status DetKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const int64_t n, MatrixSize(context, x));
  Tensor* out = context.Output("Out");
  const T* in = x.data<T>();
  T* y = out->data<T>();
  std::vector<int64_t> pivot;
  for (int64_t m = 0; m < out->numel(); ++m) {
    std::vector<double> a = MatrixAt(in, m, n);
    y[m] = static_cast<T>(LuDecompose(a, n, pivot));
  }
  return absl::OkStatus();
}

// The cofactor matrix of the n x n matrix `a`: C_ij = (-1)^(i+j) det of a
// without row i and column j.
std::vector<double> Cofactors(const std::vector<double>& a, int64_t n) {
  std::vector<double> c(n * n);
  std::vector<int64_t> pivot;
  // det(a) inv(a)^T when a is invertible: column j of inv(a) solves
  // a v = e_j, so C_ij = det * inv_ji.
  std::vector<double> lu = a;
  const double det = LuDecompose(lu, n, pivot);
  if (det != 0 && std::isfinite(det)) {
    for (int64_t j = 0; j < n; ++j) {
      std::vector<double> v(n, 0);
      v[j] = 1;
      for (int64_t k = 0; k < n; ++k) std::swap(v[k], v[pivot[k]]);
      for (int64_t i = 0; i < n; ++i) {  // L has a unit diagonal.
        for (int64_t k = 0; k < i; ++k) v[i] -= lu[i * n + k] * v[k];
      }
      for (int64_t i = n - 1; i >= 0; --i) {
        for (int64_t k = i + 1; k < n; ++k) v[i] -= lu[i * n + k] * v[k];
        v[i] /= lu[i * n + i];
      }
      for (int64_t i = 0; i < n; ++i) c[j * n + i] = det * v[i];
    }
    return c;
  }
  std::vector<double> minor((n - 1) * (n - 1));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t w = 0;
      for (int64_t r = 0; r < n; ++r) {
        if (r == i) continue;
        for (int64_t s = 0; s < n; ++s) {
          if (s != j) minor[w++] = a[r * n + s];
        }
      }
      const double d = LuDecompose(minor, n - 1, pivot);
      c[i * n + j] = (i + j) % 2 == 0 ? d : -d;
    }
  }
  return c;
}

absl::Status InferDetGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSquare(context));
  const VarInfo& x = context.Input("X");
  const VarInfo& g = context.Input("Out@GRAD");
  if (x.has_dims && g.has_dims) {
    const Dims batch(x.dims.begin(), x.dims.end() - 2);
    SF_CHECK(g.dims == batch && g.dtype == x.dtype,
             "input \"Out@GRAD\" (variable \"%s\") is %s %s: expected %s %s, "
             "det's output for %s",
             context.InputName("Out@GRAD"), DataTypeName(g.dtype),
             DimsToString(g.dims), DataTypeName(x.dtype), DimsToString(batch),
             DescribeInputShape(context, "X"));
  }
  return GradsLikeInputs({"X"})(context);
}

template <typename T>
absl::Status DetGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const int64_t n, MatrixSize(context, x));
  const int64_t matrices = x.numel() == 0 ? 0 : x.numel() / (n * n);
  SF_CHECK(context.Input("Out@GRAD").numel() >= matrices,
           "input \"Out@GRAD\" (variable \"%s\") holds %d elements: "
           "expected one per matrix of input \"X\", %d",
           context.InputName("Out@GRAD"), context.Input("Out@GRAD").numel(),
           matrices);
  const T* in = x.data<T>();
  const T* g = context.Input("Out@GRAD").data<T>();
  T* dx = context.Output("X@GRAD")->data<T>();
  for (int64_t m = 0; m < matrices; ++m) {
    const std::vector<double> c = Cofactors(MatrixAt(in, m, n), n);
    for (int64_t k = 0; k < n * n; ++k) {
      dx[m * n * n + k] = static_cast<T>(g[m] * c[k]);
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(det)
    .Input("X")
    .Output("Out")
    .Infer(InferDet)
    .Grad(GradSpec("det_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &DetKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DetKernel<double>);

SF_REGISTER_OP(det_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(InferDetGrad)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &DetGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DetGradKernel<double>);

}  // namespace scopeflow
