// top_k (ONNX TopK, torch.topk): the k largest (or, with "largest" false,
// smallest) elements of X (float32, float64 or any integer type) along an
// axis, in order, and their int64 indices along it. Of equal elements the
// one of lower index comes first, as ONNX specifies; NaN counts as larger
// than any number (as in torch).
// k is attribute "k" or, when bound, the one-element input "K" (a value
// known at run time only: inference then leaves the axis' size unknown).
// The values' gradient goes back to the elements they were taken from:
// gather_elements_grad with "Indices" as its Index.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// k from the attribute, or from input "K" where inference sees its value;
// nullopt where it does not (at Prepare).
absl::StatusOr<std::optional<int64_t>> InferredK(const InferContext& context) {
  if (!context.HasInput("K")) {
    const int64_t k = context.attrs().Get<int64_t>("k");
    SF_CHECK(k >= 0,
             "attribute \"k\" is %d and input \"K\" is not bound: expected "
             "k >= 0 from one of them",
             k);
    return std::optional<int64_t>(k);
  }
  SF_RETURN_IF_ERROR(CheckScalarInput(context, "K", kInt64));
  const Tensor* value = context.InputValue("K");
  if (value == nullptr) return std::optional<int64_t>();
  SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(*value));
  return std::optional<int64_t>(*host.data<int64_t>());
}

absl::Status InferTopK(InferContext& context) {
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const std::optional<int64_t> k, InferredK(context));
  if (!x.has_dims) {
    context.SetOutput("Out", VarInfo{x.dtype, {}, false});
    context.SetOutput("Indices", VarInfo{kInt64, {}, false});
    return absl::OkStatus();
  }
  SF_CHECK(!x.dims.empty(), "%s is a scalar: expected rank 1 or more",
           DescribeInputShape(context, "X"));
  SF_ASSIGN_OR_RETURN(const int axis, InputAxis(context, "X"));
  Dims dims = x.dims;
  if (k.has_value()) {
    SF_CHECK(
        *k >= 0 && (dims[axis] < 0 || *k <= dims[axis]),
        "k = %d (%s) is out of range for axis %d of %s: expected [0, %d]", *k,
        context.HasInput("K") ? absl::StrFormat("input \"K\" (variable \"%s\")",
                                                context.InputName("K"))
                              : std::string("attribute \"k\""),
        axis, DescribeInputShape(context, "X"), dims[axis]);
  }
  dims[axis] = k.value_or(-1);
  context.SetOutput("Out", VarInfo{x.dtype, dims, true});
  context.SetOutput("Indices", VarInfo{kInt64, dims, true});
  return absl::OkStatus();
}

// Whether a comes before b among the largest: a > b, NaN above any number.
template <typename T>
bool Above(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

template <typename T>
absl::Status TopKKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const int64_t attr_axis = context.attrs().Get<int64_t>("axis");
  const int axis =
      static_cast<int>(attr_axis < 0 ? attr_axis + x.rank() : attr_axis);
  const AxisSplit split = SplitAtAxis(x.dims(), axis);
  int64_t k = context.attrs().Get<int64_t>("k");
  if (context.HasInput("K")) {
    SF_ASSIGN_OR_RETURN(k, ScalarInput<int64_t>(context, "K"));
  }
  // Inference checked k too; the kernel checks what it indexes by.
  SF_CHECK(k >= 0 && k <= split.size,
           "k = %d is out of range for axis %d of input \"X\" (variable "
           "\"%s\", shape %s): expected [0, %d]",
           k, axis, context.InputName("X"), DimsToString(x.dims()), split.size);
  const bool largest = context.attrs().Get<bool>("largest");
  const T* src = x.data<T>();
  T* values = context.Output("Out")->data<T>();
  int64_t* indices = context.Output("Indices")->data<int64_t>();
  std::vector<int64_t> order(static_cast<size_t>(split.size));
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t i = 0; i < split.inner; ++i) {
      const T* row = src + o * split.size * split.inner + i;
      auto before = [&](int64_t a, int64_t b) {
        const T va = row[a * split.inner];
        const T vb = row[b * split.inner];
        if (largest) return Above(va, vb) || (!Above(vb, va) && a < b);
        return Above(vb, va) || (!Above(va, vb) && a < b);
      };
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      const int64_t base = o * k * split.inner + i;
      for (int64_t j = 0; j < k; ++j) {
        values[base + j * split.inner] = row[order[j] * split.inner];
        indices[base + j * split.inner] = order[j];
      }
    }
  }
  return absl::OkStatus();
}

// gather_elements_grad, which adds each value's gradient to the element of
// X it came from (the indices are distinct, so each gets at most one).
absl::Status MakeTopKGrad(GradOpContext& grad) {
  OpDef& op = grad.AddOp("gather_elements_grad");
  GradOpContext::SetInput(op, "X", grad.Input("X"));
  GradOpContext::SetInput(op, "Index", grad.Output("Indices"));
  GradOpContext::SetInput(op, "Out@GRAD", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "X@GRAD", grad.InputGrad("X"));
  AttrValue axis = int64_t{-1};
  for (const AttrDef& attr : grad.forward().attrs()) {
    if (attr.name() != "axis") continue;
    SF_ASSIGN_OR_RETURN(const AttrValue given, AttrValueFromProto(attr));
    SF_ASSIGN_OR_RETURN(axis, ConvertAttrValue(given, AttrType::kInt64));
  }
  GradOpContext::SetAttr(op, "axis", axis);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(top_k)
    .Input("X")
    .Input("K", /*optional=*/true)
    .Output("Out")
    .Output("Indices")
    .Attr("k", AttrType::kInt64, AttrValue(int64_t{-1}))
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{-1}))
    .Attr("largest", AttrType::kBool, AttrValue(true))
    .Infer(InferTopK)
    .Grad(GradSpec()
              .ReadInput("X")
              .ReadOutput("Indices")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .Maker(MakeTopKGrad))
    .KernelDtypeFromInput("X")
    .Kernels(DeviceType::kCPU, NumberTypes(),
             [](auto t) { return &TopKKernel<typename decltype(t)::type>; });

}  // namespace scopeflow
