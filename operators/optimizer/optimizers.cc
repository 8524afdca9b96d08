// Parameter updates: sgd, momentum and adam (with decoupled weight decay).
//
// The ops keep no state: the moments and powers of beta live in persistable
// variables of the scope, which each op reads and writes back in place
// (ParamOut is Param, VelocityOut is Velocity, ...), so they persist from
// one run of the training net to the next and checkpoints save them with
// the parameters. Optimizers are not differentiated: no op has a gradient.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/optimizer/update_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// For beta1 and beta2: 1 would make Adam's bias correction divide by zero.
AttrCheckFn BelowOne() {
  return [](const AttrValue& value) -> absl::Status {
    const float x = std::get<float>(value);
    SF_CHECK(x >= 0 && x < 1, "must be in [0, 1), got %g", x);
    return absl::OkStatus();
  };
}

// What every update checks: Param is float, Grad matches it, LearningRate
// is one float; ParamOut takes Param's dtype and shape.
absl::Status InferParamUpdate(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Param"));
  SF_RETURN_IF_ERROR(CheckLikeInput(context, "Grad", "Param"));
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "LearningRate"));
  SF_RETURN_IF_ERROR(CheckOneElement(context, "LearningRate"));
  context.SetOutput("ParamOut", context.Input("Param"));
  return absl::OkStatus();
}

// State slot `slot` shaped like Param, updated into `out`.
absl::Status InferStateLikeParam(InferContext& context, const char* slot,
                                 const char* out) {
  SF_RETURN_IF_ERROR(CheckLikeInput(context, slot, "Param"));
  context.SetOutput(out, context.Input(slot));
  return absl::OkStatus();
}

absl::Status InferMomentum(InferContext& context) {
  SF_RETURN_IF_ERROR(InferParamUpdate(context));
  return InferStateLikeParam(context, "Velocity", "VelocityOut");
}

absl::Status InferAdam(InferContext& context) {
  SF_RETURN_IF_ERROR(InferParamUpdate(context));
  SF_RETURN_IF_ERROR(InferStateLikeParam(context, "Moment1", "Moment1Out"));
  SF_RETURN_IF_ERROR(InferStateLikeParam(context, "Moment2", "Moment2Out"));
  for (const auto& [slot, out] : {std::make_pair("Beta1Pow", "Beta1PowOut"),
                                  std::make_pair("Beta2Pow", "Beta2PowOut")}) {
    SF_RETURN_IF_ERROR(CheckFloatInput(context, slot));
    SF_RETURN_IF_ERROR(CheckOneElement(context, slot));
    context.SetOutput(out, context.Input(slot));
  }
  return absl::OkStatus();
}

// ParamOut = Param - lr * Grad. Reads element i before writing it, so
// ParamOut may be Param (and usually is).
template <typename T>
absl::Status Sgd(KernelContext& context) {
  const Tensor& param = context.Input("Param");
  const T* p = param.data<T>();
  const T* g = context.Input("Grad").data<T>();
  const T lr = static_cast<T>(ReadScalar(context.Input("LearningRate")));
  T* p_out = context.Output("ParamOut")->data<T>();
  // ivdep: outputs may alias their inputs only element for element (in
  // place), which vectorizing keeps right.
  const int64_t n = param.numel();
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) p_out[i] = p[i] - lr * g[i];
  return absl::OkStatus();
}

// Paddle's momentum:
//   velocity = mu * velocity + grad
//   param -= lr * velocity                      (plain)
//   param -= lr * (grad + mu * velocity)        (use_nesterov)
template <typename T>
absl::Status Momentum(KernelContext& context) {
  const Tensor& param = context.Input("Param");
  const T* p = param.data<T>();
  const T* g = context.Input("Grad").data<T>();
  const T* v = context.Input("Velocity").data<T>();
  const T lr = static_cast<T>(ReadScalar(context.Input("LearningRate")));
  const T mu = static_cast<T>(context.attrs().Get<float>("mu"));
  const bool nesterov = context.attrs().Get<bool>("use_nesterov");
  T* p_out = context.Output("ParamOut")->data<T>();
  T* v_out = context.Output("VelocityOut")->data<T>();
  const int64_t n = param.numel();
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    const T velocity = mu * v[i] + g[i];
    v_out[i] = velocity;
    p_out[i] =
        nesterov ? p[i] - lr * (g[i] + mu * velocity) : p[i] - lr * velocity;
  }
  return absl::OkStatus();
}

