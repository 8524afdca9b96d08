// The recurrent_grad op that MakeRecurrentGrad (recurrent_grad.cc) appends;
// its slots and attributes are described there.
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
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
  const Strings& targets;
  const Strings& target_grads;
  const Ints& target_state;
  const Ints& out_grads_of;
  const Ints& final_grads_of;
  const Strings& ex_state_grads;
  const Ints& x_of;
  const Strings& x_grads;
  const Ints& init_of;
  const Ints& params_of;
  const Strings& param_grads;
};

Plan PlanOf(const Attributes& attrs) {
  return Plan{
      attrs.Get<Strings>("targets"),     attrs.Get<Strings>("target_grads"),
      attrs.Get<Ints>("target_state"),   attrs.Get<Ints>("out_grads_of"),
      attrs.Get<Ints>("final_grads_of"), attrs.Get<Strings>("ex_state_grads"),
      attrs.Get<Ints>("x_of"),           attrs.Get<Strings>("x_grads"),
      attrs.Get<Ints>("init_of"),        attrs.Get<Ints>("params_of"),
      attrs.Get<Strings>("param_grads")};
}

bool InRange(const Ints& indices, int count) {
  for (int32_t i : indices) {
    if (i < -1 || i >= count) return false;
  }
  return true;
}

absl::Status InferRecurrentGrad(InferContext& context) {
  const Plan plan = PlanOf(context.attrs());
  const int num_targets = static_cast<int>(plan.targets.size());
  const int num_states = static_cast<int>(plan.ex_state_grads.size());
  SF_CHECK(plan.target_grads.size() == plan.targets.size() &&
               plan.target_state.size() == plan.targets.size(),
           "attributes \"target_grads\" and \"target_state\" must have one "
           "entry per target (%d), got %d and %d",
           num_targets, plan.target_grads.size(), plan.target_state.size());
  SF_CHECK(context.InputCount("InitStates") == num_states,
           "%d inputs \"InitStates\" for %d entries of \"ex_state_grads\"",
           context.InputCount("InitStates"), num_states);
  SF_CHECK(
      static_cast<int>(plan.out_grads_of.size()) ==
              context.InputCount("Out@GRAD") &&
          static_cast<int>(plan.final_grads_of.size()) ==
              context.InputCount("FinalStates@GRAD") &&
          static_cast<int>(plan.x_of.size()) == context.OutputCount("X@GRAD") &&
          plan.x_grads.size() == plan.x_of.size() &&
          static_cast<int>(plan.init_of.size()) ==
              context.OutputCount("InitStates@GRAD") &&
          static_cast<int>(plan.params_of.size()) ==
              context.OutputCount("Params@GRAD") &&
          plan.param_grads.size() == plan.params_of.size(),
      "attributes \"out_grads_of\", \"final_grads_of\", \"x_of\", "
      "\"x_grads\", \"init_of\", \"params_of\" and \"param_grads\" must have "
      "one entry per Out@GRAD, FinalStates@GRAD, X@GRAD, X@GRAD, "
      "InitStates@GRAD, Params@GRAD and Params@GRAD");
  SF_CHECK(InRange(plan.target_state, num_states) &&
               InRange(plan.out_grads_of, num_targets) &&
               InRange(plan.final_grads_of, num_states) &&
               InRange(plan.x_of, context.InputCount("X")) &&
               InRange(plan.init_of, num_states) &&
               InRange(plan.params_of, context.InputCount("Params")),
           "attributes \"target_state\", \"out_grads_of\", "
           "\"final_grads_of\", \"x_of\", \"init_of\" or \"params_of\" index "
           "past their slots");
  for (size_t i = 0; i < plan.x_of.size(); ++i) {
    context.SetOutput("X@GRAD", static_cast<int>(i),
                      context.Input("X", plan.x_of[i]));
  }
  for (size_t i = 0; i < plan.init_of.size(); ++i) {
    context.SetOutput("InitStates@GRAD", static_cast<int>(i),
                      context.Input("InitStates", plan.init_of[i]));
  }
  for (size_t i = 0; i < plan.params_of.size(); ++i) {
    context.SetOutput("Params@GRAD", static_cast<int>(i),
                      context.Input("Params", plan.params_of[i]));
  }
  return absl::OkStatus();
}

