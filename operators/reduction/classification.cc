// Ops over the class scores of N rows and their int64 labels (shape [N] or
// [N, 1], each in [0, C)):
// - softmax_with_cross_entropy: "Logits" [N, C] (float32, float64) to
//   "Softmax" [N, C] and "Loss" [N, 1], the negative log-probability of
//   each row's label. Attribute "axis" (default -1) must name the last axis.
//   A label outside [0, C) is an error.
// - accuracy: "Out" [N, C] scores (float32, float64, int32, int64) to
//   "Accuracy", a float32 scalar of shape []: the fraction of rows whose
//   argmax (the first on ties) is the label; 0 for no rows. A label outside
//   [0, C) is never the argmax, so counts as wrong.
//
// softmax_with_cross_entropy's gradient goes to Logits only (Label is an
// index, and no gradient flows through the Softmax output):
// softmax_with_cross_entropy_grad reads Label, Softmax and Loss@GRAD, and
// writes the optional Logits@GRAD = (Softmax - onehot(Label)) * Loss@GRAD,
// row by row, as in Paddle. accuracy is a count, with no gradient.
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/activation/softmax_math.h"
#include "operators/common.h"
#include "operators/reduction/argmax.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The number of rows of the scores input `scores` ([N, C]): -1 if unknown.
int64_t Rows(const InferContext& context, absl::string_view scores) {
  const VarInfo& info = context.Input(scores);
  return info.has_dims ? info.dims[0] : -1;
}

// Checks the scores input `scores` (rank 2, at least one class when it has
// rows) and input "Label" against it: int64, of shape [N] or [N, 1].
absl::Status CheckScoresAndLabel(const InferContext& context,
                                 absl::string_view scores) {
  SF_RETURN_IF_ERROR(CheckRank(context, scores, 2, 2));
  const VarInfo& x = context.Input(scores);
  if (x.has_dims) {
    SF_CHECK(x.dims[0] <= 0 || x.dims[1] != 0,
             "%s has no classes (expected at least one column)",
             DescribeInputShape(context, scores));
  }
  SF_RETURN_IF_ERROR(CheckDtype(context, "Label", kInt64));
  const VarInfo& label = context.Input("Label");
  if (!label.has_dims) return absl::OkStatus();
  const int rank = static_cast<int>(label.dims.size());
  SF_CHECK(
      rank == 1 || (rank == 2 && (label.dims[1] == 1 || label.dims[1] < 0)),
      "%s: expected shape [N] or [N, 1], one label per row of input "
      "\"%s\"",
      DescribeInputShape(context, "Label"), scores);
  const int64_t rows = Rows(context, scores);
  SF_CHECK(rows < 0 || label.dims[0] < 0 || rows == label.dims[0],
           "%s has %d labels but %s has %d rows (expected one label per row)",
           DescribeInputShape(context, "Label"), label.dims[0],
           DescribeInputShape(context, scores), rows);
  return absl::OkStatus();
}

absl::Status InferSoftmaxWithCrossEntropy(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Logits"));
  SF_RETURN_IF_ERROR(CheckScoresAndLabel(context, "Logits"));
  const int64_t axis = context.attrs().Get<int64_t>("axis");
  SF_CHECK(axis == 1 || axis == -1,
           "attribute \"axis\" = %d: expected the last axis of %s, 1 or -1 "
           "(only the last axis is supported)",
           axis, DescribeInputShape(context, "Logits"));
  const VarInfo& logits = context.Input("Logits");
  int64_t rows = Rows(context, "Logits");
  const VarInfo& label = context.Input("Label");
  if (rows < 0 && label.has_dims) rows = label.dims[0];
  context.SetOutput("Softmax", 0, logits.dtype,
                    logits.has_dims ? logits.dims : Dims{rows, -1});
  context.SetOutput("Loss", 0, logits.dtype, Dims{rows, 1});
  return absl::OkStatus();
}

