// recurrent: runs its step block once per time step of sequence inputs
// (Paddle's recurrent op). Step t sees X[i][t] as the step block's variable
// step_inputs[i] and the previous step's states[k] as ex_states[k] (at the
// first step, InitStates[k]); the step block reads the enclosing variables
// listed in Params (weights) by lookup. Out[j] stacks the steps' values of
// step_outputs[j] along a new axis 0 ([T, ...]); FinalStates[k] is the last
// step's states[k]. With `reverse`, the steps run from t = T-1 down to 0
// (Out stays in time order). When training (StepScopes bound) every step
// runs in its own step scope, kept for recurrent_grad; otherwise each
// step's temporaries die with it, so a sequence of any length runs in the
// memory of one step.
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "framework/block_runner.h"
#include "framework/op_spec.h"
#include "framework/prepared_net.h"
#include "framework/step_scopes.h"
#include "operators/common.h"
#include "operators/control/recurrent/recurrent_grad.h"
#include "operators/control/step_tensors.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using Strings = std::vector<std::string>;

std::vector<std::string> StringsAttr(const OpDef& op, absl::string_view name) {
  for (const AttrDef& attr : op.attrs()) {
    if (attr.name() == name) {
      return {attr.strings().values().begin(), attr.strings().values().end()};
    }
  }
  return {};
}

// At Prepare, before the step block is prepared: the names fed at each
// step must be declared in it (with the dtype and shape of what is fed),
// or they would resolve to an enclosing variable or be undefined.
absl::StatusOr<BlockDef> CheckStepBlock(const OpDef& op,
                                        const std::string& /*attr*/,
                                        const BlockDef& block) {
  absl::flat_hash_set<std::string> declared;
  for (const VarDef& var : block.vars()) declared.insert(var.name());
  absl::flat_hash_set<std::string> fed;
  for (const char* attr : {"step_inputs", "ex_states"}) {
    for (const std::string& name : StringsAttr(op, attr)) {
      SF_CHECK(declared.contains(name),
               "%s \"%s\" is not declared in the step block's vars: declare "
               "it there with the dtype and shape of what each step is fed",
               attr, name);
      SF_CHECK(fed.insert(name).second,
               "\"%s\" is named twice among step_inputs and ex_states", name);
    }
  }
  return block;
}