// Adam with PyTorch's bias-corrected update, at step t (1 on the first
// update):
//   m = beta1 * m + (1 - beta1) * grad
//   v = beta2 * v + (1 - beta2) * grad^2
//   param -= lr * weight_decay * param              (decoupled: AdamW)
//   param -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + epsilon)
// As in Paddle, Beta1Pow and Beta2Pow hold beta1^t and beta2^t for the
// update being made (a startup net fills them with beta1 and beta2) and
// come out multiplied by beta1 and beta2 for the next one. The decay is
// applied to the parameter directly rather than added to the gradient, so
// it is not rescaled by the adaptive denominator (Loshchilov & Hutter);
// weight_decay 0 is plain Adam.
template <typename T>
absl::Status Adam(KernelContext& context) {
  const double beta1 = context.attrs().Get<float>("beta1");
  const double beta2 = context.attrs().Get<float>("beta2");
  const double epsilon = context.attrs().Get<float>("epsilon");
  const double weight_decay = context.attrs().Get<float>("weight_decay");
  const double lr = ReadScalar(context.Input("LearningRate"));
  const double beta1_pow = ReadScalar(context.Input("Beta1Pow"));
  const double beta2_pow = ReadScalar(context.Input("Beta2Pow"));
  for (const auto& [slot, pow] : {std::make_pair("Beta1Pow", beta1_pow),
                                  std::make_pair("Beta2Pow", beta2_pow)}) {
    // beta^t = 1 would divide by zero in the bias correction.
    SF_CHECK(pow >= 0 && pow < 1,
             "input \"%s\" (variable \"%s\") holds %g: expected beta^t in "
             "[0, 1)",
             slot, context.InputName(slot), pow);
  }

  const Tensor& param = context.Input("Param");
  const T* p = param.data<T>();
  const T* g = context.Input("Grad").data<T>();
  const T* m = context.Input("Moment1").data<T>();
  const T* v = context.Input("Moment2").data<T>();
  T* p_out = context.Output("ParamOut")->data<T>();
  T* m_out = context.Output("Moment1Out")->data<T>();
  T* v_out = context.Output("Moment2Out")->data<T>();

  const T b1 = static_cast<T>(beta1);
  const T b2 = static_cast<T>(beta2);
  const T eps = static_cast<T>(epsilon);
  const T decay = static_cast<T>(1 - lr * weight_decay);
  const T step_size = static_cast<T>(lr / (1 - beta1_pow));
  const T sqrt_correction2 = static_cast<T>(std::sqrt(1 - beta2_pow));
  const int64_t n = param.numel();
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    const T moment1 = b1 * m[i] + (1 - b1) * g[i];
    const T moment2 = b2 * v[i] + (1 - b2) * g[i] * g[i];
    m_out[i] = moment1;
    v_out[i] = moment2;
    const T denom = std::sqrt(moment2) / sqrt_correction2 + eps;
    p_out[i] = p[i] * decay - step_size * moment1 / denom;
  }
  WriteScalar(*context.Output("Beta1PowOut"), beta1_pow * beta1);
  WriteScalar(*context.Output("Beta2PowOut"), beta2_pow * beta2);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(sgd)
    .Input("Param")
    .Input("Grad")
    .Input("LearningRate")
    .Output("ParamOut")
    .InPlace("ParamOut", "Param")
    .Infer(InferParamUpdate)
    .Kernel(DeviceType::kCPU, kFloat32, &Sgd<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Sgd<double>);

SF_REGISTER_OP(momentum)
    .Input("Param")
    .Input("Grad")
    .Input("Velocity")
    .Input("LearningRate")
    .Output("ParamOut")
    .Output("VelocityOut")
    .InPlace("ParamOut", "Param")
    .InPlace("VelocityOut", "Velocity")
    .Attr("mu", AttrType::kFloat, AttrValue(0.9f), NonNegative())
    .Attr("use_nesterov", AttrType::kBool, AttrValue(false))
    .Infer(InferMomentum)
    .Kernel(DeviceType::kCPU, kFloat32, &Momentum<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Momentum<double>);

SF_REGISTER_OP(adam)
    .Input("Param")
    .Input("Grad")
    .Input("LearningRate")
    .Input("Moment1")
    .Input("Moment2")
    .Input("Beta1Pow")
    .Input("Beta2Pow")
    .Output("ParamOut")
    .Output("Moment1Out")
    .Output("Moment2Out")
    .Output("Beta1PowOut")
    .Output("Beta2PowOut")
    .InPlace("ParamOut", "Param")
    .InPlace("Moment1Out", "Moment1")
    .InPlace("Moment2Out", "Moment2")
    .InPlace("Beta1PowOut", "Beta1Pow")
    .InPlace("Beta2PowOut", "Beta2Pow")
    .Attr("beta1", AttrType::kFloat, AttrValue(0.9f), BelowOne())
    .Attr("beta2", AttrType::kFloat, AttrValue(0.999f), BelowOne())
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-8f), Positive())
    .Attr("weight_decay", AttrType::kFloat, AttrValue(0.0f), NonNegative())
    .Infer(InferAdam)
    .Kernel(DeviceType::kCPU, kFloat32, &Adam<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Adam<double>);

}  // namespace scopeflow
