// Matrix products: matmul (batched, with transpose flags) and fc (matmul
// plus bias, optionally followed by relu or gelu), and their gradients: single
// products through Gemm (operators/gemm.h), batches of them through
// BatchedGemm (operators/batched_gemm.h).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/activation/gelu_math.h"
#include "operators/batched_gemm.h"
#include "operators/common.h"
#include "operators/gemm.h"
#include "operators/matmul_shapes.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"
#include "platform/vector_clones.h"

namespace scopeflow {
namespace {

VarInfo UnknownRank(DataType dtype) {
  VarInfo info;
  info.dtype = dtype;
  return info;
}

absl::StatusOr<VarInfo> MatmulOutInfo(const InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 2, 8));
  SF_RETURN_IF_ERROR(CheckRank(context, "Y", 2, 8));
  const VarInfo& x = context.Input("X");
  const VarInfo& y = context.Input("Y");
  if (!x.has_dims || !y.has_dims) return UnknownRank(x.dtype);
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
  return VarInfo{x.dtype, std::move(out), true};
}

absl::Status InferMatmul(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, MatmulOutInfo(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

// For a gradient op: OK unless input "Out@GRAD" contradicts `out`, the
// forward output its inputs and attributes give (dtype, rank or a known
// dim differs); the kernels index Out@GRAD by those dims.
absl::Status CheckOutGrad(const InferContext& context, const VarInfo& out) {
  const VarInfo& grad = context.Input("Out@GRAD");
  bool same = grad.dtype == out.dtype;
  if (grad.has_dims && out.has_dims) {
    same = same && grad.dims.size() == out.dims.size();
    for (size_t d = 0; same && d < grad.dims.size(); ++d) {
      same = grad.dims[d] < 0 || out.dims[d] < 0 || grad.dims[d] == out.dims[d];
    }
  }
  SF_CHECK(same,
           "input \"Out@GRAD\" (variable \"%s\") is %s %s: expected %s %s, "
           "the forward output",
           context.InputName("Out@GRAD"), DataTypeName(grad.dtype),
           grad.has_dims ? DimsToString(grad.dims) : "[?]",
           DataTypeName(out.dtype),
           out.has_dims ? DimsToString(out.dims) : "[?]");
  return absl::OkStatus();
}

template <typename T>
absl::Status Matmul(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  Tensor* out = context.Output("Out");
  const MatmulSizes s = MatmulSizesOf(context.attrs(), x, y, out->dims());
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  // A batch of X against one matrix Y folds the batch into the rows: a
  // single large product instead of many small ones, whose Y (a weight)
  // Gemm may keep a re-spaced copy of.
  if (s.fold) {
    return Gemm(false, s.ty, s.batches * s.m, s.n, s.k, alpha, x.data<T>(),
                s.x_cols, y.data<T>(), s.y_cols, T(0), out->data<T>(), s.n,
                y.buffer());
  }
  return BatchedGemm({x.dims(), y.dims(), out->dims(), s.tx, s.ty}, alpha,
                     x.data<T>(), y.data<T>(), T(0), out->data<T>());
}

// Fills `tensor` (of T) with zeros: the start of a gradient that batches
// add into.
template <typename T>
void Zero(Tensor* tensor) {
  T* data = tensor->data<T>();
  std::fill(data, data + tensor->numel(), T(0));
}

// Out's batch dims, then a matrix of `rows` x `cols`.
Dims BatchOfOut(const Tensor& grad, int64_t rows, int64_t cols) {
  Dims dims(grad.dims().begin(), grad.dims().end() - 2);
  dims.push_back(rows);
  dims.push_back(cols);
  return dims;
}

// The gradient of one input of matmul: `product` (whose C has Out's batch
// dims) for every batch at once. An input broadcast over some batch dims
// gets the sum of the gradients of every batch it took part in: then the
// batch of gradients goes to a scratch buffer first, and is summed.
template <typename T>
absl::Status BatchedGrad(const BatchedGemmShape& product, T alpha, const T* a,
                         const T* b, Tensor* input_grad) {
  const auto out_batch = BatchDims(product.c);
  const int64_t batches = NumElements(out_batch);
  if (NumElements(BatchDims(input_grad->dims())) == batches) {
    return BatchedGemm(product, alpha, a, b, T(0), input_grad->data<T>());
  }
  std::vector<T> per_batch(NumElements(product.c));
  SF_RETURN_IF_ERROR(BatchedGemm(product, alpha, a, b, T(0), per_batch.data()));
  const auto in_batch = BatchDims(input_grad->dims());
  const int64_t size = input_grad->dim(-2) * input_grad->dim(-1);
  Zero<T>(input_grad);
  T* in_data = input_grad->data<T>();
  for (int64_t b = 0; b < batches; ++b) {
    const T* from = per_batch.data() + b * size;
    T* to = in_data + BroadcastBatchOffset(b, out_batch, in_batch, size);
    for (int64_t i = 0; i < size; ++i) to[i] += from[i];
  }
  return absl::OkStatus();
}

// Out = alpha * op(X) op(Y) per batch, op transposing when its flag says:
//   dX = alpha * dOut op(Y)^T, laid out as X (transposed back if tx),
//   dY = alpha * op(X)^T dOut, laid out as Y (transposed back if ty).
// Every case is one product with transpose flags, so no transposed copy
// is made.
template <typename T>
absl::Status MatmulGrad(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  const Tensor& grad = context.Input("Out@GRAD");
  const MatmulSizes s = MatmulSizesOf(context.attrs(), x, y, grad.dims());
  const T alpha = static_cast<T>(context.attrs().Get<float>("alpha"));
  const T* g = grad.data<T>();
  if (context.HasOutput("X@GRAD")) {
    Tensor* x_grad = context.Output("X@GRAD");
    if (s.fold) {
      // dX[rows x k] = dOut[rows x n] op(Y)^T.
      SF_RETURN_IF_ERROR(Gemm(false, !s.ty, s.batches * s.m, s.k, s.n, alpha,
                              g, s.n, y.data<T>(), s.y_cols, T(0),
                              x_grad->data<T>(), s.x_cols));
    } else if (s.tx) {
      // dX = op(Y) dOut^T, of X's [k x m] layout.
      SF_RETURN_IF_ERROR(BatchedGrad<T>(
          {y.dims(), grad.dims(), BatchOfOut(grad, s.k, s.m), s.ty, true},
          alpha, y.data<T>(), g, x_grad));
    } else {
      SF_RETURN_IF_ERROR(BatchedGrad<T>(
          {grad.dims(), y.dims(), BatchOfOut(grad, s.m, s.k), false, !s.ty},
          alpha, g, y.data<T>(), x_grad));
    }
  }
  if (context.HasOutput("Y@GRAD")) {
    Tensor* y_grad = context.Output("Y@GRAD");
    if (s.fold) {
      // dY = X^T dOut over all rows at once (ty: its transpose).
      SF_RETURN_IF_ERROR(
          s.ty ? Gemm(true, false, s.n, s.k, s.batches * s.m, alpha, g, s.n,
                      x.data<T>(), s.x_cols, T(0), y_grad->data<T>(), s.y_cols)
               : Gemm(true, false, s.k, s.n, s.batches * s.m, alpha,
                      x.data<T>(), s.x_cols, g, s.n, T(0), y_grad->data<T>(),
                      s.y_cols));
    } else if (s.ty) {
      // dY = dOut^T op(X), of Y's [n x k] layout.
      SF_RETURN_IF_ERROR(BatchedGrad<T>(
          {grad.dims(), x.dims(), BatchOfOut(grad, s.n, s.k), true, s.tx},
          alpha, g, x.data<T>(), y_grad));
    } else {
      SF_RETURN_IF_ERROR(BatchedGrad<T>(
          {x.dims(), grad.dims(), BatchOfOut(grad, s.k, s.n), !s.tx, false},
          alpha, x.data<T>(), g, y_grad));
    }
  }
  return absl::OkStatus();
}

absl::Status InferMatmulGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, MatmulOutInfo(context));
  SF_RETURN_IF_ERROR(CheckOutGrad(context, out));
  for (const char* slot : {"X", "Y"}) {
    const std::string grad = GradName(slot);
    if (context.HasOutput(grad)) context.SetOutput(grad, context.Input(slot));
  }
  return absl::OkStatus();
}