absl::Status InferRecurrent(InferContext& context) {
  const Attributes& attrs = context.attrs();
  const Strings& step_inputs = attrs.Get<Strings>("step_inputs");
  const Strings& ex_states = attrs.Get<Strings>("ex_states");
  const Strings& states = attrs.Get<Strings>("states");
  const Strings& step_outputs = attrs.Get<Strings>("step_outputs");
  const int num_x = context.InputCount("X");
  const int num_states = static_cast<int>(states.size());
  SF_CHECK(static_cast<int>(step_inputs.size()) == num_x,
           "attribute \"step_inputs\" names %d variables for %d inputs \"X\"",
           step_inputs.size(), num_x);
  SF_CHECK(ex_states.size() == states.size(),
           "attribute \"ex_states\" names %d variables but \"states\" %d: "
           "ex_states[k] is the previous step's states[k]",
           ex_states.size(), states.size());
  SF_CHECK(context.InputCount("InitStates") == num_states,
           "%d inputs \"InitStates\" for %d states: InitStates[k] is the "
           "first step's ex_states[k]",
           context.InputCount("InitStates"), num_states);
  SF_CHECK(static_cast<int>(step_outputs.size()) == context.OutputCount("Out"),
           "attribute \"step_outputs\" names %d variables for %d outputs "
           "\"Out\"",
           step_outputs.size(), context.OutputCount("Out"));
  SF_CHECK(!context.HasOutput("FinalStates") ||
               context.OutputCount("FinalStates") == num_states,
           "%d outputs \"FinalStates\" for %d states",
           context.OutputCount("FinalStates"), num_states);
  SF_CHECK(num_x > 0,
           "needs at least one sequence input \"X\": its dimension 0 is the "
           "number of steps");

  int64_t steps = -1;
  int first = -1;
  for (int i = 0; i < num_x; ++i) {
    const VarInfo& x = context.Input("X", i);
    if (!x.has_dims) continue;
    SF_CHECK(!x.dims.empty(),
             "input \"X\" (variable \"%s\") is a scalar; a sequence input is "
             "[T, ...], time first",
             context.InputName("X", i));
    if (x.dims[0] < 0) continue;
    SF_CHECK(steps < 0 || x.dims[0] == steps,
             "sequence inputs differ in length: \"%s\" has %d steps, \"%s\" "
             "has %d",
             context.InputName("X", first), steps, context.InputName("X", i),
             x.dims[0]);
    steps = x.dims[0];
    first = i;
  }
  for (int k = 0; k < num_states && context.HasOutput("FinalStates"); ++k) {
    context.SetOutput("FinalStates", k, context.Input("InitStates", k));
  }
  // An output that is a state or a step input has its shape known from
  // outside; any other keeps what the enclosing block declares of it (the
  // kernel's result is checked against that).
  for (size_t j = 0; j < step_outputs.size(); ++j) {
    // A state's shape is one step's; a step input's has the steps first.
    const VarInfo* source = nullptr;
    bool has_steps = false;
    for (int k = 0; k < num_states && source == nullptr; ++k) {
      if (states[k] == step_outputs[j]) {
        source = &context.Input("InitStates", k);
      }
    }
    for (int i = 0; i < num_x && source == nullptr; ++i) {
      if (step_inputs[i] == step_outputs[j]) {
        source = &context.Input("X", i);
        has_steps = true;
      }
    }
    if (source == nullptr) continue;
    VarInfo out = *source;
    if (out.has_dims) {
      if (has_steps) out.dims.erase(out.dims.begin());
      out.dims.insert(out.dims.begin(), steps);
    }
    context.SetOutput("Out", static_cast<int>(j), out);
  }
  return absl::OkStatus();
}

// The number of steps, the same for every sequence input.
absl::StatusOr<int64_t> StepCount(const KernelContext& context) {
  int64_t steps = -1;
  for (int i = 0; i < context.InputCount("X"); ++i) {
    const Tensor& x = context.Input("X", i);
    SF_CHECK(x.initialized() && x.rank() >= 1,
             "input \"X\" (variable \"%s\") must be a sequence [T, ...], got "
             "%s",
             context.InputName("X", i), x.DebugString());
    SF_CHECK(steps < 0 || x.dim(0) == steps,
             "sequence inputs differ in length: \"%s\" has %d steps, \"%s\" "
             "has %d",
             context.InputName("X", 0), steps, context.InputName("X", i),
             x.dim(0));
    steps = x.dim(0);
  }
  SF_CHECK(steps > 0,
           "input \"X\" (variable \"%s\") holds no step (dimension 0 is 0)",
           context.InputName("X", 0));
  return steps;
}

// The step block's variables the op fetches after each step must be its
// own: a name it neither declares nor writes would be an enclosing one.
absl::Status CheckFetched(const PreparedNet& block, const Strings& names,
                          const char* attr) {
  for (const std::string& name : names) {
    const int v = block.VarIndex(name);
    SF_CHECK(v >= 0 && !block.is_external(v),
             "attribute \"%s\": \"%s\" is not a variable of the step block "
             "(one it declares or writes)",
             attr, name);
  }
  return absl::OkStatus();
}

