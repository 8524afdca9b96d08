#include "framework/passes/conv_fusion.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "framework/op_def_attrs.h"
#include "framework/prepared_net.h"

namespace scopeflow {
namespace {

// The variable bound to `slot` where it holds exactly one, else null.
const std::string* OnlyVar(
    const google::protobuf::RepeatedPtrField<OpSlot>& slots,
    absl::string_view slot) {
  for (const OpSlot& bound : slots) {
    if (bound.slot() == slot) {
      return bound.vars_size() == 1 ? &bound.vars(0) : nullptr;
    }
  }
  return nullptr;
}

bool Binds(const OpDef& op, absl::string_view slot) {
  for (const OpSlot& bound : op.inputs()) {
    if (bound.slot() == slot && bound.vars_size() > 0) return true;
  }
  return false;
}

void SetSlot(google::protobuf::RepeatedPtrField<OpSlot>* slots,
             const std::string& slot, const std::string& var) {
  for (OpSlot& bound : *slots) {
    if (bound.slot() == slot) {
      bound.clear_vars();
      bound.add_vars(var);
      return;
    }
  }
  OpSlot* bound = slots->Add();
  bound->set_slot(slot);
  bound->add_vars(var);
}

// conv2d's activation attributes for an activation op.
struct Activation {
  std::string name;  // conv2d's "activation"; "relu": fuse_relu instead
  float alpha = 0.0f;
  float beta = 0.0f;
};

// The activation `op` (prepared as `prepared`) computes of its one input
// X, where conv2d can apply it; else nullopt.
std::optional<Activation> ActivationOf(const OpDef& op,
                                       const PreparedOp& prepared) {
  const Attributes& attrs = prepared.attrs;
  const std::string& type = op.type();
  if (type == "relu" || type == "sigmoid" || type == "tanh" ||
      type == "hard_swish" || type == "silu" || type == "mish") {
    return Activation{type};
  }
  if (type == "leaky_relu" || type == "elu") {
    return Activation{type, attrs.Get<float>("alpha")};
  }
  if (type == "hard_sigmoid") {
    return Activation{type, attrs.Get<float>("alpha"),
                      attrs.Get<float>("beta")};
  }
  if (type == "gelu") {
    return Activation{attrs.Get<bool>("approximate") ? "gelu_tanh" : "gelu"};
  }
  // Bounds bound as inputs are values the pass does not know.
  if (type == "clip" && !Binds(op, "Min") && !Binds(op, "Max")) {
    return Activation{type, attrs.Get<float>("min"), attrs.Get<float>("max")};
  }
  return std::nullopt;
}

// The activation x * gate(x) is, for a `gate` op of x, where conv2d has it:
// silu for sigmoid, hard_swish for hard_sigmoid of alpha 1/6 and beta 1/2
// (float32's, the attributes' type).
std::optional<Activation> GatedActivationOf(const OpDef& gate,
                                            const PreparedOp& prepared) {
  if (gate.type() == "sigmoid") return Activation{"silu"};
  if (gate.type() == "hard_sigmoid" &&
      prepared.attrs.Get<float>("alpha") == 1.0f / 6.0f &&
      prepared.attrs.Get<float>("beta") == 0.5f) {
    return Activation{"hard_swish"};
  }
  return std::nullopt;
}

// The ops of a block as the fusions change them.
class ConvFuser {
 public:
  ConvFuser(const BlockDef& block, const PreparedNet& prepared)
      : block_(block), prepared_(prepared) {
    for (int i = 0; i < block.ops_size(); ++i) {
      ops_.push_back(block.ops(i));
      source_.push_back(i);
    }
    alive_.assign(ops_.size(), true);
    for (const VarDef& var : block.vars()) {
      if (var.persistable()) persistable_.insert(var.name());
    }
  }

  // conv2d + add of a residual -> conv2d with Residual.
  void FuseResiduals() {
    CountUses();
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
      if (!Unfused(i) || Binds(ops_[i], "Residual")) continue;
      const std::string& conv_out = *OnlyVar(ops_[i].outputs(), "Output");
      const std::optional<int> add = OnlyReader(conv_out, i);
      if (!add.has_value() || ops_[*add].type() != "add") continue;
      const OpDef& sum = ops_[*add];
      const std::string* x = OnlyVar(sum.inputs(), "X");
      const std::string* y = OnlyVar(sum.inputs(), "Y");
      const std::string* out = OnlyVar(sum.outputs(), "Out");
      if (x == nullptr || y == nullptr || out == nullptr ||
          sum.outputs_size() != 1 || *x == *y) {
        continue;
      }
      const std::string& residual = *x == conv_out ? *y : *x;
      const VarInfo* conv_info = Info(conv_out);
      const VarInfo* residual_info = Info(residual);
      const VarInfo* out_info = Info(*out);
      if (residual_info == nullptr || out_info == nullptr ||
          residual_info->dtype != conv_info->dtype ||
          residual_info->dims != conv_info->dims ||
          out_info->dtype != conv_info->dtype ||
          out_info->dims != conv_info->dims || ReadsOrWrites(i, *out) ||
          WrittenBetween(i, *add, InputsOf(ops_[i]))) {
        continue;
      }
      OpDef fused = ops_[i];
      SetSlot(fused.mutable_inputs(), "Residual", residual);
      SetSlot(fused.mutable_outputs(), "Output", *out);
      Fuse(i, *add, std::move(fused), {conv_out});
    }
  }

