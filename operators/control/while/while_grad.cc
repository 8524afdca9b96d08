// while_grad. Iteration t of the loop maps the carried values it started
// with (c_t, the snapshots kept in its step scope under the carried names)
// and the enclosing X to the last versions c_{t+1} (c@V1, c@V2, ...). Going
// back from the gradient of the final values, for t = T-1 .. 0 the gradient
// block of the renamed body runs in step scope t, fed the gradient of each
// last version, and gives the gradient of each start value (the next
// iteration back) and of each X (summed over the iterations). The gradients
// left at t = 0 are those of Init. A carried variable the body does not
// write passes its gradient through, plus what the body's reads of it add.
#include "operators/control/while/while_grad.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/block_runner.h"
#include "framework/op_spec.h"
#include "framework/prepared_net.h"
#include "framework/step_scopes.h"
#include "operators/control/block_grad.h"
#include "operators/control/while/while_body.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using NameSet = absl::flat_hash_set<std::string>;

bool IsFloatingType(DataType dtype) {
  return dtype == kFloat16 || dtype == kFloat32 || dtype == kFloat64;
}

bool FloatingIn(const PreparedNet& net, const std::string& name) {
  const int v = net.VarIndex(name);
  return v >= 0 && IsFloatingType(net.var_infos()[v].dtype);
}

std::vector<std::string> VarsOfSlots(
    const google::protobuf::RepeatedPtrField<OpSlot>& slots,
    const std::vector<std::string>& names) {
  std::vector<std::string> vars;
  for (const OpSlot& slot : slots) {
    for (const std::string& name : names) {
      if (slot.slot() != name) continue;
      vars.insert(vars.end(), slot.vars().begin(), slot.vars().end());
    }
  }
  return vars;
}

// The floating variables of the body that depend on `from` through ops
// with gradients (forward), or on which `from` depends (backward), as
// AppendGradients sees them: it refuses a target or a wrt unconnected.
NameSet Connected(const BlockDef& body, const PreparedNet& prepared,
                  NameSet from, bool forward) {
  const int n = body.ops_size();
  for (int j = 0; j < n; ++j) {
    const OpDef& op = body.ops(forward ? j : n - 1 - j);
    const OpSpec* spec = OpRegistry::Global().Find(op.type());
    const GradSpec* grad = spec != nullptr ? spec->grad() : nullptr;
    if (grad == nullptr) continue;
    const std::vector<std::string> ins =
        VarsOfSlots(op.inputs(), grad->input_grads());
    const std::vector<std::string> outs =
        VarsOfSlots(op.outputs(), grad->output_grads());
    const std::vector<std::string>& seen = forward ? ins : outs;
    const std::vector<std::string>& reached = forward ? outs : ins;
    bool any = false;
    for (const std::string& var : seen) any = any || from.contains(var);
    if (!any) continue;
    for (const std::string& var : reached) {
      if (FloatingIn(prepared, var)) from.insert(var);
    }
  }
  return from;
}

