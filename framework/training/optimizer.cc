#include "framework/training/optimizer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/data_type.h"
#include "framework/grad_spec.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

AttrDef* AddAttr(OpDef& op, const std::string& name) {
  AttrDef* attr = op.add_attrs();
  attr->set_name(name);
  return attr;
}

OpDef& AddOp(BlockDef& block, const std::string& type) {
  OpDef* op = block.add_ops();
  op->set_type(type);
  return *op;
}

void Bind(OpDef& op, bool input, const std::string& slot,
          const std::vector<std::string>& vars) {
  if (input) {
    GradOpContext::SetInput(op, slot, vars);
  } else {
    GradOpContext::SetOutput(op, slot, vars);
  }
}

// Declares `name` persistable in `block` unless it is already declared.
void DeclarePersistable(BlockDef& block, const std::string& name,
                        DataType dtype) {
  for (const VarDef& var : block.vars()) {
    if (var.name() == name) return;
  }
  VarDef* var = block.add_vars();
  var->set_name(name);
  var->set_dtype(dtype);
  var->set_persistable(true);
}

bool Writes(const BlockDef& block, const std::string& name) {
  for (const OpDef& op : block.ops()) {
    for (const OpSlot& slot : op.outputs()) {
      if (std::find(slot.vars().begin(), slot.vars().end(), name) !=
          slot.vars().end()) {
        return true;
      }
    }
  }
  return false;
}

// Startup ops that fill `name` with `value`: shaped like `like` (a
// parameter the startup net writes), or [1] when `like` is empty.
void AddStartupFill(BlockDef& startup, const std::string& name,
                    const std::string& like, float value, DataType dtype) {
  DeclarePersistable(startup, name, dtype);
  if (like.empty()) {
    OpDef& fill = AddOp(startup, "fill_constant");
    Bind(fill, false, "Out", {name});
    AddAttr(fill, "shape")->mutable_i64s()->add_values(1);
    AddAttr(fill, "value")->set_f(value);
    AddAttr(fill, "dtype")->set_i(dtype);
    return;
  }
  OpDef& fill = AddOp(startup, "fill_any_like");
  Bind(fill, true, "X", {like});
  Bind(fill, false, "Out", {name});
  AddAttr(fill, "value")->set_f(value);
}

}  // namespace