// Error unless every one of the n labels is in [0, classes).
absl::Status CheckLabelValues(const int64_t* labels, int64_t n,
                              int64_t classes) {
  for (int64_t r = 0; r < n; ++r) {
    SF_CHECK(labels[r] >= 0 && labels[r] < classes,
             "input \"Label\" holds %d at row %d (expected a class in [0, "
             "%d))",
             labels[r], r, classes);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status SoftmaxWithCrossEntropy(KernelContext& context) {
  const Tensor& logits = context.Input("Logits");
  const int64_t n = logits.dim(0);
  const int64_t classes = logits.dim(1);
  const int64_t* labels = context.Input("Label").data<int64_t>();
  SF_RETURN_IF_ERROR(CheckLabelValues(labels, n, classes));
  const T* in = logits.data<T>();
  T* softmax = context.Output("Softmax")->data<T>();
  T* loss = context.Output("Loss")->data<T>();
  for (int64_t r = 0; r < n; ++r) {
    const T* row = in + r * classes;
    T* out = softmax + r * classes;
    const T max = softmax_math::Max(row, classes);
    const T sum = softmax_math::ExpShifted(row, max, out, classes);
    softmax_math::Scale(out, T(1) / sum, classes);
    // -log(softmax[label]) from the logits: exact where the probability
    // itself would underflow to 0.
    loss[r] = std::log(sum) - (row[labels[r]] - max);
  }
  return absl::OkStatus();
}

absl::Status InferSoftmaxWithCrossEntropyGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Softmax"));
  SF_RETURN_IF_ERROR(CheckScoresAndLabel(context, "Softmax"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "Softmax", "Loss@GRAD"));
  const int64_t axis = context.attrs().Get<int64_t>("axis");
  SF_CHECK(axis == 1 || axis == -1,
           "attribute \"axis\" = %d: expected the last axis of %s, 1 or -1 "
           "(only the last axis is supported)",
           axis, DescribeInputShape(context, "Softmax"));
  // One loss gradient per row: [N, 1] as the forward's Loss.
  const VarInfo& g = context.Input("Loss@GRAD");
  if (g.has_dims) {
    const int64_t rows = Rows(context, "Softmax");
    SF_CHECK(g.dims.size() == 2 && (g.dims[1] == 1 || g.dims[1] < 0) &&
                 (rows < 0 || g.dims[0] < 0 || g.dims[0] == rows),
             "%s: expected shape [N, 1], one loss gradient per row of %s",
             DescribeInputShape(context, "Loss@GRAD"),
             DescribeInputShape(context, "Softmax"));
  }
  if (context.HasOutput("Logits@GRAD")) {
    context.SetOutput("Logits@GRAD", context.Input("Softmax"));
  }
  return absl::OkStatus();
}

// Logits@GRAD[r, c] = (Softmax[r, c] - (c == Label[r])) * Loss@GRAD[r]: the
// derivative of log(sum(exp(logits))) - logits[label], times the loss's
// gradient.
template <typename T>
absl::Status SoftmaxWithCrossEntropyGrad(KernelContext& context) {
  if (!context.HasOutput("Logits@GRAD")) return absl::OkStatus();
  const Tensor& softmax = context.Input("Softmax");
  const int64_t n = softmax.dim(0);
  const int64_t classes = softmax.dim(1);
  const int64_t* labels = context.Input("Label").data<int64_t>();
  // The forward has checked them, but this op may run on other labels.
  SF_RETURN_IF_ERROR(CheckLabelValues(labels, n, classes));
  const T* y = softmax.data<T>();
  const T* g = context.Input("Loss@GRAD").data<T>();
  T* dx = context.Output("Logits@GRAD")->data<T>();
  for (int64_t r = 0; r < n; ++r) {
    const T* y_row = y + r * classes;
    T* dx_row = dx + r * classes;
    const T scale = g[r];
    for (int64_t c = 0; c < classes; ++c) dx_row[c] = y_row[c] * scale;
    dx_row[labels[r]] -= scale;
  }
  return absl::OkStatus();
}

absl::Status InferAccuracy(InferContext& context) {
  SF_RETURN_IF_ERROR(
      CheckDtypeIn(context, "Out", {kFloat32, kFloat64, kInt32, kInt64}));
  SF_RETURN_IF_ERROR(CheckScoresAndLabel(context, "Out"));
  context.SetOutput("Accuracy", 0, kFloat32, Dims{});
  return absl::OkStatus();
}

template <typename T>
absl::Status Accuracy(KernelContext& context) {
  const Tensor& scores = context.Input("Out");
  const int64_t n = scores.dim(0);
  const int64_t classes = scores.dim(1);
  const T* in = scores.data<T>();
  const int64_t* labels = context.Input("Label").data<int64_t>();
  int64_t correct = 0;
  for (int64_t r = 0; r < n; ++r) {
    if (ArgMax(in + r * classes, classes) == labels[r]) ++correct;
  }
  *context.Output("Accuracy")->data<float>() =
      n == 0 ? 0.0f
             : static_cast<float>(static_cast<double>(correct) /
                                  static_cast<double>(n));
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(softmax_with_cross_entropy)
    .Input("Logits")
    .Input("Label")
    .Output("Softmax")
    .Output("Loss")
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{-1}))
    .Infer(InferSoftmaxWithCrossEntropy)
    .Grad(GradSpec("softmax_with_cross_entropy_grad")
              .ReadInput("Label")
              .ReadOutput("Softmax")
              .ReadOutputGrad("Loss")
              .WriteInputGrad("Logits"))
    .Kernel(DeviceType::kCPU, kFloat32, &SoftmaxWithCrossEntropy<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &SoftmaxWithCrossEntropy<double>);

SF_REGISTER_OP(accuracy)
    .Input("Out")
    .Input("Label")
    .Output("Accuracy")
    .Infer(InferAccuracy)
    .Kernel(DeviceType::kCPU, kFloat32, &Accuracy<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Accuracy<double>)
    .Kernel(DeviceType::kCPU, kInt32, &Accuracy<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &Accuracy<int64_t>);

// Gets the forward's "axis" (the gradient maker copies the attributes). The
// kernel's dtype is Softmax's.
SF_REGISTER_OP(softmax_with_cross_entropy_grad)
    .Input("Label")
    .Input("Softmax")
    .Input("Loss@GRAD")
    .Output("Logits@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{-1}))
    .Infer(InferSoftmaxWithCrossEntropyGrad)
    .KernelDtypeFromInput("Softmax")
    .Kernel(DeviceType::kCPU, kFloat32, &SoftmaxWithCrossEntropyGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &SoftmaxWithCrossEntropyGrad<double>);

}  // namespace scopeflow
