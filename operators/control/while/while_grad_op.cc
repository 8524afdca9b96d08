// The while_grad op that MakeWhileGrad (while_grad.cc) appends. Slots:
// the forward op's Condition, X and Out (the gradient block reads X and
// the carried start values through them), Out@GRAD (the gradients of the
// final carried values it has) and StepScopes; outputs X@GRAD and
// Init@GRAD. Attributes, per floating carried variable k ("carried": its
// position in Out): "versions" (its last version in the body, "" if the
// body does not write it), "start_grads" (the name of the gradient of its
// start value in grad_block, "" if none flows there), "feed_grads" (the
// name grad_block is fed the gradient of its last version under, "" if
// none); "out_grads_of" maps Out@GRAD to k, "x_of" X@GRAD to X, "init_of"
// Init@GRAD to k, and "x_grads" names each X@GRAD in grad_block ("" if
// none flows there).
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/block_runner.h"
#include "framework/op_spec.h"
#include "framework/prepared_net.h"
#include "framework/step_scopes.h"
#include "operators/control/step_tensors.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using Ints = std::vector<int32_t>;
using Strings = std::vector<std::string>;

struct Plan {
  const Ints& carried;
  const Strings& versions;
  const Strings& start_grads;
  const Strings& feed_grads;
  const Ints& out_grads_of;
  const Ints& x_of;
  const Strings& x_grads;
  const Ints& init_of;
};

Plan PlanOf(const Attributes& attrs) {
  return Plan{
      attrs.Get<Ints>("carried"),        attrs.Get<Strings>("versions"),
      attrs.Get<Strings>("start_grads"), attrs.Get<Strings>("feed_grads"),
      attrs.Get<Ints>("out_grads_of"),   attrs.Get<Ints>("x_of"),
      attrs.Get<Strings>("x_grads"),     attrs.Get<Ints>("init_of")};
}

absl::Status InferWhileGrad(InferContext& context) {
  const Plan plan = PlanOf(context.attrs());
  const size_t k = plan.carried.size();
  SF_CHECK(plan.versions.size() == k && plan.start_grads.size() == k &&
               plan.feed_grads.size() == k,
           "attributes \"versions\", \"start_grads\" and \"feed_grads\" must "
           "each have one entry per \"carried\" (%d), got %d, %d and %d",
           k, plan.versions.size(), plan.start_grads.size(),
           plan.feed_grads.size());
  auto in_range = [](const Ints& indices, int count) {
    for (int32_t i : indices) {
      if (i < 0 || i >= count) return false;
    }
    return true;
  };
  SF_CHECK(in_range(plan.carried, context.InputCount("Out")) &&
               in_range(plan.out_grads_of, static_cast<int>(k)) &&
               in_range(plan.init_of, static_cast<int>(k)) &&
               in_range(plan.x_of, context.InputCount("X")),
           "attributes \"carried\", \"out_grads_of\", \"init_of\" or \"x_of\" "
           "index past their slots");
  SF_CHECK(
      static_cast<int>(plan.out_grads_of.size()) ==
              context.InputCount("Out@GRAD") &&
          static_cast<int>(plan.x_of.size()) == context.OutputCount("X@GRAD") &&
          plan.x_grads.size() == plan.x_of.size() &&
          static_cast<int>(plan.init_of.size()) ==
              context.OutputCount("Init@GRAD"),
      "attributes \"out_grads_of\", \"x_of\", \"x_grads\" and "
      "\"init_of\" must have one entry per Out@GRAD, X@GRAD, X@GRAD and "
      "Init@GRAD");
  for (size_t i = 0; i < plan.x_of.size(); ++i) {
    context.SetOutput("X@GRAD", static_cast<int>(i),
                      context.Input("X", plan.x_of[i]));
  }
  for (size_t i = 0; i < plan.init_of.size(); ++i) {
    context.SetOutput("Init@GRAD", static_cast<int>(i),
                      context.Input("Out", plan.carried[plan.init_of[i]]));
  }
  return absl::OkStatus();
}

