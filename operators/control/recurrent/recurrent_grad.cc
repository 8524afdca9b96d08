// MakeRecurrentGrad and the recurrent_grad op it appends.
//
// The step block's gradient (a new block, operators/control/block_grad.h)
// differentiates the step's "targets" (its states, and the step outputs
// a gradient flows into) with respect to its ex_states, the step inputs and
// the Params. recurrent_grad runs it in each kept step scope, last step
// first, feeding each target's gradient: for a state, the gradient of the
// next step's ex_state (at the last step, FinalStates@GRAD); for a step
// output, its row of Out@GRAD; their sum for a name that is both. The
// ex_states' gradients carry on to the step before; at the first step they
// are InitStates@GRAD. X@GRAD stacks the step inputs' gradients, and
// Params@GRAD sums the steps' gradients of each parameter.
//
// recurrent_grad's slots: the forward X, InitStates and Params (the
// gradient block reads Params by lookup), the Out@GRAD and
// FinalStates@GRAD a gradient flows into, StepScopes; outputs X@GRAD,
// InitStates@GRAD, Params@GRAD (the wanted ones). Attributes: "targets"
// and "target_grads" (the name each target's gradient is fed under, ""
// where the gradient block does not read it), "target_state" (per target,
// its state index or -1), "out_grads_of" (per Out@GRAD, its target),
// "final_grads_of" (per FinalStates@GRAD, its state), "ex_state_grads" (per
// state, its ex_state's gradient in the block, "" if none), "x_of" /
// "x_grads", "init_of", "params_of" / "param_grads" (per output, its
// forward input and, for X and Params, its gradient's name in the block).
#include "operators/control/recurrent/recurrent_grad.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/block_runner.h"
#include "framework/op_spec.h"
#include "framework/prepared_net.h"
#include "framework/step_scopes.h"
#include "operators/control/block_grad.h"
#include "operators/control/step_tensors.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using Ints = std::vector<int32_t>;
using Strings = std::vector<std::string>;

// Whether any of `targets` is computed from `var` by the ops of `block`.
bool Reaches(const BlockDef& block, const std::string& var,
             const absl::flat_hash_set<std::string>& targets) {
  absl::flat_hash_set<std::string> tainted = {var};
  for (const OpDef& op : block.ops()) {
    bool reads = false;
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& name : slot.vars()) {
        reads = reads || tainted.contains(name);
      }
    }
    if (!reads) continue;
    for (const OpSlot& slot : op.outputs()) {
      tainted.insert(slot.vars().begin(), slot.vars().end());
    }
  }
  for (const std::string& target : targets) {
    if (tainted.contains(target)) return true;
  }
  return false;
}

bool AllEmpty(const Strings& names) {
  for (const std::string& name : names) {
    if (!name.empty()) return false;
  }
  return true;
}

}  // namespace