absl::StatusOr<VarInfo> FcOutInfo(const InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "W"));
  SF_RETURN_IF_ERROR(CheckRank(context, "W", 2, 2));
  const VarInfo& x = context.Input("X");
  const VarInfo& w = context.Input("W");
  const int in_num_col_dims = context.attrs().Get<int32_t>("in_num_col_dims");
  if (!x.has_dims || !w.has_dims) return UnknownRank(x.dtype);
  SF_CHECK(in_num_col_dims < static_cast<int>(x.dims.size()),
           "attribute \"in_num_col_dims\" = %d needs \"X\" (variable \"%s\") "
           "of rank above %d, got %s",
           in_num_col_dims, context.InputName("X"), in_num_col_dims,
           DimsToString(x.dims));
  const std::optional<int64_t> k =
      CheckedNumElements(absl::MakeConstSpan(x.dims).subspan(in_num_col_dims));
  SF_CHECK(k.has_value(),
           "\"X\" (variable \"%s\") %s has more features per row than "
           "int64 holds, with attribute \"in_num_col_dims\" = %d",
           context.InputName("X"), DimsToString(x.dims), in_num_col_dims);
  SF_CHECK(*k < 0 || w.dims[0] < 0 || *k == w.dims[0],
           "\"X\" (variable \"%s\") %s has %d features per row but \"W\" "
           "(variable \"%s\") %s expects %d",
           context.InputName("X"), DimsToString(x.dims), *k,
           context.InputName("W"), DimsToString(w.dims), w.dims[0]);
  if (context.HasInput("Bias")) {
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Bias"));
    const VarInfo& bias = context.Input("Bias");
    SF_ASSIGN_OR_RETURN(const int64_t bias_count,
                        InputNumElements(context, "Bias"));
    SF_CHECK(bias_count < 0 || w.dims[1] < 0 || bias_count == w.dims[1],
             "\"Bias\" (variable \"%s\") %s must hold %d values, one per "
             "column of \"W\"",
             context.InputName("Bias"), DimsToString(bias.dims), w.dims[1]);
  }
  Dims out(x.dims.begin(), x.dims.begin() + in_num_col_dims);
  out.push_back(w.dims[1]);
  return VarInfo{x.dtype, std::move(out), true};
}