absl::Status WhileGradKernel(KernelContext& context) {
  const Plan plan = PlanOf(context.attrs());
  const std::string& steps_name = context.InputName("StepScopes");
  Variable* var = context.scope()->FindVar(steps_name);
  SF_CHECK(var != nullptr && var->IsType<StepScopes>(),
           "input \"StepScopes\" (variable \"%s\") holds no scopes of the "
           "loop's iterations: run the forward while with output "
           "\"StepScopes\" bound first",
           steps_name);
  StepScopes& steps = *var->GetMutable<StepScopes>().value();
  const int n = static_cast<int>(plan.carried.size());

  // g[k]: the gradient of carried variable k at the end of the iteration
  // being differentiated; none flowing in is zero.
  std::vector<Tensor> g(n);
  for (size_t i = 0; i < plan.out_grads_of.size(); ++i) {
    g[plan.out_grads_of[i]] = context.Input("Out@GRAD", static_cast<int>(i));
  }
  for (int k = 0; k < n; ++k) {
    const Tensor& out = context.Input("Out", plan.carried[k]);
    if (!g[k].initialized() && out.initialized()) {
      SF_ASSIGN_OR_RETURN(g[k], ZerosLike(out));
    }
  }
  std::vector<std::string> fetches;
  std::vector<int> start_at(n, -1);
  std::vector<int> x_at(plan.x_of.size(), -1);
  for (int k = 0; k < n; ++k) {
    if (plan.start_grads[k].empty()) continue;
    start_at[k] = static_cast<int>(fetches.size());
    fetches.push_back(plan.start_grads[k]);
  }
  for (size_t i = 0; i < plan.x_of.size(); ++i) {
    if (plan.x_grads[i].empty()) continue;
    x_at[i] = static_cast<int>(fetches.size());
    fetches.push_back(plan.x_grads[i]);
  }

  const PreparedNet& block = *context.Block("grad_block");
  std::vector<Tensor> gx(plan.x_of.size());
  for (int t = steps.size() - 1; t >= 0; --t) {
    std::vector<Tensor> values;
    if (!fetches.empty()) {
      std::vector<Feed> feeds;
      for (int k = 0; k < n; ++k) {
        if (!plan.feed_grads[k].empty()) {
          feeds.push_back({plan.feed_grads[k], g[k]});
        }
      }
      absl::StatusOr<std::vector<Tensor>> run =
          context.executor()->RunInScope(block, steps.at(t), feeds, fetches);
      if (!run.ok()) {
        return absl::Status(
            run.status().code(),
            absl::StrFormat("iteration %d: %s", t, run.status().message()));
      }
      values = *std::move(run);
    }
    for (int k = 0; k < n; ++k) {
      const std::string& name = context.InputName("Out", plan.carried[k]);
      if (!plan.versions[k].empty()) {
        // Written by the body: its start value's gradient is all there is.
        if (start_at[k] >= 0) {
          g[k] = values[start_at[k]];
        } else if (g[k].initialized()) {
          SF_ASSIGN_OR_RETURN(g[k], ZerosLike(g[k]));
        }
      } else if (start_at[k] >= 0) {
        // Only read: it passes through the iteration unchanged.
        SF_ASSIGN_OR_RETURN(g[k], Sum(g[k], values[start_at[k]], name));
      }
    }
    for (size_t i = 0; i < x_at.size(); ++i) {
      if (x_at[i] < 0) continue;
      const Tensor& part = values[x_at[i]];
      if (gx[i].initialized()) {
        SF_ASSIGN_OR_RETURN(
            gx[i], Sum(gx[i], part, context.InputName("X", plan.x_of[i])));
      } else {
        gx[i] = part;
      }
    }
  }

  for (size_t i = 0; i < plan.init_of.size(); ++i) {
    const int k = plan.init_of[i];
    SF_CHECK(g[k].initialized(),
             "no gradient for output \"Init@GRAD\" (variable \"%s\"): carried "
             "variable \"%s\" holds no value",
             context.OutputName("Init@GRAD", static_cast<int>(i)),
             context.InputName("Out", plan.carried[k]));
    context.Output("Init@GRAD", static_cast<int>(i))->ShareBufferWith(g[k]);
  }
  for (size_t i = 0; i < plan.x_of.size(); ++i) {
    if (!gx[i].initialized()) {
      // No iteration ran, or the carried values do not depend on it.
      SF_ASSIGN_OR_RETURN(gx[i], ZerosLike(context.Input("X", plan.x_of[i])));
    }
    context.Output("X@GRAD", static_cast<int>(i))->ShareBufferWith(gx[i]);
  }
  // The iterations' scopes are dropped once the gradient has run.
  steps.Clear();
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(while_grad)
    .Input("Condition")
    .Input("X", /*optional=*/true, /*variadic=*/true)
    .Input("Out", /*optional=*/false, /*variadic=*/true)
    .Input("Out@GRAD", /*optional=*/true, /*variadic=*/true)
    .ScopesInput("StepScopes")
    .Output("X@GRAD", /*optional=*/true, /*variadic=*/true)
    .Output("Init@GRAD", /*optional=*/true, /*variadic=*/true)
    .Attr("grad_block", AttrType::kBlock)
    .Attr("carried", AttrType::kInts, AttrValue(Ints{}))
    .Attr("versions", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("start_grads", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("feed_grads", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("out_grads_of", AttrType::kInts, AttrValue(Ints{}))
    .Attr("x_of", AttrType::kInts, AttrValue(Ints{}))
    .Attr("x_grads", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("init_of", AttrType::kInts, AttrValue(Ints{}))
    .ControlFlow()
    .Infer(InferWhileGrad)
    .KernelDtypeFromInput("Condition")
    .Kernel(DeviceType::kCPU, kBool, &WhileGradKernel);

}  // namespace scopeflow
