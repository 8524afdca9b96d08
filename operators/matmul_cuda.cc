// CUDA kernels of matmul, matmul_grad, fc and fc_grad: the ops are
// declared, with their CPU kernels, in matmul.cc, whose products these
// repeat one for one in cuBLAS. cuBLAS is column-major: a row-major C = A B
// is the column-major C^T = B^T A^T, so every call swaps the operands
// instead of copying them. The handle keeps cuBLAS's default math (no TF32),
// so float32 results agree with the CPU's to rounding. fc's fused relu is
// the relu op's kernel (operators/activation/activation_cuda.h), in place.
#include "operators/matmul_cuda.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "operators/activation/activation_cuda.h"
#include "operators/matmul_shapes.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using cuda::BatchLoop;
using cuda::kMaxBatchLoopDims;

// Partial results of a broadcast input's gradient are summed in scratch
// memory of at most this size, in chunks of at most kMaxChunkItems
// products; past it, each batch adds its product to the gradient in turn.
constexpr int64_t kMaxTempBytes = int64_t{64} << 20;
constexpr int64_t kMaxChunkItems = int64_t{1} << 20;

// The cuBLAS routines of one element type.
template <typename T>
struct Blas;

template <>
struct Blas<float> {
  static cublasStatus_t Gemm(cublasHandle_t h, cublasOperation_t ta,
                             cublasOperation_t tb, int64_t m, int64_t n,
                             int64_t k, const float* alpha, const float* a,
                             int64_t lda, const float* b, int64_t ldb,
                             const float* beta, float* c, int64_t ldc) {
    return cublasSgemm_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                          ldc);
  }
  static cublasStatus_t StridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                       cublasOperation_t tb, int64_t m,
                                       int64_t n, int64_t k, const float* alpha,
                                       const float* a, int64_t lda,
                                       int64_t stride_a, const float* b,
                                       int64_t ldb, int64_t stride_b,
                                       const float* beta, float* c, int64_t ldc,
                                       int64_t stride_c, int64_t count) {
    return cublasSgemmStridedBatched_64(h, ta, tb, m, n, k, alpha, a, lda,
                                        stride_a, b, ldb, stride_b, beta, c,
                                        ldc, stride_c, count);
  }
  static cublasStatus_t Batched(cublasHandle_t h, cublasOperation_t ta,
                                cublasOperation_t tb, int64_t m, int64_t n,
                                int64_t k, const float* alpha,
                                const float* const* a, int64_t lda,
                                const float* const* b, int64_t ldb,
                                const float* beta, float* const* c, int64_t ldc,
                                int64_t count) {
    return cublasSgemmBatched_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb,
                                 beta, c, ldc, count);
  }
  static cublasStatus_t Gemv(cublasHandle_t h, cublasOperation_t t, int64_t m,
                             int64_t n, const float* alpha, const float* a,
                             int64_t lda, const float* x, const float* beta,
                             float* y) {
    return cublasSgemv_64(h, t, m, n, alpha, a, lda, x, 1, beta, y, 1);
  }
};

template <>
struct Blas<double> {
  static cublasStatus_t Gemm(cublasHandle_t h, cublasOperation_t ta,
                             cublasOperation_t tb, int64_t m, int64_t n,
                             int64_t k, const double* alpha, const double* a,
                             int64_t lda, const double* b, int64_t ldb,
                             const double* beta, double* c, int64_t ldc) {
    return cublasDgemm_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                          ldc);
  }
  static cublasStatus_t StridedBatched(
      cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
      int64_t n, int64_t k, const double* alpha, const double* a, int64_t lda,
      int64_t stride_a, const double* b, int64_t ldb, int64_t stride_b,
      const double* beta, double* c, int64_t ldc, int64_t stride_c,
      int64_t count) {
    return cublasDgemmStridedBatched_64(h, ta, tb, m, n, k, alpha, a, lda,
                                        stride_a, b, ldb, stride_b, beta, c,
                                        ldc, stride_c, count);
  }
  static cublasStatus_t Batched(cublasHandle_t h, cublasOperation_t ta,
                                cublasOperation_t tb, int64_t m, int64_t n,
                                int64_t k, const double* alpha,
                                const double* const* a, int64_t lda,
                                const double* const* b, int64_t ldb,
                                const double* beta, double* const* c,
                                int64_t ldc, int64_t count) {
    return cublasDgemmBatched_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb,
                                 beta, c, ldc, count);
  }
  static cublasStatus_t Gemv(cublasHandle_t h, cublasOperation_t t, int64_t m,
                             int64_t n, const double* alpha, const double* a,
                             int64_t lda, const double* x, const double* beta,
                             double* y) {
    return cublasDgemv_64(h, t, m, n, alpha, a, lda, x, 1, beta, y, 1);
  }
};

