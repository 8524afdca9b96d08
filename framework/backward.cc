#include "framework/backward.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "framework/prepare.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using NameSet = absl::flat_hash_set<std::string>;

bool Contains(const std::vector<std::string>& slots, const std::string& slot) {
  return std::find(slots.begin(), slots.end(), slot) != slots.end();
}

// The variables of `def`'s slots that `slot_names` lists.
std::vector<std::string> VarsOfSlots(
    const google::protobuf::RepeatedPtrField<OpSlot>& slots,
    const std::vector<std::string>& slot_names) {
  std::vector<std::string> vars;
  for (const OpSlot& slot : slots) {
    if (!Contains(slot_names, slot.slot())) continue;
    vars.insert(vars.end(), slot.vars().begin(), slot.vars().end());
  }
  return vars;
}

// The gradient contributions a variable receives, and the one variable
// that holds their sum once all have been made.
struct Accumulator {
  int expected = 0;
  std::vector<std::string> parts;
  std::string total;  // empty until Finalize
};

class Differentiator {
 public:
  explicit Differentiator(NetDef& net) : net_(net) {}

  // Learns the variables' dtypes from Prepare and which ops have gradients.
  absl::Status Init() {
    absl::StatusOr<PreparedNet> prepared =
        PrepareNet(net_, 0, CPUPlace(), PrepareOptions::AsWritten());
    if (!prepared.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot differentiate an invalid net: ",
                       prepared.status().message()));
    }
    prepared_ = *std::move(prepared);
    const BlockDef& block = net_.blocks(0);
    for (const VarDef& var : block.vars()) {
      if (var.stop_gradient()) stop_gradient_.insert(var.name());
      if (var.persistable()) persistable_.push_back(var.name());
    }
    for (size_t v = 0; v < prepared_.var_names().size(); ++v) {
      const DataType dtype = prepared_.var_infos()[v].dtype;
      if (dtype == kFloat16 || dtype == kFloat32 || dtype == kFloat64) {
        floating_.insert(prepared_.var_names()[v]);
      }
      if (absl::EndsWith(prepared_.var_names()[v], "@GRAD")) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "net \"%s\" already has gradient variable \"%s\": differentiate "
            "the forward net only once",
            net_.name(), prepared_.var_names()[v]));
      }
    }
    for (const OpDef& op : block.ops()) {
      const OpSpec* spec = OpRegistry::Global().Find(op.type());
      grads_.push_back(spec->grad());
      for (const OpSlot& slot : op.outputs()) {
        for (const std::string& var : slot.vars()) ++writers_[var];
      }
    }
    return absl::OkStatus();
  }

  bool Differentiable(const std::string& var) const {
    return floating_.contains(var) && !stop_gradient_.contains(var);
  }

  absl::Status CheckTarget(const std::string& var) const {
    SF_CHECK(Differentiable(var),
             "differentiate: target \"%s\" is not a floating-point variable "
             "of the net that may carry a gradient",
             var);
    return absl::OkStatus();
  }

  // The variables that depend on `wrt` through differentiable ops.
  NameSet DependentsOf(const std::vector<std::string>& wrt) const {
    NameSet depends(wrt.begin(), wrt.end());
    const BlockDef& block = net_.blocks(0);
    for (int i = 0; i < block.ops_size(); ++i) {
      const GradSpec* grad = grads_[i];
      if (grad == nullptr) continue;
      bool any = false;
      for (const std::string& var :
           VarsOfSlots(block.ops(i).inputs(), grad->input_grads())) {
        any = any || depends.contains(var);
      }
      if (!any) continue;
      for (const std::string& var :
           VarsOfSlots(block.ops(i).outputs(), grad->output_grads())) {
        if (Differentiable(var)) depends.insert(var);
      }
    }
    return depends;
  }

  // The variables the targets depend on through differentiable ops.
  NameSet AncestorsOf(const std::vector<std::string>& targets) const {
    NameSet reaches(targets.begin(), targets.end());
    const BlockDef& block = net_.blocks(0);
    for (int i = block.ops_size() - 1; i >= 0; --i) {
      const GradSpec* grad = grads_[i];
      if (grad == nullptr) continue;
      bool any = false;
      for (const std::string& var :
           VarsOfSlots(block.ops(i).outputs(), grad->output_grads())) {
        any = any || reaches.contains(var);
      }
      if (!any) continue;
      for (const std::string& var :
           VarsOfSlots(block.ops(i).inputs(), grad->input_grads())) {
        if (Differentiable(var)) reaches.insert(var);
      }
    }
    return reaches;
  }

  // Persistable floating-point variables no op writes.
  std::vector<std::string> Parameters() const {
    std::vector<std::string> params;
    for (const std::string& var : persistable_) {
      if (Differentiable(var) && !writers_.contains(var)) {
        params.push_back(var);
      }
    }
    return params;
  }

  absl::StatusOr<std::vector<VarGrad>> Append(
      const std::vector<std::string>& targets,
      const std::vector<std::string>& target_grads,
      const std::vector<std::string>& wrt) {
    SF_CHECK(!targets.empty(), "differentiate: no target given");
    SF_CHECK(target_grads.empty() || target_grads.size() == targets.size(),
             "differentiate: %d targets but %d target gradients",
             targets.size(), target_grads.size());
    for (const std::string& var : wrt) {
      SF_CHECK(Differentiable(var),
               "differentiate: variable \"%s\" cannot have a gradient (it is "
               "not a floating-point variable of the net, or it is "
               "stop_gradient)",
               var);
    }
    for (const std::string& var : targets) {
      SF_RETURN_IF_ERROR(CheckTarget(var));
    }
    const NameSet depends = DependentsOf(wrt);
    const NameSet reaches = AncestorsOf(targets);
    for (const std::string& var : wrt) {
      SF_CHECK(reaches.contains(var),
               "differentiate: no target depends on variable \"%s\" (%s) "
               "through differentiable ops",
               var, absl::StrJoin(targets, ", "));
    }
    for (const std::string& var : targets) {
      SF_CHECK(depends.contains(var),
               "differentiate: target \"%s\" does not depend on any of %s", var,
               absl::StrJoin(wrt, ", "));
    }
    for (const std::string& var : depends) {
      if (reaches.contains(var)) needs_.insert(var);
    }
    for (const std::string& var : needs_) {
      auto it = writers_.find(var);
      SF_CHECK(it == writers_.end() || it->second <= 1,
               "differentiate: variable \"%s\" is written by %d ops; a net "
               "to differentiate writes each variable once",
               var, it->second);
    }

    // Count each variable's gradient contributions before making any, so
    // that a variable with one contribution gets it under its own name.
    const BlockDef& block = net_.blocks(0);
    const int num_forward = block.ops_size();
    std::vector<bool> relevant(num_forward, false);
    for (int i = 0; i < num_forward; ++i) {
      const GradSpec* grad = grads_[i];
      if (grad == nullptr) continue;
      bool flows_in = false;
      for (const std::string& var :
           VarsOfSlots(block.ops(i).outputs(), grad->output_grads())) {
        flows_in = flows_in || needs_.contains(var);
      }
      if (!flows_in) continue;
      for (const std::string& var :
           VarsOfSlots(block.ops(i).inputs(), grad->input_grads())) {
        if (!needs_.contains(var)) continue;
        relevant[i] = true;
        ++acc_[var].expected;
      }
    }
    for (const std::string& var : targets) ++acc_[var].expected;

    for (size_t t = 0; t < targets.size(); ++t) {
      if (!target_grads.empty()) {
        acc_[targets[t]].parts.push_back(target_grads[t]);
        continue;
      }
      OpDef* fill = net_.mutable_blocks(0)->add_ops();
      fill->set_type("fill_any_like");
      GradOpContext::SetInput(*fill, "X", {targets[t]});
      GradOpContext::SetOutput(*fill, "Out", {NewPart(targets[t])});
      AttrDef* value = fill->add_attrs();
      value->set_name("value");
      value->set_f(1.0f);
    }

    for (int i = num_forward - 1; i >= 0; --i) {
      if (!relevant[i]) continue;
      SF_RETURN_IF_ERROR(AppendOpGrad(i));
    }

    std::vector<VarGrad> result;
    for (const std::string& var : wrt) {
      result.push_back({var, Finalize(var)});
    }
    return result;
  }

 private:
  std::string NewPart(const std::string& var) {
    Accumulator& acc = acc_[var];
    std::string name = acc.expected == 1
                           ? GradName(var)
                           : absl::StrCat(GradName(var), "@", acc.parts.size());
    acc.parts.push_back(name);
    return name;
  }

  // The variable holding `var`'s whole gradient, summing the contributions
  // the first time it is asked for.
  std::string Finalize(const std::string& var) {
    Accumulator& acc = acc_[var];
    if (!acc.total.empty()) return acc.total;
    if (acc.parts.size() == 1) {
      acc.total = acc.parts[0];
      return acc.total;
    }
    acc.total = GradName(var);
    OpDef* sum = net_.mutable_blocks(0)->add_ops();
    sum->set_type("sum");
    GradOpContext::SetInput(*sum, "X", acc.parts);
    GradOpContext::SetOutput(*sum, "Out", {acc.total});
    return acc.total;
  }

  // A zero gradient for an output whose gradient the op's GradSpec reads
  // but that reaches no target.
  std::string ZeroGrad(const std::string& var) {
    OpDef* fill = net_.mutable_blocks(0)->add_ops();
    fill->set_type("fill_any_like");
    GradOpContext::SetInput(*fill, "X", {var});
    const std::string name = absl::StrCat(GradName(var), "@ZERO");
    GradOpContext::SetOutput(*fill, "Out", {name});
    AttrDef* value = fill->add_attrs();
    value->set_name("value");
    value->set_f(0.0f);
    return name;
  }

  absl::Status AppendOpGrad(int i) {
    // Copied: appending ops to the block may move the forward op.
    const OpDef forward = net_.blocks(0).ops(i);
    const GradSpec& grad = *grads_[i];
    std::vector<std::vector<std::string>> output_grads;
    for (const OpSlot& slot : forward.outputs()) {
      output_grads.emplace_back();
      const bool carries = Contains(grad.output_grads(), slot.slot());
      for (const std::string& var : slot.vars()) {
        std::string name;
        if (carries && needs_.contains(var)) {
          name = Finalize(var);
        } else if (carries && Differentiable(var)) {
          name = ZeroGrad(var);
        }
        output_grads.back().push_back(name);
      }
    }
    std::vector<std::vector<std::string>> input_grads;
    for (const OpSlot& slot : forward.inputs()) {
      input_grads.emplace_back();
      const bool gets = Contains(grad.input_grads(), slot.slot());
      for (const std::string& var : slot.vars()) {
        input_grads.back().push_back(gets && needs_.contains(var) ? NewPart(var)
                                                                  : "");
      }
    }
    GradOpContext context(forward, std::move(input_grads),
                          std::move(output_grads));
    context.SetNet(&net_, /*block=*/0, &prepared_, &prepared_.ops()[i]);
    absl::Status made = grad.Make(context);
    if (!made.ok()) {
      return absl::Status(
          made.code(), absl::StrFormat("op %d (%s): making its gradient: %s", i,
                                       forward.type(), made.message()));
    }
    for (OpDef& op : context.ops()) {
      *net_.mutable_blocks(0)->add_ops() = std::move(op);
    }
    return absl::OkStatus();
  }

  NetDef& net_;
  PreparedNet prepared_;
  NameSet floating_;
  NameSet stop_gradient_;
  std::vector<std::string> persistable_;
  std::vector<const GradSpec*> grads_;
  absl::flat_hash_map<std::string, int> writers_;
  NameSet needs_;
  absl::flat_hash_map<std::string, Accumulator> acc_;
};

}  // namespace