  // conv2d + activation -> conv2d with fuse_relu or activation; conv2d +
  // a gate and a mul -> conv2d with activation silu or hard_swish.
  void FuseActivations() {
    CountUses();
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
      if (!Unfused(i)) continue;
      const std::string& conv_out = *OnlyVar(ops_[i].outputs(), "Output");
      if (std::optional<int> reader = OnlyReader(conv_out, i)) {
        FuseActivation(i, *reader, conv_out);
      } else {
        FuseGatedActivation(i, conv_out);
      }
    }
  }

  // The fused block, or nullopt where nothing fused.
  std::optional<std::pair<BlockDef, std::vector<int>>> Result() const {
    if (gone_.empty()) return std::nullopt;
    BlockDef fused = block_;
    fused.clear_ops();
    fused.clear_vars();
    for (const VarDef& var : block_.vars()) {
      if (!gone_.contains(var.name())) *fused.add_vars() = var;
    }
    std::vector<int> source;
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (!alive_[i]) continue;
      *fused.add_ops() = ops_[i];
      source.push_back(source_[i]);
    }
    return std::make_pair(std::move(fused), std::move(source));
  }

 private:
  struct Uses {
    std::vector<int> readers;  // an op once per slot position it reads
    std::vector<int> writers;
  };

  // The activation op `j` of conv2d i's output `conv_out` into it.
  void FuseActivation(int i, int j, const std::string& conv_out) {
    const OpDef& op = ops_[j];
    const std::string* x = OnlyVar(op.inputs(), "X");
    const std::string* out = OnlyVar(op.outputs(), "Out");
    if (x == nullptr || *x != conv_out || out == nullptr ||
        op.outputs_size() != 1 || ReadsOrWrites(i, *out) ||
        WrittenBetween(i, j, InputsOf(ops_[i]))) {
      return;
    }
    const std::optional<Activation> activation =
        ActivationOf(op, prepared_.ops()[source_[j]]);
    const VarInfo* out_info = Info(*out);
    if (!activation.has_value() || out_info == nullptr ||
        out_info->dtype != kFloat32) {
      return;
    }
    Fuse(i, j, WithActivation(i, *activation, *out), {conv_out});
  }

  // conv2d i's output `conv_out` read by a gate (sigmoid, hard_sigmoid)
  // and by a mul of it and the gate's output.
  void FuseGatedActivation(int i, const std::string& conv_out) {
    const Uses& uses = uses_.at(conv_out);
    if (uses.readers.size() != 2) return;
    const int g = uses.readers[0];
    const int m = uses.readers[1];
    if (g <= i || m <= g || !alive_[g] || !alive_[m] ||
        ops_[m].type() != "mul" || ops_[m].attrs_size() != 0 ||
        ops_[m].outputs_size() != 1 || ops_[g].outputs_size() != 1) {
      return;
    }
    const std::optional<Activation> activation =
        GatedActivationOf(ops_[g], prepared_.ops()[source_[g]]);
    const std::string* gate_in = OnlyVar(ops_[g].inputs(), "X");
    const std::string* gate = OnlyVar(ops_[g].outputs(), "Out");
    if (!activation.has_value() || gate_in == nullptr || *gate_in != conv_out ||
        gate == nullptr || !IsTemporary(*gate) || OnlyReader(*gate, g) != m) {
      return;
    }
    const std::string* a = OnlyVar(ops_[m].inputs(), "X");
    const std::string* b = OnlyVar(ops_[m].inputs(), "Y");
    const std::string* out = OnlyVar(ops_[m].outputs(), "Out");
    if (a == nullptr || b == nullptr || out == nullptr ||
        !((*a == conv_out && *b == *gate) || (*a == *gate && *b == conv_out))) {
      return;
    }
    const VarInfo* out_info = Info(*out);
    const VarInfo* gate_info = Info(*gate);
    const VarInfo* conv_info = Info(conv_out);
    if (out_info == nullptr || gate_info == nullptr ||
        out_info->dtype != kFloat32 || out_info->dims != conv_info->dims ||
        gate_info->dtype != kFloat32 || ReadsOrWrites(i, *out) ||
        WrittenBetween(i, m, InputsOf(ops_[i]))) {
      return;
    }
    alive_[g] = false;
    Fuse(i, m, WithActivation(i, *activation, *out), {conv_out, *gate});
  }

  // conv2d i writing `out` through `activation`.
  OpDef WithActivation(int i, const Activation& activation,
                       const std::string& out) const {
    OpDef fused = ops_[i];
    SetSlot(fused.mutable_outputs(), "Output", out);
    if (activation.name == "relu") {
      MutableAttr(fused, "fuse_relu").set_b(true);
    } else {
      MutableAttr(fused, "activation").set_s(activation.name);
      MutableAttr(fused, "activation_alpha").set_f(activation.alpha);
      MutableAttr(fused, "activation_beta").set_f(activation.beta);
    }
    return fused;
  }

  // Whether op i is a live conv2d writing a float32 temporary, with no
  // activation yet.
  bool Unfused(int i) const {
    const OpDef& op = ops_[i];
    if (!alive_[i] || op.type() != "conv2d" || op.outputs_size() != 1) {
      return false;
    }
    const std::string* out = OnlyVar(op.outputs(), "Output");
    const VarInfo* info = out == nullptr ? nullptr : Info(*out);
    const AttrDef* relu = FindAttr(op, "fuse_relu");
    const AttrDef* activation = FindAttr(op, "activation");
    return info != nullptr && info->dtype == kFloat32 && IsTemporary(*out) &&
           (relu == nullptr || !relu->b()) &&
           (activation == nullptr || activation->s().empty());
  }

  const VarInfo* Info(const std::string& name) const {
    const int v = prepared_.VarIndex(name);
    if (v < 0 || !prepared_.var_infos()[v].has_dims) return nullptr;
    return &prepared_.var_infos()[v];
  }

  bool IsTemporary(const std::string& name) const {
    return !persistable_.contains(name);
  }

  static std::vector<std::string> InputsOf(const OpDef& op) {
    std::vector<std::string> vars;
    for (const OpSlot& slot : op.inputs()) {
      vars.insert(vars.end(), slot.vars().begin(), slot.vars().end());
    }
    return vars;
  }

  // Whether op i reads or writes `var`: the fused op must not write what
  // it reads.
  bool ReadsOrWrites(int i, const std::string& var) const {
    for (const auto* slots : {&ops_[i].inputs(), &ops_[i].outputs()}) {
      for (const OpSlot& slot : *slots) {
        for (const std::string& bound : slot.vars()) {
          if (bound == var) return true;
        }
      }
    }
    return false;
  }

  void CountUses() {
    uses_.clear();
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
      if (!alive_[i]) continue;
      for (const OpSlot& slot : ops_[i].inputs()) {
        for (const std::string& var : slot.vars()) {
          uses_[var].readers.push_back(i);
        }
      }
      for (const OpSlot& slot : ops_[i].outputs()) {
        for (const std::string& var : slot.vars()) {
          uses_[var].writers.push_back(i);
        }
      }
    }
  }

  // The op after `writer` that alone reads `var`, a temporary `writer`
  // alone writes; else nullopt.
  std::optional<int> OnlyReader(const std::string& var, int writer) const {
    if (!IsTemporary(var)) return std::nullopt;
    auto it = uses_.find(var);
    if (it == uses_.end() || it->second.writers.size() != 1 ||
        it->second.writers[0] != writer || it->second.readers.size() != 1 ||
        it->second.readers[0] <= writer || !alive_[it->second.readers[0]]) {
      return std::nullopt;
    }
    return it->second.readers[0];
  }

  // Whether an op after `first` and before `last` writes one of `vars`.
  bool WrittenBetween(int first, int last,
                      const std::vector<std::string>& vars) const {
    for (const std::string& var : vars) {
      auto it = uses_.find(var);
      if (it == uses_.end()) continue;
      for (int writer : it->second.writers) {
        if (writer > first && writer < last) return true;
      }
    }
    return false;
  }

  // Replaces op `last` by `fused` and drops op `first` and the variables
  // `between`. Uses are counted again before the next kind of fusion;
  // within one, the ops fused are not looked at again.
  void Fuse(int first, int last, OpDef fused,
            const std::vector<std::string>& between) {
    ops_[last] = std::move(fused);
    source_[last] = source_[first];
    alive_[first] = false;
    gone_.insert(between.begin(), between.end());
  }

  const BlockDef& block_;
  const PreparedNet& prepared_;
  std::vector<OpDef> ops_;
  // Per op, the index of the op of the block before this pass it comes
  // from (a fused op: its convolution's).
  std::vector<int> source_;
  std::vector<bool> alive_;
  absl::flat_hash_set<std::string> persistable_;
  absl::flat_hash_set<std::string> gone_;
  absl::flat_hash_map<std::string, Uses> uses_;
};

}  // namespace

absl::StatusOr<bool> ConvFusionPass::Run(PassBlock& block,
                                         const PassContext& context) const {
  if (!context.place.is_cpu() ||
      static_cast<int>(context.prepared.ops().size()) !=
          block.block.ops_size()) {
    return false;
  }
  ConvFuser fuser(block.block, context.prepared);
  fuser.FuseResiduals();
  fuser.FuseActivations();
  auto result = fuser.Result();
  if (!result.has_value()) return false;
  block.Replace(std::move(result->first), result->second);
  return true;
}

}  // namespace scopeflow
