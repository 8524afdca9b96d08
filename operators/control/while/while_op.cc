// while: runs its block as long as a boolean scalar holds (Paddle's while).
// Each iteration runs in a child scope of the op's scope: the body reads
// enclosing variables (listed in X) and the carried ones (listed in Out) by
// name, and its temporaries die with the iteration. Out[i] starts as
// Init[i] for the first Init's, so that a net writes each differentiable
// variable once (h0 -> while -> h); the other carried variables, the
// condition among them, start with what they hold before the op. When
// training (StepScopes bound) each iteration's scope is kept, holding the
// carried values it started with and its temporaries, for while_grad.
// StepOutputs[j] stacks the values the body's variable step_outputs[j]
// holds at the end of each iteration along a new axis 0 ([iterations,
// ...]; ONNX Loop's scan outputs).
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/block_runner.h"
#include "framework/op_spec.h"
#include "framework/prepared_net.h"
#include "framework/step_scopes.h"
#include "operators/common.h"
#include "operators/control/step_tensors.h"
#include "operators/control/while/while_body.h"
#include "operators/control/while/while_grad.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status InferWhile(InferContext& context) {
  const std::string& cond_name = context.InputName("Condition");
  const VarInfo& cond = context.Input("Condition");
  SF_CHECK(cond.dtype == kBool,
           "input \"Condition\" (variable \"%s\") must be a bool scalar, got "
           "%s",
           cond_name, DataTypeName(cond.dtype));
  if (cond.has_dims) {
    const std::optional<int64_t> count = CheckedNumElements(cond.dims);
    SF_CHECK(count.has_value() && (*count == 1 || *count < 0),
             "input \"Condition\" (variable \"%s\") must be a bool scalar "
             "(one element), got shape %s",
             cond_name, DimsToString(cond.dims));
  }
  bool carried = false;
  for (int i = 0; i < context.OutputCount("Out"); ++i) {
    carried = carried || context.OutputName("Out", i) == cond_name;
  }
  SF_CHECK(carried,
           "condition variable \"%s\" must be among the outputs \"Out\": "
           "the body updates it, or the loop could not end",
           cond_name);
  const auto& step_outputs =
      context.attrs().Get<std::vector<std::string>>("step_outputs");
  SF_CHECK(static_cast<int>(step_outputs.size()) ==
               context.OutputCount("StepOutputs"),
           "attribute \"step_outputs\" names %d variables for %d outputs "
           "\"StepOutputs\"",
           step_outputs.size(), context.OutputCount("StepOutputs"));
  SF_CHECK(context.InputCount("Init") <= context.OutputCount("Out"),
           "%d inputs \"Init\" but %d outputs \"Out\": Init[i] is the "
           "initial value of Out[i]",
           context.InputCount("Init"), context.OutputCount("Out"));
  // A carried variable keeps its initial value's dtype and shape (the
  // kernel checks it after each iteration).
  for (int i = 0; i < context.InputCount("Init"); ++i) {
    context.SetOutput("Out", i, context.Input("Init", i));
  }
  return absl::OkStatus();
}

// Stacks `steps`, the values of the body's variable `name`, into `out`
// ([steps, ...]). With no iteration the shape after the first axis is what
// the body's Prepare inferred of `name`, which must be fully known.
absl::Status StackSteps(KernelContext& context, const PreparedNet& body,
                        const std::string& name,
                        const std::vector<Tensor>& steps, Tensor& out) {
  if (steps.empty()) {
    const int v = body.VarIndex(name);
    SF_CHECK(v >= 0, "step output \"%s\" is no variable of the body", name);
    const VarInfo& info = body.var_infos()[v];
    bool known = info.has_dims && info.dtype != DATA_TYPE_UNSPECIFIED;
    for (int64_t d : info.dims) known = known && d >= 0;
    SF_CHECK(known,
             "the loop ran no iteration, and the shape of step output \"%s\" "
             "is not known before one runs (inferred %s %s)",
             name, DataTypeName(info.dtype),
             info.has_dims ? DimsToString(info.dims) : "[?]");
    Dims dims = info.dims;
    dims.insert(dims.begin(), 0);
    return out.Allocate(context.place(), info.dtype, dims);
  }
  const int64_t count = static_cast<int64_t>(steps.size());
  for (int64_t t = 0; t < count; ++t) {
    SF_RETURN_IF_ERROR(CopyIntoStep(steps[t], t, count, context.place(), out,
                                    absl::StrCat("step output ", name)));
  }
  return absl::OkStatus();
}

