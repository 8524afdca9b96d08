// sum: the elementwise sum of any number of tensors of one shape; backward
// adds up a variable's gradient contributions with it.
#include <cstdint>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status InferSum(InferContext& context) {
  const int n = context.InputCount("X");
  VarInfo out = context.Input("X", 0);
  for (int i = 1; i < n; ++i) {
    const VarInfo& in = context.Input("X", i);
    SF_CHECK(in.dtype == out.dtype,
             "input \"X\" #%d (variable \"%s\") is %s, input #0 (variable "
             "\"%s\") is %s; all must have one dtype",
             i, context.InputName("X", i), DataTypeName(in.dtype),
             context.InputName("X", 0), DataTypeName(out.dtype));
    if (!in.has_dims) continue;
    if (!out.has_dims) {
      out = in;
      continue;
    }
    bool same = in.dims.size() == out.dims.size();
    for (size_t d = 0; same && d < in.dims.size(); ++d) {
      if (out.dims[d] < 0) out.dims[d] = in.dims[d];
      same = in.dims[d] < 0 || in.dims[d] == out.dims[d];
    }
    SF_CHECK(same,
             "input \"X\" #%d (variable \"%s\") has shape %s, input #0 "
             "(variable \"%s\") has %s; all must have one shape",
             i, context.InputName("X", i), DimsToString(in.dims),
             context.InputName("X", 0),
             DimsToString(context.Input("X", 0).dims));
  }
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

template <typename T>
absl::Status Sum(KernelContext& context) {
  Tensor* out = context.Output("Out");
  T* result = out->data<T>();
  const int64_t n = out->numel();
  const T* first = context.Input("X", 0).data<T>();
  for (int64_t j = 0; j < n; ++j) result[j] = first[j];
  for (int i = 1; i < context.InputCount("X"); ++i) {
    const T* in = context.Input("X", i).data<T>();
    for (int64_t j = 0; j < n; ++j) result[j] += in[j];
  }
  return absl::OkStatus();
}

// Every input's gradient is the output's.
absl::Status MakeSumGrad(GradOpContext& grad) {
  for (const std::string& name : grad.InputGrad("X")) {
    if (name.empty()) continue;
    OpDef& op = grad.AddOp("assign");
    GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
    GradOpContext::SetOutput(op, "Out", {name});
  }
  return absl::OkStatus();
}

SF_REGISTER_OP(sum)
    .Input("X", /*optional=*/false, /*variadic=*/true)
    .Output("Out")
    .Infer(InferSum)
    .Grad(
        GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(MakeSumGrad))
    .Kernel(DeviceType::kCPU, kFloat32, &Sum<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Sum<double>)
    .Kernel(DeviceType::kCPU, kInt32, &Sum<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &Sum<int64_t>);

}  // namespace
}  // namespace scopeflow