absl::Status ValidateOptimizerConfig(const OptimizerConfig& config) {
  const std::vector<std::string> types = {"sgd", "momentum", "adam"};
  SF_CHECK(std::find(types.begin(), types.end(), config.type) != types.end(),
           "unknown optimizer \"%s\" (known: %s)", config.type,
           absl::StrJoin(types, ", "));
  const std::vector<std::string> policies = {"constant", "step", "exponential",
                                             "cosine"};
  SF_CHECK(std::find(policies.begin(), policies.end(), config.lr_policy) !=
               policies.end(),
           "unknown learning-rate policy \"%s\" (known: %s)", config.lr_policy,
           absl::StrJoin(policies, ", "));
  SF_CHECK(config.learning_rate > 0, "learning rate must be positive, got %g",
           config.learning_rate);
  SF_CHECK(config.weight_decay >= 0, "weight decay must be >= 0, got %g",
           config.weight_decay);
  SF_CHECK(config.clip_norm >= 0, "clip norm must be >= 0, got %g",
           config.clip_norm);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<VarGrad>> AppendTrainingOps(
    NetDef& main, NetDef& startup, const std::string& loss,
    const OptimizerConfig& config) {
  SF_RETURN_IF_ERROR(ValidateOptimizerConfig(config));
  SF_CHECK(main.blocks_size() > 0 && startup.blocks_size() > 0,
           "training needs a main and a startup net with a block each");
  SF_ASSIGN_OR_RETURN(std::vector<VarGrad> grads, AppendBackward(main, loss));
  BlockDef& block = *main.mutable_blocks(0);
  BlockDef& init = *startup.mutable_blocks(0);
  for (const VarGrad& grad : grads) {
    SF_CHECK(Writes(init, grad.var),
             "parameter \"%s\" is not written by the startup net \"%s\", so "
             "its optimizer state cannot take its shape",
             grad.var, startup.name());
  }

  DeclarePersistable(block, kStepVar, kInt64);
  DeclarePersistable(block, kLearningRateVar, kFloat32);
  AddStartupFill(init, kStepVar, "", 0, kInt64);
  // A dropout op seeded by its attribute alone would draw the same mask at
  // every step; seeded by the step counter too it draws a new one each step,
  // the same again after a resume.
  for (OpDef& op : *block.mutable_ops()) {
    const bool has_seed = std::any_of(
        op.inputs().begin(), op.inputs().end(),
        [](const OpSlot& binding) { return binding.slot() == "Seed"; });
    if (op.type() == "dropout" && !has_seed) Bind(op, true, "Seed", {kStepVar});
  }

  std::vector<std::string> grad_names;
  for (const VarGrad& grad : grads) grad_names.push_back(grad.grad);
  if (config.clip_norm > 0) {
    OpDef& clip = AddOp(block, "clip_by_global_norm");
    Bind(clip, true, "X", grad_names);
    Bind(clip, false, "Out", grad_names);
    AddAttr(clip, "max_norm")->set_f(config.clip_norm);
  }

  OpDef& schedule = AddOp(block, "lr_schedule");
  Bind(schedule, true, "Step", {kStepVar});
  Bind(schedule, false, "LearningRate", {kLearningRateVar});
  AddAttr(schedule, "base_lr")->set_f(config.learning_rate);
  AddAttr(schedule, "policy")->set_s(config.lr_policy);
  AddAttr(schedule, "step_size")->set_i64(config.lr_step_size);
  AddAttr(schedule, "gamma")->set_f(config.lr_gamma);
  AddAttr(schedule, "total_steps")->set_i64(config.total_steps);
  AddAttr(schedule, "warmup_steps")->set_i64(config.warmup_steps);
  AddAttr(schedule, "min_lr")->set_f(config.min_lr);

  for (const VarGrad& grad : grads) {
    std::string gradient = grad.grad;
    if (config.type != "adam" && config.weight_decay > 0) {
      // L2 regularisation: grad + weight_decay * param.
      const std::string decay = absl::StrCat(grad.var, "@DECAY");
      OpDef& scale = AddOp(block, "scale");
      Bind(scale, true, "X", {grad.var});
      Bind(scale, false, "Out", {decay});
      AddAttr(scale, "scale")->set_f(config.weight_decay);
      const std::string decayed = absl::StrCat(grad.grad, "@DECAYED");
      OpDef& add = AddOp(block, "add");
      Bind(add, true, "X", {gradient});
      Bind(add, true, "Y", {decay});
      Bind(add, false, "Out", {decayed});
      gradient = decayed;
    }
    OpDef& update = AddOp(block, config.type);
    Bind(update, true, "Param", {grad.var});
    Bind(update, true, "Grad", {gradient});
    Bind(update, true, "LearningRate", {kLearningRateVar});
    Bind(update, false, "ParamOut", {grad.var});
    if (config.type == "momentum") {
      const std::string velocity = absl::StrCat(grad.var, "@VELOCITY");
      DeclarePersistable(block, velocity, kFloat32);
      AddStartupFill(init, velocity, grad.var, 0, kFloat32);
      Bind(update, true, "Velocity", {velocity});
      Bind(update, false, "VelocityOut", {velocity});
      AddAttr(update, "mu")->set_f(config.momentum);
      AddAttr(update, "use_nesterov")->set_b(config.nesterov);
    } else if (config.type == "adam") {
      const std::vector<std::pair<std::string, std::string>> state = {
          {"Moment1", "@MOMENT1"},
          {"Moment2", "@MOMENT2"},
          {"Beta1Pow", "@BETA1_POW"},
          {"Beta2Pow", "@BETA2_POW"}};
      for (const auto& [slot, suffix] : state) {
        const std::string name = absl::StrCat(grad.var, suffix);
        DeclarePersistable(block, name, kFloat32);
        if (slot == "Beta1Pow") {
          AddStartupFill(init, name, "", config.beta1, kFloat32);
        } else if (slot == "Beta2Pow") {
          AddStartupFill(init, name, "", config.beta2, kFloat32);
        } else {
          AddStartupFill(init, name, grad.var, 0, kFloat32);
        }
        Bind(update, true, slot, {name});
        Bind(update, false, absl::StrCat(slot, "Out"), {name});
      }
      AddAttr(update, "beta1")->set_f(config.beta1);
      AddAttr(update, "beta2")->set_f(config.beta2);
      AddAttr(update, "epsilon")->set_f(config.epsilon);
      AddAttr(update, "weight_decay")->set_f(config.weight_decay);
    }
  }

  OpDef& increment = AddOp(block, "increment");
  Bind(increment, true, "X", {kStepVar});
  Bind(increment, false, "Out", {kStepVar});
  return grads;
}

}  // namespace scopeflow