absl::Status WhileKernel(KernelContext& context) {
  const PreparedNet& body = *context.Block("sub_block");
  Scope& scope = *context.scope();
  for (int i = 0; i < context.InputCount("Init"); ++i) {
    Tensor* out = context.Output("Out", i);
    const Tensor& init = context.Input("Init", i);
    if (out != &init) out->ShareBufferWith(init);
  }
  // The carried variables the body writes, and the names of their last
  // versions in the body, fetched after each iteration.
  std::vector<int> written;
  std::vector<std::string> last;
  for (int i = 0; i < context.OutputCount("Out"); ++i) {
    std::string version = LastVersion(body, context.OutputName("Out", i));
    if (version.empty()) continue;
    written.push_back(i);
    last.push_back(std::move(version));
  }
  // Then the body's step outputs, kept from every iteration.
  const auto& step_outputs =
      context.attrs().Get<std::vector<std::string>>("step_outputs");
  for (const std::string& name : step_outputs) last.push_back(name);
  std::vector<std::vector<Tensor>> stacked(step_outputs.size());
  StepScopes* steps = nullptr;
  if (context.HasOutput("StepScopes")) {
    SF_ASSIGN_OR_RETURN(
        steps,
        scope.Var(context.OutputName("StepScopes"))->GetMutable<StepScopes>());
    steps->Reset(scope);
  }
  const int32_t max_iterations = context.attrs().Get<int32_t>("max_iterations");
  for (int32_t t = 0;; ++t) {
    SF_ASSIGN_OR_RETURN(const bool holds, ReadBoolScalar(context, "Condition"));
    if (!holds) break;
    SF_CHECK(t < max_iterations,
             "condition variable \"%s\" still holds after %d iterations "
             "(attribute \"max_iterations\"): stopped a loop that does not "
             "end",
             context.InputName("Condition"), max_iterations);
    absl::StatusOr<std::vector<Tensor>> values;
    if (steps == nullptr) {
      // Inference: the iteration's temporaries die when Run returns.
      values = context.executor()->Run(body, scope, {}, last);
    } else {
      // Training: the step scope keeps the values the iteration started
      // with (sharing buffers) and its temporaries, for while_grad.
      Scope& step = steps->Add();
      for (int i : written) {
        const Tensor& now = *context.Output("Out", i);
        if (!now.initialized()) continue;
        SF_ASSIGN_OR_RETURN(
            Tensor * start,
            step.Var(context.OutputName("Out", i))->GetMutable<Tensor>());
        start->ShareBufferWith(now);
      }
      values = context.executor()->RunInScope(body, step, {}, last);
    }
    if (!values.ok()) {
      return absl::Status(
          values.status().code(),
          absl::StrFormat("iteration %d: %s", t, values.status().message()));
    }
    for (size_t j = 0; j < written.size(); ++j) {
      Tensor* out = context.Output("Out", written[j]);
      const Tensor& next = (*values)[j];
      SF_CHECK(!out->initialized() ||
                   (out->dtype() == next.dtype() && out->dims() == next.dims()),
               "iteration %d changed carried variable \"%s\" from %s to %s; "
               "a carried variable keeps its dtype and shape",
               t, context.OutputName("Out", written[j]), out->DebugString(),
               next.DebugString());
      out->ShareBufferWith(next);
    }
    for (size_t j = 0; j < stacked.size(); ++j) {
      stacked[j].push_back((*values)[written.size() + j]);
    }
  }
  for (size_t j = 0; j < stacked.size(); ++j) {
    SF_RETURN_IF_ERROR(StackSteps(context, body, step_outputs[j], stacked[j],
                                  *context.Output("StepOutputs", j)));
  }
  return absl::OkStatus();
}

absl::StatusOr<BlockDef> RewriteBody(const OpDef& op, const std::string& attr,
                                     const BlockDef& block) {
  SF_ASSIGN_OR_RETURN(CarriedBody body, RenameCarried(op, block));
  return std::move(body.block);
}

}  // namespace

SF_REGISTER_OP(while)
    .Input("Condition")
    .Input("X", /*optional=*/true, /*variadic=*/true)
    .Input("Init", /*optional=*/true, /*variadic=*/true)
    .Output("Out", /*optional=*/false, /*variadic=*/true)
    .Output("StepOutputs", /*optional=*/true, /*variadic=*/true)
    .ScopesOutput("StepScopes")
    .Attr("sub_block", AttrType::kBlock)
    .Attr("step_outputs", AttrType::kStrings,
          AttrValue(std::vector<std::string>{}))
    .Attr("max_iterations", AttrType::kInt, AttrValue(int32_t{1000000}),
          Positive())
    .ControlFlow(RewriteBody)
    .Infer(InferWhile)
    .KernelDtypeFromInput("Condition")
    .Kernel(DeviceType::kCPU, kBool, &WhileKernel)
    .Grad(GradSpec()
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("Init")
              .Maker(MakeWhileGrad));

}  // namespace scopeflow