int IndexOf(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

absl::Status MakeWhileGrad(GradOpContext& context) {
  const std::vector<std::string> xs = context.Input("X");
  const std::vector<std::string> x_grads = context.InputGrad("X");
  const std::vector<std::string> inits = context.Input("Init");
  const std::vector<std::string> init_grads = context.InputGrad("Init");
  const std::vector<std::string> outs = context.Output("Out");
  const std::vector<std::string> out_grads = context.OutputGrad("Out");
  bool wanted = false;
  for (const auto* grads : {&x_grads, &init_grads}) {
    for (const std::string& grad : *grads) wanted = wanted || !grad.empty();
  }
  if (!wanted) return absl::OkStatus();
  SF_CHECK(context.Output("StepOutputs").empty(),
           "while: differentiating a loop with step outputs (\"StepOutputs\") "
           "is not supported; while_grad passes gradients back through the "
           "carried variables only");
  const std::vector<std::string> steps = context.Output("StepScopes");
  SF_CHECK(!steps.empty(),
           "while: differentiating it needs its output \"StepScopes\" bound "
           "(the iterations' scopes, kept for the gradient)");
  SF_CHECK(context.net() != nullptr && context.prepared_forward() != nullptr &&
               context.prepared_block() != nullptr,
           "while: its gradient is made by AppendGradients, which knows the "
           "net");
  const PreparedNet* body = nullptr;
  for (const auto& [attr, block] : context.prepared_forward()->blocks) {
    if (attr == "sub_block") body = block.get();
  }
  SF_CHECK(body != nullptr, "while: no prepared block \"sub_block\"");
  SF_ASSIGN_OR_RETURN(
      CarriedBody renamed,
      RenameCarried(context.forward(),
                    context.net()->blocks(body->block_index())));

  // The floating carried variables, whose gradients go back through the
  // iterations, and the floating X; which of them the gradient block
  // differentiates, and which last versions it starts from.
  const PreparedNet& enclosing = *context.prepared_block();
  std::vector<int> carried;
  NameSet candidates;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!FloatingIn(enclosing, outs[k])) continue;
    carried.push_back(static_cast<int>(k));
    candidates.insert(outs[k]);
  }
  for (const std::string& x : xs) {
    if (FloatingIn(enclosing, x)) candidates.insert(x);
  }
  const NameSet depends =
      Connected(renamed.block, *body, candidates, /*forward=*/true);
  std::vector<std::string> targets;
  std::vector<std::string> target_grads;
  for (int k : carried) {
    const std::string& last = renamed.last[k];
    if (last.empty() || !depends.contains(last)) continue;
    targets.push_back(last);
    // Not "@GRAD": AppendGradients names its own gradients so.
    target_grads.push_back(absl::StrCat(last, "@GRAD_IN"));
  }
  const NameSet reaches =
      Connected(renamed.block, *body, NameSet(targets.begin(), targets.end()),
                /*forward=*/false);
  std::vector<std::string> wrt;
  for (int k : carried) {
    if (reaches.contains(outs[k])) wrt.push_back(outs[k]);
  }
  for (const std::string& x : xs) {
    if (candidates.contains(x) && reaches.contains(x) && IndexOf(wrt, x) < 0) {
      wrt.push_back(x);
    }
  }

  BlockGradient block;
  if (targets.empty()) {
    // No gradient flows through the body: an empty block.
    block.block = context.net()->blocks_size();
    context.net()->add_blocks()->set_parent_idx(context.block());
  } else {
    SF_ASSIGN_OR_RETURN(block, AppendBlockGradient(context, "sub_block",
                                                   targets, target_grads, wrt));
  }
  auto grad_in_block = [&](const std::string& name) -> std::string {
    const int w = IndexOf(wrt, name);
    return w < 0 ? "" : block.grads[w];
  };

  std::vector<std::string> versions, start_grads, feed_grads;
  std::vector<int> out_grads_of;
  std::vector<std::string> out_grad_vars;
  for (size_t k = 0; k < carried.size(); ++k) {
    const std::string& out = outs[carried[k]];
    const std::string& last = renamed.last[carried[k]];
    versions.push_back(last);
    start_grads.push_back(grad_in_block(out));
    const int t = IndexOf(targets, last);
    feed_grads.push_back(last.empty() || t < 0 ? "" : target_grads[t]);
    if (!out_grads[carried[k]].empty()) {
      out_grads_of.push_back(static_cast<int>(k));
      out_grad_vars.push_back(out_grads[carried[k]]);
    }
  }
  std::vector<int> x_of;
  std::vector<std::string> x_grad_names, x_grad_vars;
  for (size_t j = 0; j < xs.size(); ++j) {
    if (x_grads[j].empty()) continue;
    x_of.push_back(static_cast<int>(j));
    x_grad_names.push_back(grad_in_block(xs[j]));
    x_grad_vars.push_back(x_grads[j]);
  }
  std::vector<int> init_of;
  std::vector<std::string> init_grad_vars;
  for (size_t i = 0; i < inits.size(); ++i) {
    if (init_grads[i].empty()) continue;
    int k = -1;
    for (size_t c = 0; c < carried.size(); ++c) {
      if (carried[c] == static_cast<int>(i)) k = static_cast<int>(c);
    }
    SF_CHECK(k >= 0,
             "while: Init \"%s\" gets a gradient, but Out \"%s\" is "
             "not floating-point",
             inits[i], outs[i]);
    init_of.push_back(k);
    init_grad_vars.push_back(init_grads[i]);
  }

  OpDef& grad = context.AddOp("while_grad");
  GradOpContext::SetInput(grad, "Condition", context.Input("Condition"));
  GradOpContext::SetInput(grad, "X", xs);
  GradOpContext::SetInput(grad, "Out", outs);
  GradOpContext::SetInput(grad, "Out@GRAD", out_grad_vars);
  GradOpContext::SetInput(grad, "StepScopes", steps);
  GradOpContext::SetOutput(grad, "X@GRAD", x_grad_vars);
  GradOpContext::SetOutput(grad, "Init@GRAD", init_grad_vars);
  GradOpContext::SetAttr(grad, "grad_block", BlockIndex{block.block});
  GradOpContext::SetAttr(grad, "carried", carried);
  GradOpContext::SetAttr(grad, "versions", versions);
  GradOpContext::SetAttr(grad, "start_grads", start_grads);
  GradOpContext::SetAttr(grad, "feed_grads", feed_grads);
  GradOpContext::SetAttr(grad, "out_grads_of", out_grads_of);
  GradOpContext::SetAttr(grad, "x_of", x_of);
  GradOpContext::SetAttr(grad, "x_grads", x_grad_names);
  GradOpContext::SetAttr(grad, "init_of", init_of);
  return absl::OkStatus();
}

}  // namespace scopeflow