cublasOperation_t Op(bool transpose) {
  return transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
}

// A row-major C[m x n] = alpha * op(A) op(B) + beta * C, op transposing
// where ta / tb say; rows of A, B and C lie lda, ldb and ldc elements
// apart (as operators/gemm.h's Gemm takes them).
struct Product {
  bool ta, tb;
  int64_t m, n, k;
  int64_t lda, ldb, ldc;
};

template <typename T>
absl::Status RunProduct(CudaContext* cuda, const Product& p, T alpha,
                        const T* a, const T* b, T beta, T* c) {
  return CublasCheck(
      Blas<T>::Gemm(cuda->cublas(), Op(p.tb), Op(p.ta), p.n, p.m, p.k, &alpha,
                    b, p.ldb, a, p.lda, &beta, c, p.ldc),
      "cuBLAS gemm");
}

// How a run of items of a BatchLoop is handed to cuBLAS: one product, a
// strided batch (each operand's matrices evenly apart), or arrays of
// matrix addresses built on the device.
struct BatchPlan {
  enum Kind { kSingle, kStrided, kPointers } kind;
  // kSingle and kStrided: the first item's offsets and the steps between
  // items, per operand.
  int64_t offsets[3] = {0, 0, 0};
  int64_t steps[3] = {0, 0, 0};
};

// `loop` without its dims of size 1, with neighbouring dims merged where
// every operand steps evenly across both (C not counted where
// `ignore_c`: its matrices are packed in item order).
BatchLoop Collapse(const BatchLoop& loop, bool ignore_c) {
  BatchLoop out;
  const int operands = ignore_c ? 2 : 3;
  for (int d = 0; d < loop.rank; ++d) {
    if (loop.sizes[d] == 1) continue;
    bool merge = out.rank > 0;
    for (int j = 0; merge && j < operands; ++j) {
      merge =
          out.strides[j][out.rank - 1] == loop.strides[j][d] * loop.sizes[d];
    }
    if (merge) {
      out.sizes[out.rank - 1] *= loop.sizes[d];
      for (int j = 0; j < 3; ++j) {
        out.strides[j][out.rank - 1] = loop.strides[j][d];
      }
      continue;
    }
    out.sizes[out.rank] = loop.sizes[d];
    for (int j = 0; j < 3; ++j) out.strides[j][out.rank] = loop.strides[j][d];
    ++out.rank;
  }
  return out;
}

// The plan for items [first, first + count) of `loop`; C packed in item
// order where c_item_stride > 0.
BatchPlan PlanBatch(const BatchLoop& loop, int64_t first, int64_t count,
                    int64_t c_item_stride) {
  const BatchLoop c = Collapse(loop, c_item_stride > 0);
  BatchPlan plan;
  const int64_t inner = c.rank == 0 ? 1 : c.sizes[c.rank - 1];
  // Items within one run of the innermost dim are evenly apart: their
  // first offsets come from `first` here, and cuBLAS strides on.
  if (first % inner + count > inner) {
    plan.kind = BatchPlan::kPointers;
    return plan;
  }
  plan.kind = count == 1 ? BatchPlan::kSingle : BatchPlan::kStrided;
  int64_t item = first;
  for (int d = c.rank - 1; d >= 0; --d) {
    const int64_t index = item % c.sizes[d];
    item /= c.sizes[d];
    for (int j = 0; j < 3; ++j) plan.offsets[j] += index * c.strides[j][d];
  }
  for (int j = 0; j < 3 && c.rank > 0; ++j) {
    plan.steps[j] = c.strides[j][c.rank - 1];
  }
  if (c_item_stride > 0) {
    plan.offsets[2] = 0;
    plan.steps[2] = c_item_stride;
  }
  return plan;
}

// Bytes of device memory RunBatch needs for its address arrays.
size_t PointerBytes(const BatchPlan& plan, int64_t count) {
  return plan.kind == BatchPlan::kPointers ? 3 * count * sizeof(void*) : 0;
}