// The forward value of `name` in a step scope: what a gradient of it is
// shaped like.
absl::StatusOr<const Tensor*> StepValue(const Scope& step,
                                        const std::string& name) {
  const Variable* var = step.FindLocalVar(name);
  SF_CHECK(var != nullptr && var->IsType<Tensor>(),
           "the step scope holds no value of \"%s\"", name);
  return var->Get<Tensor>();
}

absl::Status RecurrentGradKernel(KernelContext& context) {
  const Plan plan = PlanOf(context.attrs());
  const bool reverse = context.attrs().Get<bool>("reverse");
  const std::string& steps_name = context.InputName("StepScopes");
  Variable* var = context.scope()->FindVar(steps_name);
  SF_CHECK(var != nullptr && var->IsType<StepScopes>(),
           "input \"StepScopes\" (variable \"%s\") holds no step scopes: run "
           "the forward recurrent with output \"StepScopes\" bound first",
           steps_name);
  StepScopes& scopes = *var->GetMutable<StepScopes>().value();
  const int64_t steps = context.Input("X", 0).dim(0);
  SF_CHECK(scopes.size() == steps,
           "input \"StepScopes\" (variable \"%s\") holds %d step scopes for "
           "a sequence of %d steps",
           steps_name, scopes.size(), steps);
  const PreparedNet& block = *context.Block("grad_block");
  const absl::flat_hash_set<std::string> fed(block.input_names().begin(),
                                             block.input_names().end());

  // What each step's run of the gradient block gives back.
  Strings fetches;
  auto fetch = [&fetches](const std::string& name) {
    if (name.empty()) return -1;
    fetches.push_back(name);
    return static_cast<int>(fetches.size()) - 1;
  };
  std::vector<int> ex_state_at, x_at, param_at;
  for (const std::string& name : plan.ex_state_grads) {
    ex_state_at.push_back(fetch(name));
  }
  for (const std::string& name : plan.x_grads) x_at.push_back(fetch(name));
  for (const std::string& name : plan.param_grads) {
    param_at.push_back(fetch(name));
  }

  // carry[k]: the gradient of state k after the step being differentiated
  // (none: zero).
  std::vector<Tensor> carry(plan.ex_state_grads.size());
  for (size_t i = 0; i < plan.final_grads_of.size(); ++i) {
    carry[plan.final_grads_of[i]] =
        context.Input("FinalStates@GRAD", static_cast<int>(i));
  }
  std::vector<Tensor> gx(plan.x_of.size());
  for (size_t i = 0; i < plan.x_of.size(); ++i) {
    SF_ASSIGN_OR_RETURN(gx[i], ZerosLike(context.Input("X", plan.x_of[i])));
  }
  std::vector<Tensor> gp(plan.params_of.size());

  for (int64_t s = steps - 1; s >= 0; --s) {
    const int64_t t = reverse ? steps - 1 - s : s;
    Scope& step = scopes.at(static_cast<int>(s));
    std::vector<Feed> feeds;
    for (size_t u = 0; u < plan.targets.size(); ++u) {
      if (!fed.contains(plan.target_grads[u])) continue;
      const std::string& target = plan.targets[u];
      Tensor g;
      if (plan.target_state[u] >= 0) g = carry[plan.target_state[u]];
      for (size_t i = 0; i < plan.out_grads_of.size(); ++i) {
        if (plan.out_grads_of[i] != static_cast<int32_t>(u)) continue;
        SF_ASSIGN_OR_RETURN(
            Tensor row,
            StepOf(context.Input("Out@GRAD", static_cast<int>(i)), t));
        if (g.initialized()) {
          SF_ASSIGN_OR_RETURN(g, Sum(g, row, target));
        } else {
          g = std::move(row);
        }
      }
      if (!g.initialized()) {
        SF_ASSIGN_OR_RETURN(const Tensor* value, StepValue(step, target));
        SF_ASSIGN_OR_RETURN(g, ZerosLike(*value));
      }
      feeds.push_back({plan.target_grads[u], std::move(g)});
    }
    absl::StatusOr<std::vector<Tensor>> ran =
        context.executor()->RunInScope(block, step, feeds, fetches);
    if (!ran.ok()) {
      return absl::Status(
          ran.status().code(),
          absl::StrFormat("step %d: %s", t, ran.status().message()));
    }
    for (size_t k = 0; k < carry.size(); ++k) {
      carry[k] = ex_state_at[k] >= 0 ? (*ran)[ex_state_at[k]] : Tensor();
    }
    for (size_t i = 0; i < x_at.size(); ++i) {
      if (x_at[i] < 0) continue;
      SF_RETURN_IF_ERROR(CopyIntoStep((*ran)[x_at[i]], t, steps,
                                      context.place(), gx[i],
                                      context.OutputName("X@GRAD", i)));
    }
    for (size_t i = 0; i < param_at.size(); ++i) {
      if (param_at[i] < 0) continue;
      const Tensor& part = (*ran)[param_at[i]];
      if (gp[i].initialized()) {
        SF_ASSIGN_OR_RETURN(
            gp[i], Sum(gp[i], part, context.OutputName("Params@GRAD", i)));
      } else {
        gp[i] = part;
      }
    }
  }

  for (size_t i = 0; i < plan.x_of.size(); ++i) {
    context.Output("X@GRAD", static_cast<int>(i))->ShareBufferWith(gx[i]);
  }
  for (size_t i = 0; i < plan.init_of.size(); ++i) {
    Tensor g = carry[plan.init_of[i]];
    if (!g.initialized()) {
      SF_ASSIGN_OR_RETURN(
          g, ZerosLike(context.Input("InitStates", plan.init_of[i])));
    }
    context.Output("InitStates@GRAD", static_cast<int>(i))->ShareBufferWith(g);
  }
  for (size_t i = 0; i < plan.params_of.size(); ++i) {
    if (!gp[i].initialized()) {
      SF_ASSIGN_OR_RETURN(
          gp[i], ZerosLike(context.Input("Params", plan.params_of[i])));
    }
    context.Output("Params@GRAD", static_cast<int>(i))->ShareBufferWith(gp[i]);
  }
  // The step scopes are dropped once the gradient has run.
  scopes.Clear();
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(recurrent_grad)
    .Input("X", /*optional=*/false, /*variadic=*/true)
    .Input("InitStates", /*optional=*/true, /*variadic=*/true)
    .Input("Params", /*optional=*/true, /*variadic=*/true)
    .Input("Out@GRAD", /*optional=*/true, /*variadic=*/true)
    .Input("FinalStates@GRAD", /*optional=*/true, /*variadic=*/true)
    .ScopesInput("StepScopes")
    .Output("X@GRAD", /*optional=*/true, /*variadic=*/true)
    .Output("InitStates@GRAD", /*optional=*/true, /*variadic=*/true)
    .Output("Params@GRAD", /*optional=*/true, /*variadic=*/true)
    .Attr("grad_block", AttrType::kBlock)
    .Attr("reverse", AttrType::kBool, AttrValue(false))
    .Attr("targets", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("target_grads", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("target_state", AttrType::kInts, AttrValue(Ints{}))
    .Attr("out_grads_of", AttrType::kInts, AttrValue(Ints{}))
    .Attr("final_grads_of", AttrType::kInts, AttrValue(Ints{}))
    .Attr("ex_state_grads", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("x_of", AttrType::kInts, AttrValue(Ints{}))
    .Attr("x_grads", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("init_of", AttrType::kInts, AttrValue(Ints{}))
    .Attr("params_of", AttrType::kInts, AttrValue(Ints{}))
    .Attr("param_grads", AttrType::kStrings, AttrValue(Strings{}))
    .ControlFlow()
    .Infer(InferRecurrentGrad)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &RecurrentGradKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &RecurrentGradKernel)
    .Kernel(DeviceType::kCPU, kInt32, &RecurrentGradKernel)
    .Kernel(DeviceType::kCPU, kInt64, &RecurrentGradKernel);

}  // namespace scopeflow
