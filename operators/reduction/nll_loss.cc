// nll_loss: ONNX's NegativeLogLikelihoodLoss. "X" [N, C, d1, ..., dk]
// (float32, float64) holds log-probabilities, "Label" [N, d1, ..., dk]
// (int32, int64) a class per position, the optional "Weight" [C] a weight
// per class. Each position loses -X[n, label, d...] * Weight[label]; a
// position whose label is attribute "ignore_index" loses 0 and weighs 0.
// Attribute "reduction": "none" keeps the losses (Out [N, d1, ..., dk]),
// "sum" adds them, "mean" (the default) divides the sum by the total weight
// of the positions not ignored (their count without Weight): NaN when all
// are ignored, as ONNX's reference. A label outside [0, C) other than
// ignore_index is an error.
//
// The gradient (nll_loss_grad) goes to X and Weight, Label being an index:
// with g a position's share of Out@GRAD (its element for "none", the
// scalar for "sum", the scalar over the total weight W for "mean"),
// X@GRAD[n, label, d...] = -Weight[label] * g and 0 elsewhere, and
// Weight@GRAD[c] sums -X[n, c, d...] * g over the positions labelled c
// (for "mean", (-X[n, c, d...] - Out) * g, the quotient rule).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// ignore_index's default: no label is ignored.
constexpr int64_t kNoIgnoredLabel = std::numeric_limits<int64_t>::min();
constexpr DataType kLabelDtypes[] = {kInt32, kInt64};

absl::Status InferNllLoss(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 2, 64));
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "Label", kLabelDtypes));
  const VarInfo& x = context.Input("X");
  const VarInfo& label = context.Input("Label");
  Dims positions;  // [N, d1, ..., dk], where X's dims are known.
  if (x.has_dims) {
    positions = x.dims;
    positions.erase(positions.begin() + 1);
  }
  if (x.has_dims && label.has_dims) {
    bool match = label.dims.size() == positions.size();
    for (size_t i = 0; match && i < positions.size(); ++i) {
      match = label.dims[i] < 0 || positions[i] < 0 ||
              label.dims[i] == positions[i];
    }
    SF_CHECK(match,
             "%s: expected shape %s, one label per position of %s (its dims "
             "but the class axis 1)",
             DescribeInputShape(context, "Label"), DimsToString(positions),
             DescribeInputShape(context, "X"));
  }
  if (context.HasInput("Weight")) {
    SF_RETURN_IF_ERROR(CheckDtype(context, "Weight", x.dtype));
    SF_RETURN_IF_ERROR(CheckRank(context, "Weight", 1, 1));
    const VarInfo& weight = context.Input("Weight");
    SF_CHECK(!x.has_dims || !weight.has_dims || x.dims[1] < 0 ||
                 weight.dims[0] < 0 || weight.dims[0] == x.dims[1],
             "%s: expected one weight per class, %d (axis 1 of %s)",
             DescribeInputShape(context, "Weight"), x.dims[1],
             DescribeInputShape(context, "X"));
  }
  if (context.attrs().Get<std::string>("reduction") != "none") {
    context.SetOutput("Out", 0, x.dtype, Dims{});
  } else if (label.has_dims) {
    context.SetOutput("Out", 0, x.dtype, label.dims);
  } else if (x.has_dims) {
    context.SetOutput("Out", 0, x.dtype, positions);
  } else {
    VarInfo out;
    out.dtype = x.dtype;
    context.SetOutput("Out", out);
  }
  return absl::OkStatus();
}

absl::Status InferNllLossGrad(InferContext& context) {
  if (context.HasOutput("X@GRAD")) {
    context.SetOutput("X@GRAD", context.Input("X"));
  }
  if (context.HasOutput("Weight@GRAD")) {
    context.SetOutput("Weight@GRAD", context.Input("Weight"));
  }
  return absl::OkStatus();
}

// One position of the loss: where its term sits in X, and its class's
// weight (0 when ignored).
struct Term {
  int64_t x_index;
  int64_t label;
  double weight;
};

// X [N, C, D] (D the product of the dims after C) and its labels as terms,
// one per position; an error for a label out of range.
template <typename L>
absl::StatusOr<std::vector<Term>> Terms(const KernelContext& context,
                                        const Tensor& x, const double* weight) {
  const Tensor& label = context.Input("Label");
  const int64_t n = x.dims()[0];
  const int64_t c = x.dims()[1];
  int64_t d = 1;
  for (int i = 2; i < x.rank(); ++i) d *= x.dims()[i];
  const int64_t ignore = context.attrs().Get<int64_t>("ignore_index");
  const L* labels = label.data<L>();
  std::vector<Term> terms(n * d);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      const int64_t at = i * d + j;
      const int64_t l = labels[at];
      if (l == ignore) {
        terms[at] = {-1, -1, 0};
        continue;
      }
      SF_CHECK(l >= 0 && l < c,
               "input \"Label\" (variable \"%s\") holds %d at position %d: "
               "expected a class in [0, %d) or ignore_index",
               context.InputName("Label"), l, at, c);
      terms[at] = {(i * c + l) * d + j, l, weight ? weight[l] : 1.0};
    }
  }
  return terms;
}