// fc's "activation_type": "" (none), "relu", "gelu" (the exact, erf form)
// or "gelu_tanh" (gelu's tanh approximation, gelu with "approximate"). A
// check of its own rather than OneOf, whose message would list the empty
// choice as nothing at all.
constexpr char kActivationType[] = "activation_type";

enum class FcActivationKind { kNone, kRelu, kGelu, kGeluTanh };

std::optional<FcActivationKind> FcActivationOf(const std::string& s) {
  if (s.empty()) return FcActivationKind::kNone;
  if (s == "relu") return FcActivationKind::kRelu;
  if (s == "gelu") return FcActivationKind::kGelu;
  if (s == "gelu_tanh") return FcActivationKind::kGeluTanh;
  return std::nullopt;
}

AttrCheckFn FcActivation() {
  return [](const AttrValue& value) -> absl::Status {
    const std::string& s = std::get<std::string>(value);
    SF_CHECK(FcActivationOf(s).has_value(),
             "must be one of \"\" (none), \"relu\", \"gelu\", "
             "\"gelu_tanh\", got \"%s\"",
             s);
    return absl::OkStatus();
  };
}

FcActivationKind FcActivationOf(const Attributes& attrs) {
  return FcActivationOf(attrs.Get<std::string>(kActivationType))
      .value_or(FcActivationKind::kNone);
}