absl::StatusOr<std::vector<VarGrad>> AppendGradients(
    NetDef& net, const std::vector<std::string>& targets,
    const std::vector<std::string>& target_grads,
    const std::vector<std::string>& wrt) {
  Differentiator differentiator(net);
  SF_RETURN_IF_ERROR(differentiator.Init());
  return differentiator.Append(targets, target_grads, wrt);
}

absl::StatusOr<std::vector<VarGrad>> AppendBackward(
    NetDef& net, const std::string& loss,
    const std::vector<std::string>& parameters) {
  Differentiator differentiator(net);
  SF_RETURN_IF_ERROR(differentiator.Init());
  if (!parameters.empty()) {
    return differentiator.Append({loss}, {}, parameters);
  }
  SF_RETURN_IF_ERROR(differentiator.CheckTarget(loss));
  std::vector<std::string> params;
  const NameSet reaches = differentiator.AncestorsOf({loss});
  for (const std::string& var : differentiator.Parameters()) {
    if (reaches.contains(var)) params.push_back(var);
  }
  SF_CHECK(!params.empty(),
           "differentiate: loss \"%s\" depends on no parameter (persistable "
           "floating-point variable that no op writes)",
           loss);
  return differentiator.Append({loss}, {}, params);
}

}  // namespace scopeflow