// The terms of the kernel's inputs, and the weights as doubles.
template <typename T>
absl::StatusOr<std::vector<Term>> KernelTerms(const KernelContext& context,
                                              std::vector<double>& weights) {
  const Tensor& x = context.Input("X");
  if (context.HasInput("Weight")) {
    const Tensor& w = context.Input("Weight");
    weights.assign(w.data<T>(), w.data<T>() + w.numel());
  }
  const double* weight = weights.empty() ? nullptr : weights.data();
  if (context.Input("Label").dtype() == kInt32) {
    return Terms<int32_t>(context, x, weight);
  }
  return Terms<int64_t>(context, x, weight);
}

template <typename T>
absl::Status NllLossKernel(KernelContext& context) {
  std::vector<double> weights;
  SF_ASSIGN_OR_RETURN(const std::vector<Term> terms,
                      KernelTerms<T>(context, weights));
  const T* x = context.Input("X").data<T>();
  T* out = context.Output("Out")->data<T>();
  const std::string& reduction = context.attrs().Get<std::string>("reduction");
  double sum = 0;
  double total_weight = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    const double loss = t.x_index < 0 ? 0.0 : -x[t.x_index] * t.weight;
    if (reduction == "none") out[i] = static_cast<T>(loss);
    sum += loss;
    total_weight += t.weight;
  }
  if (reduction == "sum") out[0] = static_cast<T>(sum);
  if (reduction == "mean") out[0] = static_cast<T>(sum / total_weight);
  return absl::OkStatus();
}

template <typename T>
absl::Status NllLossGradKernel(KernelContext& context) {
  std::vector<double> weights;
  SF_ASSIGN_OR_RETURN(const std::vector<Term> terms,
                      KernelTerms<T>(context, weights));
  const T* x = context.Input("X").data<T>();
  const T* g = context.Input("Out@GRAD").data<T>();
  const std::string& reduction = context.attrs().Get<std::string>("reduction");
  double sum = 0;
  double total_weight = 0;
  for (const Term& t : terms) {
    if (t.x_index >= 0) sum += -x[t.x_index] * t.weight;
    total_weight += t.weight;
  }
  const double mean = sum / total_weight;
  // Position i's share of Out@GRAD.
  auto share = [&](size_t i) -> double {
    if (reduction == "none") return g[i];
    return reduction == "sum" ? g[0] : g[0] / total_weight;
  };
  if (context.HasOutput("X@GRAD")) {
    Tensor* dx = context.Output("X@GRAD");
    T* out = dx->data<T>();
    std::fill(out, out + dx->numel(), T(0));
    for (size_t i = 0; i < terms.size(); ++i) {
      if (terms[i].x_index < 0) continue;
      out[terms[i].x_index] = static_cast<T>(-terms[i].weight * share(i));
    }
  }
  if (context.HasOutput("Weight@GRAD")) {
    Tensor* dw = context.Output("Weight@GRAD");
    std::vector<double> acc(dw->numel(), 0.0);
    for (size_t i = 0; i < terms.size(); ++i) {
      if (terms[i].x_index < 0) continue;
      const double loss = -x[terms[i].x_index];
      acc[terms[i].label] +=
          (reduction == "mean" ? loss - mean : loss) * share(i);
    }
    for (size_t c = 0; c < acc.size(); ++c) {
      dw->data<T>()[c] = static_cast<T>(acc[c]);
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(nll_loss)
    .Input("X")
    .Input("Label")
    .Input("Weight", /*optional=*/true)
    .Output("Out")
    .Attr("ignore_index", AttrType::kInt64, AttrValue(kNoIgnoredLabel))
    .Attr("reduction", AttrType::kString, AttrValue(std::string("mean")),
          OneOf({"none", "sum", "mean"}))
    .Infer(InferNllLoss)
    .Grad(GradSpec("nll_loss_grad")
              .ReadInput("X")
              .ReadInput("Label")
              .ReadInput("Weight")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("Weight"))
    .Kernel(DeviceType::kCPU, kFloat32, &NllLossKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &NllLossKernel<double>);

// Gets the forward's attributes (the gradient maker copies them).
SF_REGISTER_OP(nll_loss_grad)
    .Input("X")
    .Input("Label")
    .Input("Weight", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Weight@GRAD", /*optional=*/true)
    .Attr("ignore_index", AttrType::kInt64, AttrValue(kNoIgnoredLabel))
    .Attr("reduction", AttrType::kString, AttrValue(std::string("mean")),
          OneOf({"none", "sum", "mean"}))
    .Infer(InferNllLossGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &NllLossGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &NllLossGradKernel<double>);

}  // namespace scopeflow
