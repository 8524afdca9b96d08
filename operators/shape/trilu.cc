// trilu: ONNX's Trilu. Keeps the upper (j - i >= k) or lower (j - i <= k)
// triangle of each matrix in the last two axes of X and zeroes the rest;
// k comes from input "K" when bound, else from attribute "k". The gradient
// masks Out@GRAD the same way, so the gradient op is trilu itself.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kTriluDtypes[] = {kFloat32, kFloat64, kInt32, kInt64,
                                     kBool};

absl::Status InferTrilu(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kTriluDtypes));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 2, 64));
  SF_RETURN_IF_ERROR(CheckScalarInput(context, "K", kInt64));
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

template <typename T>
absl::Status TriluKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  int64_t k = context.attrs().Get<int64_t>("k");
  if (context.HasInput("K")) {
    SF_ASSIGN_OR_RETURN(k, ScalarInput<int64_t>(context, "K"));
  }
  const bool upper = context.attrs().Get<bool>("upper");
  const int64_t rows = x.dims()[x.rank() - 2];
  const int64_t cols = x.dims()[x.rank() - 1];
  if (x.numel() == 0) return absl::OkStatus();
  const int64_t matrices = x.numel() / (rows * cols);
  const T* src = x.data<T>();
  T* dst = out->data<T>();
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t row = (m * rows + i) * cols;
      // Columns [begin, end) are kept: j >= i + k (upper) or j <= i + k.
      const int64_t edge = std::clamp<int64_t>(
          upper ? i + k : i + k + 1, 0, cols);
      const int64_t begin = upper ? edge : 0;
      const int64_t end = upper ? cols : edge;
      std::fill(dst + row, dst + row + begin, T(0));
      std::copy(src + row + begin, src + row + end, dst + row + begin);
      std::fill(dst + row + end, dst + row + cols, T(0));
    }
  }
  return absl::OkStatus();
}

absl::Status MakeTriluGrad(GradOpContext& grad) {
  const std::vector<std::string> x_grad = grad.InputGrad("X");
  if (x_grad.empty() || x_grad[0].empty()) return absl::OkStatus();
  OpDef& op = grad.AddOp("trilu");
  GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
  GradOpContext::SetInput(op, "K", grad.Input("K"));
  GradOpContext::SetOutput(op, "Out", x_grad);
  grad.CopyAttrs(op);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(trilu)
    .Input("X")
    .Input("K", /*optional=*/true)
    .Output("Out")
    .Attr("upper", AttrType::kBool, AttrValue(true))
    .Attr("k", AttrType::kInt64, AttrValue(int64_t{0}))
    .Infer(InferTrilu)
    .Grad(GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
        MakeTriluGrad))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &TriluKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &TriluKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &TriluKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &TriluKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &TriluKernel<bool>);

}  // namespace scopeflow