// Runs product `p` for items [first, first + count) of `loop`, whose
// matrices start at a, b and c; `pointers` holds PointerBytes(plan, count).
template <typename T>
absl::Status RunBatch(CudaContext* cuda, const Product& p, T alpha, T beta,
                      const BatchLoop& loop, int64_t first, int64_t count,
                      const T* a, const T* b, T* c, int64_t c_item_stride,
                      void* pointers) {
  const BatchPlan plan = PlanBatch(loop, first, count, c_item_stride);
  switch (plan.kind) {
    case BatchPlan::kSingle:
      return RunProduct<T>(cuda, p, alpha, a + plan.offsets[0],
                           b + plan.offsets[1], beta, c + plan.offsets[2]);
    case BatchPlan::kStrided:
      return CublasCheck(Blas<T>::StridedBatched(
                             cuda->cublas(), Op(p.tb), Op(p.ta), p.n, p.m, p.k,
                             &alpha, b + plan.offsets[1], p.ldb, plan.steps[1],
                             a + plan.offsets[0], p.lda, plan.steps[0], &beta,
                             c + plan.offsets[2], p.ldc, plan.steps[2], count),
                         "cuBLAS strided batched gemm");
    case BatchPlan::kPointers:
      break;
  }
  char* slots = static_cast<char*>(pointers);
  const size_t array_bytes = count * sizeof(void*);
  const T** a_ptrs = reinterpret_cast<const T**>(slots);
  const T** b_ptrs = reinterpret_cast<const T**>(slots + array_bytes);
  T** c_ptrs = reinterpret_cast<T**>(slots + 2 * array_bytes);
  cuda::LaunchBatchPointers<T>(loop, first, count, a, b, c, c_item_stride,
                               a_ptrs, b_ptrs, c_ptrs, cuda->stream());
  SF_RETURN_IF_ERROR(CudaLaunchCheck("matmul batch addresses"));
  return CublasCheck(Blas<T>::Batched(cuda->cublas(), Op(p.tb), Op(p.ta), p.n,
                                      p.m, p.k, &alpha, b_ptrs, p.ldb, a_ptrs,
                                      p.lda, &beta, c_ptrs, p.ldc, count),
                     "cuBLAS batched gemm");
}

// Per dim of `out_batch`, the step between the matrices of an operand with
// batch dims `in_batch` (aligned to the right, as broadcasting aligns
// them) and `matrix_size` elements per matrix: 0 where it is broadcast.
absl::InlinedVector<int64_t, kMaxBatchLoopDims> BroadcastSteps(
    absl::Span<const int64_t> out_batch, absl::Span<const int64_t> in_batch,
    int64_t matrix_size) {
  absl::InlinedVector<int64_t, kMaxBatchLoopDims> steps(out_batch.size(), 0);
  const size_t lead = out_batch.size() - in_batch.size();
  int64_t step = matrix_size;
  for (size_t d = out_batch.size(); d-- > lead;) {
    const int64_t in_dim = in_batch[d - lead];
    if (in_dim != 1) steps[d] = step;
    step *= in_dim;
  }
  return steps;
}

absl::Status Zero(CudaContext* cuda, Tensor* tensor) {
  if (tensor->numel() == 0) return absl::OkStatus();
  return CudaCheck(
      cudaMemsetAsync(tensor->raw_data(), 0, tensor->nbytes(), cuda->stream()),
      "cudaMemsetAsync");
}

template <typename T>
absl::Status Matmul(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();
  const auto [tx, ty, m, k, n, x_cols, y_cols, batches, fold] =
      MatmulSizesOf(context.attrs(), x, y, out->dims());
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  // No terms: cuBLAS would reject the empty operands' leading dims.
  if (k == 0) return Zero(cuda, out);
  const auto out_batch = BatchDims(out->dims());
  if (fold) {
    return RunProduct<T>(cuda,
                         {false, ty, batches * m, n, k, x_cols, y_cols, n},
                         alpha, x.data<T>(), y.data<T>(), T(0), out->data<T>());
  }
  BatchLoop loop;
  loop.rank = static_cast<int>(out_batch.size());
  const auto x_steps =
      BroadcastSteps(out_batch, BatchDims(x.dims()), x.dim(-2) * x_cols);
  const auto y_steps =
      BroadcastSteps(out_batch, BatchDims(y.dims()), y.dim(-2) * y_cols);
  int64_t c_step = m * n;
  for (int d = loop.rank - 1; d >= 0; --d) {
    loop.sizes[d] = out_batch[d];
    loop.strides[0][d] = x_steps[d];
    loop.strides[1][d] = y_steps[d];
    loop.strides[2][d] = c_step;
    c_step *= out_batch[d];
  }
  const size_t pointer_bytes =
      PointerBytes(PlanBatch(loop, 0, batches, 0), batches);
  SF_ASSIGN_OR_RETURN(void* pointers, cuda->Workspace(pointer_bytes));
  return RunBatch<T>(cuda, {tx, ty, m, n, k, x_cols, y_cols, n}, alpha, T(0),
                     loop, 0, batches, x.data<T>(), y.data<T>(), out->data<T>(),
                     0, pointers);
}