absl::Status RecurrentKernel(KernelContext& context) {
  const Attributes& attrs = context.attrs();
  const Strings& step_inputs = attrs.Get<Strings>("step_inputs");
  const Strings& ex_states = attrs.Get<Strings>("ex_states");
  const Strings& states = attrs.Get<Strings>("states");
  const Strings& step_outputs = attrs.Get<Strings>("step_outputs");
  const bool reverse = attrs.Get<bool>("reverse");
  const PreparedNet& block = *context.Block("sub_block");
  SF_RETURN_IF_ERROR(CheckFetched(block, states, "states"));
  SF_RETURN_IF_ERROR(CheckFetched(block, step_outputs, "step_outputs"));
  SF_ASSIGN_OR_RETURN(const int64_t steps, StepCount(context));

  StepScopes* kept = nullptr;
  if (context.HasOutput("StepScopes")) {
    SF_ASSIGN_OR_RETURN(kept, context.scope()
                                  ->Var(context.OutputName("StepScopes"))
                                  ->GetMutable<StepScopes>());
    kept->Reset(*context.scope());
  }
  // Fetched after each step: the states, then the step outputs.
  Strings fetches = states;
  fetches.insert(fetches.end(), step_outputs.begin(), step_outputs.end());
  const size_t num_states = states.size();
  std::vector<Tensor> state(num_states);
  for (size_t k = 0; k < num_states; ++k) {
    state[k] = context.Input("InitStates", static_cast<int>(k));
  }
  std::vector<Tensor> outs(step_outputs.size());
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = reverse ? steps - 1 - s : s;
    std::vector<Feed> feeds;
    for (size_t i = 0; i < step_inputs.size(); ++i) {
      SF_ASSIGN_OR_RETURN(Tensor slice,
                          StepOf(context.Input("X", static_cast<int>(i)), t));
      feeds.push_back({step_inputs[i], std::move(slice)});
    }
    for (size_t k = 0; k < num_states; ++k) {
      feeds.push_back({ex_states[k], state[k]});
    }
    absl::StatusOr<std::vector<Tensor>> ran =
        kept != nullptr
            ? context.executor()->RunInScope(block, kept->Add(), feeds, fetches)
            : context.executor()->Run(block, *context.scope(), feeds, fetches);
    if (!ran.ok()) {
      return absl::Status(
          ran.status().code(),
          absl::StrFormat("step %d: %s", t, ran.status().message()));
    }
    for (size_t k = 0; k < num_states; ++k) state[k] = (*ran)[k];
    for (size_t j = 0; j < step_outputs.size(); ++j) {
      SF_RETURN_IF_ERROR(CopyIntoStep((*ran)[num_states + j], t, steps,
                                      context.place(), outs[j],
                                      step_outputs[j]));
    }
  }
  for (size_t j = 0; j < outs.size(); ++j) {
    context.Output("Out", static_cast<int>(j))->ShareBufferWith(outs[j]);
  }
  for (int k = 0; k < context.OutputCount("FinalStates"); ++k) {
    context.Output("FinalStates", k)->ShareBufferWith(state[k]);
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(recurrent)
    .Input("X", /*optional=*/true, /*variadic=*/true)
    .Input("InitStates", /*optional=*/true, /*variadic=*/true)
    .Input("Params", /*optional=*/true, /*variadic=*/true)
    .Output("Out", /*optional=*/true, /*variadic=*/true)
    .Output("FinalStates", /*optional=*/true, /*variadic=*/true)
    .ScopesOutput("StepScopes")
    .Attr("sub_block", AttrType::kBlock)
    .Attr("step_inputs", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("ex_states", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("states", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("step_outputs", AttrType::kStrings, AttrValue(Strings{}))
    .Attr("reverse", AttrType::kBool, AttrValue(false))
    .ControlFlow(CheckStepBlock)
    .Infer(InferRecurrent)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &RecurrentKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &RecurrentKernel)
    .Kernel(DeviceType::kCPU, kInt32, &RecurrentKernel)
    .Kernel(DeviceType::kCPU, kInt64, &RecurrentKernel)
    .Grad(GradSpec()
              .ReadOutputGrad("Out")
              .ReadOutputGrad("FinalStates")
              .WriteInputGrad("X")
              .WriteInputGrad("InitStates")
              .WriteInputGrad("Params")
              .Maker(MakeRecurrentGrad));

}  // namespace scopeflow