absl::Status InferFc(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, FcOutInfo(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

// Row by row of n values: the bias (if not null) added, then `activation`.
template <typename T, typename Activation>
inline __attribute__((always_inline)) void FinishRowsWith(T* out, const T* bias,
                                                          int64_t rows,
                                                          int64_t n,
                                                          Activation f) {
  for (int64_t i = 0; i < rows; ++i) {
    T* row = out + i * n;
    if (bias != nullptr) {
      for (int64_t j = 0; j < n; ++j) row[j] = f(row[j] + bias[j]);
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] = f(row[j]);
    }
  }
}

// max(v, 0), relu's own expression, so NaN stays NaN.
struct FcRelu {
  template <typename T>
  inline __attribute__((always_inline)) T operator()(T v) const {
    return v < T(0) ? T(0) : v;
  }
};

struct FcIdentity {
  template <typename T>
  inline __attribute__((always_inline)) T operator()(T v) const {
    return v;
  }
};

// Rows [0, rows) of n values: the bias (if not null) added to each row, then
// the activation, in one pass.
template <typename T>
inline __attribute__((always_inline)) void FinishRowsLoop(
    T* out, const T* bias, int64_t rows, int64_t n,
    FcActivationKind activation) {
  switch (activation) {
    case FcActivationKind::kNone:
      return FinishRowsWith(out, bias, rows, n, FcIdentity());
    case FcActivationKind::kRelu:
      return FinishRowsWith(out, bias, rows, n, FcRelu());
    case FcActivationKind::kGelu:
      return FinishRowsWith(out, bias, rows, n, GeluErf());
    case FcActivationKind::kGeluTanh:
      return FinishRowsWith(out, bias, rows, n, GeluTanh());
  }
}

// FinishRowsLoop on the widest vectors the CPU has
// (platform/vector_clones.h; GCC clones non-template functions only).
SF_WIDEST_VECTORS void FinishRows(float* out, const float* bias, int64_t rows,
                                  int64_t n, FcActivationKind activation) {
  FinishRowsLoop(out, bias, rows, n, activation);
}
SF_WIDEST_VECTORS void FinishRows(double* out, const double* bias, int64_t rows,
                                  int64_t n, FcActivationKind activation) {
  FinishRowsLoop(out, bias, rows, n, activation);
}

// The product, then the bias and the activation in one pass over Out's rows
// while they are still in the caches. (Starting Out from the bias and adding
// the product to it, sgemm's beta = 1, was measured slower: oneDNN then reads
// Out as well, and the bias copy is one more pass.)
template <typename T>
absl::Status Fc(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& w = context.Input("W");
  Tensor* out = context.Output("Out");
  const int64_t k = w.dim(0), n = w.dim(1);
  const int64_t m = k == 0 ? out->numel() / n : x.numel() / k;
  T* out_data = out->data<T>();
  SF_RETURN_IF_ERROR(Gemm(false, false, m, n, k, T(1), x.data<T>(), k,
                          w.data<T>(), n, T(0), out_data, n, w.buffer()));
  const T* bias =
      context.HasInput("Bias") ? context.Input("Bias").data<T>() : nullptr;
  const FcActivationKind activation = FcActivationOf(context.attrs());
  if ((bias == nullptr && activation == FcActivationKind::kNone) || n == 0) {
    return absl::OkStatus();
  }
  ParallelFor(
      m, (kElementsWorthAThread + n - 1) / n, [&](int64_t begin, int64_t end) {
        FinishRows(out_data + begin * n, bias, end - begin, n, activation);
      });
  return absl::OkStatus();
}

// Out = X' W + Bias with X' = X as [m x k] (its first in_num_col_dims dims
// as rows): dX' = dOut W^T, dW = X'^T dOut, dBias = dOut summed over rows.
template <typename T>
absl::Status FcGrad(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& w = context.Input("W");
  const Tensor& grad = context.Input("Out@GRAD");
  const auto [m, k, n] = FcSizesOf(context.attrs(), x, w);
  const T* g = grad.data<T>();
  if (context.HasOutput("X@GRAD")) {
    SF_RETURN_IF_ERROR(Gemm(false, true, m, k, n, T(1), g, n, w.data<T>(), n,
                            T(0), context.Output("X@GRAD")->data<T>(), k));
  }
  if (context.HasOutput("W@GRAD")) {
    SF_RETURN_IF_ERROR(Gemm(true, false, k, n, m, T(1), x.data<T>(), k, g, n,
                            T(0), context.Output("W@GRAD")->data<T>(), n));
  }
  if (context.HasOutput("Bias@GRAD")) {
    // Row by row, so that the sums run along contiguous memory.
    Tensor* bias_grad = context.Output("Bias@GRAD");
    Zero<T>(bias_grad);
    T* db = bias_grad->data<T>();
    for (int64_t i = 0; i < m; ++i) {
      const T* row = g + i * n;
      for (int64_t j = 0; j < n; ++j) db[j] += row[j];
    }
  }
  return absl::OkStatus();
}

// fc's gradient: what GradSpec's default maker would make of fc's
// declarations (one fc_grad op), preceded by the ops that take Out@GRAD
// back through a fused activation. For "relu", a relu_grad op, which reads
// the fused Out, as it reads relu's Out in the unfused net. For "gelu" and
// "gelu_tanh", whose derivative needs the pre-activation that the fused
// op never stores, an fc without activation that computes it again, then
// gelu_grad on it: the forward pass keeps no more than the unfused net's.
// A plain fc's gradient still reads no output, so that Out need not
// outlive the forward pass.
absl::Status MakeFcGrad(GradOpContext& grad) {
  std::vector<std::string> out_grad = grad.OutputGrad("Out");
  std::string activation;
  for (const AttrDef& attr : grad.forward().attrs()) {
    if (attr.name() == kActivationType) activation = attr.s();
  }
  // The names of what the activation's gradient adds are made from Out's
  // gradient, as framework/backward.cc names its partial and zero gradients
  // ("@<part>", "@ZERO"): within the "@GRAD" names the backward pass owns.
  if (activation == "relu" && !out_grad.empty() && !out_grad[0].empty()) {
    const std::string pre = absl::StrCat(out_grad[0], "@PRE_RELU");
    OpDef& op = grad.AddOp("relu_grad");
    GradOpContext::SetInput(op, "Out", grad.Output("Out"));
    GradOpContext::SetInput(op, "Out@GRAD", out_grad);
    GradOpContext::SetOutput(op, "X@GRAD", {pre});
    out_grad = {pre};
  }
  if ((activation == "gelu" || activation == "gelu_tanh") &&
      !out_grad.empty() && !out_grad[0].empty()) {
    const std::string pre_value = absl::StrCat(out_grad[0], "@PRE_GELU_VALUE");
    const std::string pre = absl::StrCat(out_grad[0], "@PRE_GELU");
    OpDef& product = grad.AddOp("fc");
    for (const char* slot : {"X", "W", "Bias"}) {
      GradOpContext::SetInput(product, slot, grad.Input(slot));
    }
    GradOpContext::SetOutput(product, "Out", {pre_value});
    for (const AttrDef& attr : grad.forward().attrs()) {
      if (attr.name() != kActivationType) *product.add_attrs() = attr;
    }
    OpDef& op = grad.AddOp("gelu_grad");
    GradOpContext::SetInput(op, "X", {pre_value});
    GradOpContext::SetInput(op, "Out@GRAD", out_grad);
    GradOpContext::SetOutput(op, "X@GRAD", {pre});
    if (activation == "gelu_tanh") {
      AttrDef* approximate = op.add_attrs();
      approximate->set_name("approximate");
      approximate->set_b(true);
    }
    out_grad = {pre};
  }
  OpDef& op = grad.AddOp("fc_grad");
  for (const char* slot : {"X", "W", "Bias"}) {
    GradOpContext::SetInput(op, slot, grad.Input(slot));
  }
  GradOpContext::SetInput(op, "Out@GRAD", out_grad);
  for (const char* slot : {"X", "W", "Bias"}) {
    GradOpContext::SetOutput(op, GradName(slot), grad.InputGrad(slot));
  }
  // All but activation_type: fc_grad differentiates the product and the
  // bias only, the ops above the activation.
  for (const AttrDef& attr : grad.forward().attrs()) {
    if (attr.name() != kActivationType) *op.add_attrs() = attr;
  }
  return absl::OkStatus();
}

absl::Status InferFcGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, FcOutInfo(context));
  SF_RETURN_IF_ERROR(CheckOutGrad(context, out));
  SF_CHECK(!context.HasOutput("Bias@GRAD") || context.HasInput("Bias"),
           "output \"Bias@GRAD\" (variable \"%s\") needs input \"Bias\" for "
           "its shape",
           context.OutputName("Bias@GRAD"));
  for (const char* slot : {"X", "W", "Bias"}) {
    const std::string grad = GradName(slot);
    if (context.HasOutput(grad)) context.SetOutput(grad, context.Input(slot));
  }
  return absl::OkStatus();
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
    .Grad(GradSpec("matmul_grad")
              .ReadInput("X")
              .ReadInput("Y")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("Y"))
    .Kernel(DeviceType::kCPU, kFloat32, &Matmul<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Matmul<double>);