// One operand of the products giving an input's gradient: its data and,
// per dim of Out's batch, the step between its matrices.
template <typename T>
struct GradOperand {
  const T* data;
  absl::InlinedVector<int64_t, kMaxBatchLoopDims> steps;
};

// An input's gradient `grad` (batch dims `in_batch`, `in_size` elements per
// matrix): for each batch of Out, the product `p` of `a` and `b`'s matrices
// of that batch, summed over the batches the input was broadcast along.
// As in the CPU kernel, each product is one GEMM with transpose flags.
template <typename T>
absl::Status BatchedGrad(CudaContext* cuda, const Product& p, T alpha,
                         const GradOperand<T>& a, const GradOperand<T>& b,
                         absl::Span<const int64_t> out_batch,
                         absl::Span<const int64_t> in_batch, int64_t in_size,
                         T* grad) {
  const int64_t batches = NumElements(out_batch);
  const auto grad_steps = BroadcastSteps(out_batch, in_batch, in_size);
  // The loop runs over the dims the input was broadcast along (summed)
  // first and over its own dims after, so that items k apart are the
  // terms of one sum, where k is the number of the input's matrices.
  BatchLoop loop;
  int64_t kept = 1;
  const size_t lead = out_batch.size() - in_batch.size();
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t d = 0; d < out_batch.size(); ++d) {
      const int64_t in_dim = d < lead ? 1 : in_batch[d - lead];
      const bool summed = in_dim == 1 && out_batch[d] != 1;
      if (summed != (pass == 0)) continue;
      if (!summed) kept *= out_batch[d];
      loop.sizes[loop.rank] = out_batch[d];
      loop.strides[0][loop.rank] = a.steps[d];
      loop.strides[1][loop.rank] = b.steps[d];
      loop.strides[2][loop.rank] = grad_steps[d];
      ++loop.rank;
    }
  }
  const int64_t terms = batches / kept;
  if (terms == 1) {
    const size_t pointer_bytes =
        PointerBytes(PlanBatch(loop, 0, batches, 0), batches);
    SF_ASSIGN_OR_RETURN(void* pointers, cuda->Workspace(pointer_bytes));
    return RunBatch<T>(cuda, p, alpha, T(0), loop, 0, batches, a.data, b.data,
                       grad, 0, pointers);
  }
  // Terms summed per pass: packed in scratch memory and added up after, or,
  // where one term's products alone fill the scratch, each term's products
  // added to the gradient by cuBLAS (beta = 1).
  const int64_t term_bytes = kept * in_size * static_cast<int64_t>(sizeof(T));
  const int64_t chunk = std::max<int64_t>(
      1, std::min({terms, kMaxTempBytes / term_bytes, kMaxChunkItems / kept}));
  const bool packed = chunk > 1;
  size_t pointer_bytes = 0;
  for (int64_t t = 0; t < terms; t += chunk) {
    const int64_t count = std::min(chunk, terms - t) * kept;
    pointer_bytes = std::max(
        pointer_bytes,
        PointerBytes(PlanBatch(loop, t * kept, count, in_size), count));
  }
  // Offsets in the scratch memory are kept 256-byte aligned, as cuBLAS
  // prefers its operands.
  const size_t temp_bytes =
      packed ? (static_cast<size_t>(chunk * term_bytes) + 255) / 256 * 256 : 0;
  SF_ASSIGN_OR_RETURN(void* scratch,
                      cuda->Workspace(temp_bytes + pointer_bytes));
  T* temp = static_cast<T*>(scratch);
  void* pointers = static_cast<char*>(scratch) + temp_bytes;
  for (int64_t t = 0; t < terms; t += chunk) {
    const int64_t count = std::min(chunk, terms - t);
    SF_RETURN_IF_ERROR(RunBatch<T>(
        cuda, p, alpha, packed || t == 0 ? T(0) : T(1), loop, t * kept,
        count * kept, a.data, b.data, packed ? temp : grad, in_size, pointers));
    if (packed) {
      cuda::LaunchSumTerms<T>(temp, count, kept * in_size, t > 0, grad,
                              cuda->stream());
      SF_RETURN_IF_ERROR(CudaLaunchCheck("matmul gradient sum"));
    }
  }
  return absl::OkStatus();
}

