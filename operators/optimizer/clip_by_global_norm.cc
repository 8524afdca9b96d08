// clip_by_global_norm: scales a set of gradients together so that their
// global L2 norm (over every element of every tensor) is at most max_norm,
// keeping their direction:
//   global_norm = sqrt(sum_i sum(X_i^2))
//   Out_i = X_i * max_norm / max(global_norm, max_norm)
// Below the threshold the scale is exactly 1. Out_i may be X_i (in place).
// A NaN gradient makes the norm NaN and leaves the gradients as they are
// (NaN included), so the problem shows instead of being hidden.
#include <cmath>
#include <cstdint>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status InferClipByGlobalNorm(InferContext& context) {
  const int n = context.InputCount("X");
  SF_CHECK(context.OutputCount("Out") == n,
           "output \"Out\" has %d variable(s) but input \"X\" has %d: one "
           "output per gradient",
           context.OutputCount("Out"), n);
  for (int i = 0; i < n; ++i) {
    const VarInfo& x = context.Input("X", i);
    SF_CHECK(x.dtype == kFloat32 || x.dtype == kFloat64,
             "input \"X\" #%d (variable \"%s\") has dtype %s: expected "
             "float32 or float64",
             i, context.InputName("X", i), DataTypeName(x.dtype));
    SF_CHECK(x.dtype == context.Input("X", 0).dtype,
             "input \"X\" #%d (variable \"%s\") has dtype %s but #0 "
             "(variable \"%s\") has %s: the gradients must have one dtype",
             i, context.InputName("X", i), DataTypeName(x.dtype),
             context.InputName("X", 0),
             DataTypeName(context.Input("X", 0).dtype));
    for (int j = 0; j < i; ++j) {
      // Scaling one variable twice would clip it twice.
      SF_CHECK(context.InputName("X", j) != context.InputName("X", i),
               "input \"X\" lists variable \"%s\" twice (#%d and #%d)",
               context.InputName("X", i), j, i);
    }
  }
  for (int i = 0; i < n; ++i) {
    context.SetOutput("Out", i, context.Input("X", i));
  }
  if (context.HasOutput("GlobalNorm")) {
    context.SetOutput("GlobalNorm", 0, context.Input("X", 0).dtype, {1});
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status ClipByGlobalNorm(KernelContext& context) {
  const int n = context.InputCount("X");
  // In double: a sum over millions of float squares loses digits in float.
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& x = context.Input("X", i);
    const T* data = x.data<T>();
    for (int64_t k = 0; k < x.numel(); ++k) {
      sum += static_cast<double>(data[k]) * static_cast<double>(data[k]);
    }
  }
  const double norm = std::sqrt(sum);
  const double max_norm = context.attrs().Get<float>("max_norm");
  // max_norm / max(norm, max_norm), written so that an infinite max_norm
  // gives 1 rather than inf / inf.
  const double scale = norm > max_norm ? max_norm / norm : 1.0;
  for (int i = 0; i < n; ++i) {
    const Tensor& x = context.Input("X", i);
    const T* data = x.data<T>();
    T* out = context.Output("Out", i)->data<T>();
    for (int64_t k = 0; k < x.numel(); ++k) {
      out[k] = static_cast<T>(data[k] * scale);
    }
  }
  if (context.HasOutput("GlobalNorm")) {
    *context.Output("GlobalNorm")->data<T>() = static_cast<T>(norm);
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(clip_by_global_norm)
    .Input("X", /*optional=*/false, /*variadic=*/true)
    .Output("Out", /*optional=*/false, /*variadic=*/true)
    .Output("GlobalNorm", /*optional=*/true)
    .InPlace("Out", "X")
    .Attr("max_norm", AttrType::kFloat, Positive())
    .Infer(InferClipByGlobalNorm)
    .Kernel(DeviceType::kCPU, kFloat32, &ClipByGlobalNorm<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ClipByGlobalNorm<double>);

}  // namespace scopeflow