SF_REGISTER_OP(matmul_grad)
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Attr("transpose_x", AttrType::kBool, AttrValue(false))
    .Attr("transpose_y", AttrType::kBool, AttrValue(false))
    .Attr("alpha", AttrType::kFloat, AttrValue(1.0f))
    .Infer(InferMatmulGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &MatmulGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &MatmulGrad<double>);

SF_REGISTER_OP(fc)
    .Input("X")
    .Input("W")
    .Input("Bias", /*optional=*/true)
    .Output("Out")
    .Attr("in_num_col_dims", AttrType::kInt, AttrValue(1), Positive())
    .Attr(kActivationType, AttrType::kString, AttrValue(std::string()),
          FcActivation())
    .Infer(InferFc)
    // The declarations are fc_grad's slots; MakeFcGrad adds the gradient
    // of a fused activation (a relu's reads Out) only where
    // activation_type asks.
    .Grad(GradSpec("fc_grad")
              .ReadInput("X")
              .ReadInput("W")
              .ReadInput("Bias")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("W")
              .WriteInputGrad("Bias")
              .Maker(MakeFcGrad))
    .Kernel(DeviceType::kCPU, kFloat32, &Fc<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Fc<double>);

// Bias is read for the shape of its gradient only. No activation_type: a
// fused activation's gradient is an op of its own before this one.
SF_REGISTER_OP(fc_grad)
    .Input("X")
    .Input("W")
    .Input("Bias", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("W@GRAD", /*optional=*/true)
    .Output("Bias@GRAD", /*optional=*/true)
    .Attr("in_num_col_dims", AttrType::kInt, AttrValue(1), Positive())
    .Infer(InferFcGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &FcGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &FcGrad<double>);

}  // namespace scopeflow