// Out = alpha * op(X) op(Y) per batch:
//   dX = alpha * dOut op(Y)^T, laid out as X (transposed back if tx),
//   dY = alpha * op(X)^T dOut, laid out as Y (transposed back if ty),
// with the products and the folding of matmul.cc's MatmulGrad.
template <typename T>
absl::Status MatmulGrad(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  const Tensor& grad = context.Input("Out@GRAD");
  const auto [tx, ty, m, k, n, x_cols, y_cols, batches, fold] =
      MatmulSizesOf(context.attrs(), x, y, grad.dims());
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  const auto out_batch = BatchDims(grad.dims());
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const GradOperand<T> g{grad.data<T>(),
                         BroadcastSteps(out_batch, out_batch, m * n)};
  const GradOperand<T> xs{
      x.data<T>(),
      BroadcastSteps(out_batch, BatchDims(x.dims()), x.dim(-2) * x_cols)};
  const GradOperand<T> ys{
      y.data<T>(),
      BroadcastSteps(out_batch, BatchDims(y.dims()), y.dim(-2) * y_cols)};
  if (context.HasOutput("X@GRAD")) {
    Tensor* x_grad = context.Output("X@GRAD");
    if (x_grad->numel() == 0) {
      // Nothing to write.
    } else if (n == 0 || batches == 0) {
      SF_RETURN_IF_ERROR(Zero(cuda, x_grad));  // sums of no terms
    } else if (fold) {
      SF_RETURN_IF_ERROR(RunProduct<T>(
          cuda, {false, !ty, batches * m, k, n, n, y_cols, x_cols}, alpha,
          g.data, ys.data, T(0), x_grad->data<T>()));
    } else {
      // tx: dX = op(Y) dOut^T, of X's [k x m] layout.
      const Product p = tx ? Product{ty, true, k, m, n, y_cols, n, x_cols}
                           : Product{false, !ty, m, k, n, n, y_cols, x_cols};
      SF_RETURN_IF_ERROR(BatchedGrad<T>(
          cuda, p, alpha, tx ? ys : g, tx ? g : ys, out_batch,
          BatchDims(x.dims()), x.dim(-2) * x_cols, x_grad->data<T>()));
    }
  }
  if (context.HasOutput("Y@GRAD")) {
    Tensor* y_grad = context.Output("Y@GRAD");
    if (y_grad->numel() == 0) {
      // Nothing to write.
    } else if (m == 0 || batches == 0) {
      SF_RETURN_IF_ERROR(Zero(cuda, y_grad));
    } else if (fold) {
      // dY = X^T dOut over all rows at once (ty: its transpose).
      SF_RETURN_IF_ERROR(
          ty ? RunProduct<T>(
                   cuda, {true, false, n, k, batches * m, n, x_cols, y_cols},
                   alpha, g.data, xs.data, T(0), y_grad->data<T>())
             : RunProduct<T>(
                   cuda, {true, false, k, n, batches * m, x_cols, n, y_cols},
                   alpha, xs.data, g.data, T(0), y_grad->data<T>()));
    } else {
      // ty: dY = dOut^T op(X), of Y's [n x k] layout.
      const Product p = ty ? Product{true, tx, n, k, m, n, x_cols, y_cols}
                           : Product{!tx, false, k, n, m, x_cols, n, y_cols};
      SF_RETURN_IF_ERROR(BatchedGrad<T>(
          cuda, p, alpha, ty ? g : xs, ty ? xs : g, out_batch,
          BatchDims(y.dims()), y.dim(-2) * y_cols, y_grad->data<T>()));
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Fc(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& w = context.Input("W");
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();
  const int64_t k = w.dim(0), n = w.dim(1);
  const int64_t m = out->numel() / n;
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  if (k > 0) {
    SF_RETURN_IF_ERROR(RunProduct<T>(cuda, {false, false, m, n, k, k, n, n},
                                     T(1), x.data<T>(), w.data<T>(), T(0),
                                     out->data<T>()));
  } else {
    SF_RETURN_IF_ERROR(Zero(cuda, out));
  }
  // The bias and the relu in one pass over Out after the product, as on
  // the CPU: one launch where starting Out from the bias (beta 1) and a
  // relu after it took two.
  const T* bias =
      context.HasInput("Bias") ? context.Input("Bias").data<T>() : nullptr;
  const std::string& activation =
      context.attrs().Get<std::string>("activation_type");
  // The CPU's fc also fuses gelu; the fusion pass asks for it on the CPU
  // only.
  SF_CHECK(activation.empty() || activation == "relu",
           "activation_type \"%s\" has no CUDA kernel (only \"\" and "
           "\"relu\")",
           activation);
  const bool relu = activation == "relu";
  cuda::LaunchFinishRows<T>(bias, m, n, relu, out->data<T>(), cuda->stream());
  return CudaLaunchCheck("fc bias and relu");
}

// Out = X' W + Bias with X' = X as [m x k]: dX' = dOut W^T, dW = X'^T dOut,
// dBias = dOut summed over rows (a product with a vector of ones).
template <typename T>
absl::Status FcGrad(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& w = context.Input("W");
  const Tensor& grad = context.Input("Out@GRAD");
  const auto [m, k, n] = FcSizesOf(context.attrs(), x, w);
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const T* g = grad.data<T>();
  if (context.HasOutput("X@GRAD")) {
    Tensor* x_grad = context.Output("X@GRAD");
    if (x_grad->numel() > 0) {
      SF_RETURN_IF_ERROR(
          n == 0 ? Zero(cuda, x_grad)
                 : RunProduct<T>(cuda, {false, true, m, k, n, n, n, k}, T(1), g,
                                 w.data<T>(), T(0), x_grad->data<T>()));
    }
  }
  if (context.HasOutput("W@GRAD")) {
    Tensor* w_grad = context.Output("W@GRAD");
    if (w_grad->numel() > 0) {
      SF_RETURN_IF_ERROR(
          m == 0 ? Zero(cuda, w_grad)
                 : RunProduct<T>(cuda, {true, false, k, n, m, k, n, n}, T(1),
                                 x.data<T>(), g, T(0), w_grad->data<T>()));
    }
  }
  if (context.HasOutput("Bias@GRAD")) {
    Tensor* bias_grad = context.Output("Bias@GRAD");
    if (bias_grad->numel() == 0) return absl::OkStatus();
    if (m == 0) return Zero(cuda, bias_grad);
    SF_ASSIGN_OR_RETURN(void* scratch, cuda->Workspace(m * sizeof(T)));
    T* ones = static_cast<T*>(scratch);
    cuda::LaunchFill<T>(T(1), m, ones, cuda->stream());
    SF_RETURN_IF_ERROR(CudaLaunchCheck("fc_grad ones"));
    // Column-major, dOut is [n x m]: dBias = dOut ones.
    const T one = 1, zero = 0;
    return CublasCheck(Blas<T>::Gemv(cuda->cublas(), CUBLAS_OP_N, n, m, &one, g,
                                     n, ones, &zero, bias_grad->data<T>()),
                       "cuBLAS gemv");
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_KERNEL(matmul, DeviceType::kCUDA, kFloat32, &Matmul<float>);
SF_REGISTER_KERNEL(matmul, DeviceType::kCUDA, kFloat64, &Matmul<double>);
SF_REGISTER_KERNEL(matmul_grad, DeviceType::kCUDA, kFloat32,
                   &MatmulGrad<float>);
SF_REGISTER_KERNEL(matmul_grad, DeviceType::kCUDA, kFloat64,
                   &MatmulGrad<double>);
SF_REGISTER_KERNEL(fc, DeviceType::kCUDA, kFloat32, &Fc<float>);
SF_REGISTER_KERNEL(fc, DeviceType::kCUDA, kFloat64, &Fc<double>);
SF_REGISTER_KERNEL(fc_grad, DeviceType::kCUDA, kFloat32, &FcGrad<float>);
SF_REGISTER_KERNEL(fc_grad, DeviceType::kCUDA, kFloat64, &FcGrad<double>);

}  // namespace scopeflow