absl::Status MakeRecurrentGrad(GradOpContext& context) {
  const Strings x_grads = context.InputGrad("X");
  const Strings init_grads = context.InputGrad("InitStates");
  const Strings param_grads = context.InputGrad("Params");
  if (AllEmpty(x_grads) && AllEmpty(init_grads) && AllEmpty(param_grads)) {
    return absl::OkStatus();
  }
  SF_CHECK(context.prepared_forward() != nullptr && context.net() != nullptr,
           "recurrent: its gradient is made by AppendGradients, which knows "
           "the net");
  const Strings steps = context.Output("StepScopes");
  SF_CHECK(!steps.empty(),
           "recurrent: differentiating it needs its output \"StepScopes\" "
           "bound (the step scopes, kept for the gradient)");
  const Attributes& attrs = context.prepared_forward()->attrs;
  const Strings& step_inputs = attrs.Get<Strings>("step_inputs");
  const Strings& ex_states = attrs.Get<Strings>("ex_states");
  const Strings& states = attrs.Get<Strings>("states");
  const Strings& step_outputs = attrs.Get<Strings>("step_outputs");
  const Strings xs = context.Input("X");
  const Strings params = context.Input("Params");
  const Strings out_grads = context.OutputGrad("Out");
  const Strings final_grads = context.OutputGrad("FinalStates");

  // The targets: every state (its gradient carries to the step before),
  // then the step outputs a gradient flows into.
  Strings targets;
  Ints target_state;
  absl::flat_hash_map<std::string, int> target_of;
  auto add_target = [&](const std::string& name, int state) {
    auto [it, added] = target_of.emplace(name, targets.size());
    if (added) {
      targets.push_back(name);
      target_state.push_back(state);
    } else if (state >= 0) {
      target_state[it->second] = state;
    }
    return it->second;
  };
  for (size_t k = 0; k < states.size(); ++k) add_target(states[k], k);
  Ints out_grads_of;
  Strings out_grad_inputs;
  for (size_t j = 0; j < out_grads.size(); ++j) {
    if (out_grads[j].empty()) continue;
    out_grads_of.push_back(add_target(step_outputs[j], -1));
    out_grad_inputs.push_back(out_grads[j]);
  }
  Ints final_grads_of;
  Strings final_grad_inputs;
  for (size_t k = 0; k < final_grads.size(); ++k) {
    if (final_grads[k].empty()) continue;
    final_grads_of.push_back(static_cast<int32_t>(k));
    final_grad_inputs.push_back(final_grads[k]);
  }
  Strings target_grads;
  for (const std::string& target : targets) {
    target_grads.push_back(absl::StrCat(target, "@GRAD@step"));
  }

  // Differentiate only what the targets depend on.
  const int b = attrs.Get<BlockIndex>("sub_block").index;
  const BlockDef& body = context.net()->blocks(b);
  const absl::flat_hash_set<std::string> target_set(targets.begin(),
                                                    targets.end());
  Strings wrt;
  for (const std::string& name : ex_states) {
    if (Reaches(body, name, target_set)) wrt.push_back(name);
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!x_grads[i].empty() && Reaches(body, step_inputs[i], target_set)) {
      wrt.push_back(step_inputs[i]);
    }
  }
  for (size_t p = 0; p < params.size(); ++p) {
    if (!param_grads[p].empty() && Reaches(body, params[p], target_set)) {
      wrt.push_back(params[p]);
    }
  }
  SF_ASSIGN_OR_RETURN(
      BlockGradient block,
      AppendBlockGradient(context, "sub_block", targets, target_grads, wrt));
  absl::flat_hash_map<std::string, std::string> grad_of;
  for (size_t w = 0; w < wrt.size(); ++w) grad_of[wrt[w]] = block.grads[w];
  auto grad_name = [&](const std::string& name) {
    auto it = grad_of.find(name);
    return it == grad_of.end() ? std::string() : it->second;
  };

  OpDef& grad = context.AddOp("recurrent_grad");
  GradOpContext::SetInput(grad, "X", xs);
  GradOpContext::SetInput(grad, "InitStates", context.Input("InitStates"));
  GradOpContext::SetInput(grad, "Params", params);
  GradOpContext::SetInput(grad, "Out@GRAD", out_grad_inputs);
  GradOpContext::SetInput(grad, "FinalStates@GRAD", final_grad_inputs);
  GradOpContext::SetInput(grad, "StepScopes", steps);
  GradOpContext::SetOutput(grad, "X@GRAD", x_grads);
  GradOpContext::SetOutput(grad, "InitStates@GRAD", init_grads);
  GradOpContext::SetOutput(grad, "Params@GRAD", param_grads);
  GradOpContext::SetAttr(grad, "grad_block", BlockIndex{block.block});
  GradOpContext::SetAttr(grad, "reverse", attrs.Get<bool>("reverse"));
  GradOpContext::SetAttr(grad, "targets", targets);
  GradOpContext::SetAttr(grad, "target_grads", target_grads);
  GradOpContext::SetAttr(grad, "target_state", target_state);
  GradOpContext::SetAttr(grad, "out_grads_of", out_grads_of);
  GradOpContext::SetAttr(grad, "final_grads_of", final_grads_of);
  Strings ex_state_grads;
  for (const std::string& name : ex_states) {
    ex_state_grads.push_back(grad_name(name));
  }
  GradOpContext::SetAttr(grad, "ex_state_grads", ex_state_grads);
  Ints x_of, init_of, params_of;
  Strings x_grad_names, param_grad_names;
  for (size_t i = 0; i < x_grads.size(); ++i) {
    if (x_grads[i].empty()) continue;
    x_of.push_back(static_cast<int32_t>(i));
    x_grad_names.push_back(grad_name(step_inputs[i]));
  }
  for (size_t k = 0; k < init_grads.size(); ++k) {
    if (!init_grads[k].empty()) init_of.push_back(static_cast<int32_t>(k));
  }
  for (size_t p = 0; p < param_grads.size(); ++p) {
    if (param_grads[p].empty()) continue;
    params_of.push_back(static_cast<int32_t>(p));
    param_grad_names.push_back(grad_name(params[p]));
  }
  GradOpContext::SetAttr(grad, "x_of", x_of);
  GradOpContext::SetAttr(grad, "x_grads", x_grad_names);
  GradOpContext::SetAttr(grad, "init_of", init_of);
  GradOpContext::SetAttr(grad, "params_of", params_of);
  GradOpContext::SetAttr(grad, "param_grads", param_grad_names);
  return absl::OkStatus();
}

}  // namespace scopeflow
