// conditional_block: runs its block when a boolean condition holds, in a
// child scope of the op's scope (Paddle's conditional_block). The block
// reads enclosing variables listed in X and writes those listed in Out;
// when the condition is false nothing runs and Out keeps what it held.
#include <string>
#include <vector>

#include "framework/block_runner.h"
#include "framework/op_spec.h"
#include "framework/prepared_net.h"
#include "framework/step_scopes.h"
#include "operators/common.h"
#include "operators/control/block_grad.h"
#include "operators/control/step_tensors.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status InferConditionalBlock(InferContext& context) {
  const VarInfo& cond = context.Input("Cond");
  SF_CHECK(cond.dtype == kBool,
           "input \"Cond\" (variable \"%s\") must be bool, got %s",
           context.InputName("Cond"), DataTypeName(cond.dtype));
  if (cond.has_dims) {
    int64_t count = 1;
    for (int64_t d : cond.dims) count = d < 0 ? -1 : count * d;
    SF_CHECK(count == 1 || count < 0,
             "input \"Cond\" (variable \"%s\") must hold one element, got "
             "shape %s",
             context.InputName("Cond"), DimsToString(cond.dims));
  }
  // Out keeps what Prepare knew of it: the block may or may not run.
  return absl::OkStatus();
}

absl::Status ConditionalBlockKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const bool holds, ReadBoolScalar(context, "Cond"));
  if (!holds) return absl::OkStatus();
  const PreparedNet& block = *context.Block("sub_block");
  if (!context.HasOutput("Scope")) {
    // Inference: the block's temporaries die when it returns.
    return context.executor()->Run(block, *context.scope(), {}, {}).status();
  }
  // Training: keep the block's values for the gradient op.
  SF_ASSIGN_OR_RETURN(StepScopes * scopes,
                      context.scope()
                          ->Var(context.OutputName("Scope"))
                          ->GetMutable<StepScopes>());
  scopes->Reset(*context.scope());
  return context.executor()->RunInScope(block, scopes->Add(), {}, {}).status();
}

// X@GRAD: when the block ran, its gradient block run where it ran; when it
// did not, the outputs did not depend on X, so zeros.
absl::Status ConditionalBlockGradKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const bool holds, ReadBoolScalar(context, "Cond"));
  const int count = context.OutputCount("X@GRAD");
  const auto& grads =
      context.attrs().Get<std::vector<std::string>>("grad_names");
  if (!holds) {
    for (int i = 0; i < count; ++i) {
      SF_ASSIGN_OR_RETURN(*context.Output("X@GRAD", i),
                          ZerosLike(context.Input("X", i)));
    }
    return absl::OkStatus();
  }
  Variable* var = context.scope()->FindVar(context.InputName("Scope"));
  SF_CHECK(var != nullptr && var->IsType<StepScopes>() &&
               (*var->Get<StepScopes>())->size() == 1,
           "input \"Scope\" (variable \"%s\") holds no scope of a run of the "
           "block: run the forward op with output \"Scope\" first",
           context.InputName("Scope"));
  StepScopes& scopes = *var->GetMutable<StepScopes>().value();
  SF_ASSIGN_OR_RETURN(
      std::vector<Tensor> values,
      context.executor()->RunInScope(*context.Block("grad_block"), scopes.at(0),
                                     {}, grads));
  for (int i = 0; i < count; ++i) {
    context.Output("X@GRAD", i)->ShareBufferWith(values[i]);
  }
  scopes.Clear();
  return absl::OkStatus();
}

absl::Status MakeConditionalBlockGrad(GradOpContext& context) {
  const std::vector<std::string> xs = context.Input("X");
  const std::vector<std::string> x_grads = context.InputGrad("X");
  const std::vector<std::string> outs = context.Output("Out");
  const std::vector<std::string> out_grads = context.OutputGrad("Out");
  std::vector<std::string> targets, target_grads, wrt, wrt_grads;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (out_grads[i].empty()) continue;
    targets.push_back(outs[i]);
    target_grads.push_back(out_grads[i]);
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    if (x_grads[i].empty()) continue;
    wrt.push_back(xs[i]);
    wrt_grads.push_back(x_grads[i]);
  }
  if (wrt.empty()) return absl::OkStatus();
  const std::vector<std::string> scope = context.Output("Scope");
  SF_CHECK(!scope.empty(),
           "conditional_block: differentiating it needs its output \"Scope\" "
           "bound (the block's scope, kept for the gradient)");
  SF_ASSIGN_OR_RETURN(
      BlockGradient block,
      AppendBlockGradient(context, "sub_block", targets, target_grads, wrt));
  OpDef& grad = context.AddOp("conditional_block_grad");
  GradOpContext::SetInput(grad, "Cond", context.Input("Cond"));
  GradOpContext::SetInput(grad, "X", wrt);
  GradOpContext::SetInput(grad, "Out", outs);
  GradOpContext::SetInput(grad, "Out@GRAD", target_grads);
  GradOpContext::SetInput(grad, "Scope", scope);
  GradOpContext::SetOutput(grad, "X@GRAD", wrt_grads);
  GradOpContext::SetAttr(grad, "grad_block", BlockIndex{block.block});
  GradOpContext::SetAttr(grad, "grad_names", block.grads);
  return absl::OkStatus();
}

absl::Status InferConditionalBlockGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(InferConditionalBlock(context));
  const auto& names =
      context.attrs().Get<std::vector<std::string>>("grad_names");
  SF_CHECK(static_cast<int>(names.size()) == context.OutputCount("X@GRAD"),
           "attribute \"grad_names\" lists %d names for %d outputs "
           "\"X@GRAD\"",
           names.size(), context.OutputCount("X@GRAD"));
  SF_CHECK(context.InputCount("X") == context.OutputCount("X@GRAD"),
           "%d inputs \"X\" but %d outputs \"X@GRAD\"", context.InputCount("X"),
           context.OutputCount("X@GRAD"));
  for (int i = 0; i < context.InputCount("X"); ++i) {
    context.SetOutput("X@GRAD", i, context.Input("X", i));
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(conditional_block)
    .Input("Cond")
    .Input("X", /*optional=*/true, /*variadic=*/true)
    .Output("Out", /*optional=*/true, /*variadic=*/true)
    .ScopesOutput("Scope")
    .Attr("sub_block", AttrType::kBlock)
    .ControlFlow()
    .Infer(InferConditionalBlock)
    .KernelDtypeFromInput("Cond")
    .Kernel(DeviceType::kCPU, kBool, &ConditionalBlockKernel)
    .Grad(GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
        MakeConditionalBlockGrad));

SF_REGISTER_OP(conditional_block_grad)
    .Input("Cond")
    .Input("X", /*optional=*/true, /*variadic=*/true)
    .Input("Out", /*optional=*/true, /*variadic=*/true)
    .Input("Out@GRAD", /*optional=*/true, /*variadic=*/true)
    .ScopesInput("Scope")
    .Output("X@GRAD", /*optional=*/true, /*variadic=*/true)
    .Attr("grad_block", AttrType::kBlock)
    .Attr("grad_names", AttrType::kStrings)
    .ControlFlow()
    .Infer(InferConditionalBlockGrad)
    .KernelDtypeFromInput("Cond")
    .Kernel(DeviceType::kCPU, kBool, &ConditionalBlockGradKernel);

}  // namespace scopeflow
