// The step counter and the learning rate of a training net: increment
// advances a one-element counter in place, lr_schedule turns the counter
// into the learning rate the optimizer ops read. Both counter and rate are
// persistable variables, so a resumed run continues the schedule.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/optimizer/update_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr double kPi = 3.14159265358979323846;

absl::Status InferLrSchedule(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtype(context, "Step", kInt64));
  SF_RETURN_IF_ERROR(CheckOneElement(context, "Step"));
  const Attributes& attrs = context.attrs();
  const float base_lr = attrs.Get<float>("base_lr");
  const float min_lr = attrs.Get<float>("min_lr");
  SF_CHECK(min_lr <= base_lr,
           "attribute \"min_lr\" (%g) must not exceed \"base_lr\" (%g) for "
           "output \"LearningRate\" (variable \"%s\")",
           min_lr, base_lr, context.OutputName("LearningRate"));
  SF_CHECK(attrs.Get<std::string>("policy") != "cosine" ||
               attrs.Get<int64_t>("total_steps") > 0,
           "policy \"cosine\" needs attribute \"total_steps\" > 0 (the steps "
           "to decay over) for output \"LearningRate\" (variable \"%s\")",
           context.OutputName("LearningRate"));
  context.SetOutput("LearningRate", 0, kFloat32, {1});
  return absl::OkStatus();
}

// The learning rate for the update made at `step` (0 for the first).
//
// With warmup_steps W > 0, steps 0 .. W-1 rise linearly to base_lr as
// base_lr * (step + 1) / W: the first update already moves the parameters
// (a rate of 0 there would waste it) and step W-1 reaches base_lr. The
// policy then runs on t = step - W, the steps since warm-up ended:
//   constant:    base_lr
//   step:        max(min_lr, base_lr * gamma^floor(t / step_size))
//   exponential: max(min_lr, base_lr * gamma^t)
//   cosine:      min_lr + (base_lr - min_lr) * (1 + cos(pi * min(t, T) / T))
//                / 2, with T = total_steps: down to min_lr over T steps,
//                then min_lr.
double LearningRateAt(int64_t step, const Attributes& attrs) {
  const double base_lr = attrs.Get<float>("base_lr");
  const double min_lr = attrs.Get<float>("min_lr");
  const int64_t warmup = attrs.Get<int64_t>("warmup_steps");
  if (step < warmup) {
    return base_lr * static_cast<double>(step + 1) /
           static_cast<double>(warmup);
  }
  const int64_t t = step - warmup;
  const std::string& policy = attrs.Get<std::string>("policy");
  const double gamma = attrs.Get<float>("gamma");
  if (policy == "step") {
    const int64_t stages = t / attrs.Get<int64_t>("step_size");
    return std::max(min_lr,
                    base_lr * std::pow(gamma, static_cast<double>(stages)));
  }
  if (policy == "exponential") {
    return std::max(min_lr, base_lr * std::pow(gamma, static_cast<double>(t)));
  }
  if (policy == "cosine") {
    const int64_t total = attrs.Get<int64_t>("total_steps");
    const double progress =
        static_cast<double>(std::min(t, total)) / static_cast<double>(total);
    return min_lr + (base_lr - min_lr) * 0.5 * (1 + std::cos(kPi * progress));
  }
  return base_lr;
}

absl::Status LrSchedule(KernelContext& context) {
  const int64_t step = *context.Input("Step").data<int64_t>();
  SF_CHECK(step >= 0,
           "input \"Step\" (variable \"%s\") holds %d: expected a step count "
           ">= 0",
           context.InputName("Step"), step);
  *context.Output("LearningRate")->data<float>() =
      static_cast<float>(LearningRateAt(step, context.attrs()));
  return absl::OkStatus();
}

absl::Status InferIncrement(InferContext& context) {
  SF_RETURN_IF_ERROR(
      CheckDtypeIn(context, "X", {kInt64, kInt32, kFloat32, kFloat64}));
  SF_RETURN_IF_ERROR(CheckOneElement(context, "X"));
  const DataType dtype = context.Input("X").dtype;
  const float step = context.attrs().Get<float>("step");
  SF_CHECK((dtype != kInt64 && dtype != kInt32) ||
               (std::isfinite(step) && step == std::trunc(step)),
           "attribute \"step\" = %g is not a whole number, but input \"X\" "
           "(variable \"%s\") is %s",
           step, context.InputName("X"), DataTypeName(dtype));
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

template <typename T>
absl::Status Increment(KernelContext& context) {
  const T x = *context.Input("X").data<T>();
  *context.Output("Out")->data<T>() =
      x + static_cast<T>(context.attrs().Get<float>("step"));
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(lr_schedule)
    .Input("Step")
    .Output("LearningRate")
    .Attr("base_lr", AttrType::kFloat, NonNegative())
    .Attr("policy", AttrType::kString, AttrValue(std::string("constant")),
          OneOf({"constant", "step", "exponential", "cosine"}))
    .Attr("step_size", AttrType::kInt64, AttrValue(int64_t{1000}), Positive())
    .Attr("gamma", AttrType::kFloat, AttrValue(0.1f), Positive())
    .Attr("total_steps", AttrType::kInt64, AttrValue(int64_t{0}), NonNegative())
    .Attr("warmup_steps", AttrType::kInt64, AttrValue(int64_t{0}),
          NonNegative())
    .Attr("min_lr", AttrType::kFloat, AttrValue(0.0f), NonNegative())
    .Infer(InferLrSchedule)
    .Kernel(DeviceType::kCPU, kInt64, &LrSchedule);

// Out = X + step; Out is usually X itself (a counter kept in a persistable
// variable), updated in place.
SF_REGISTER_OP(increment)
    .Input("X")
    .Output("Out")
    .InPlace("Out", "X")
    .Attr("step", AttrType::kFloat, AttrValue(1.0f))
    .Infer(InferIncrement)
    .Kernel(DeviceType::kCPU, kInt64, &Increment<int64_t>)
    .Kernel(DeviceType::kCPU, kInt32, &Increment<int32_t>)
    .Kernel(DeviceType::kCPU, kFloat32, &Increment<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Increment<double>);

}  // namespace scopeflow
