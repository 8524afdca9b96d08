#include "framework/passes/gated_activation.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "framework/op_def_attrs.h"
#include "framework/op_spec.h"

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

// The op x * gate(x) fuses into, or null where `gate` is no such gate.
const char* FusedType(const OpDef& gate) {
  if (gate.type() == "sigmoid") return "silu";
  if (gate.type() != "hard_sigmoid") return nullptr;
  // hard_swish(x) = x * clip(x / 6 + 1/2, 0, 1): hard_sigmoid's attributes
  // must be exactly those (as float32, the attributes' type).
  const AttrDef* alpha = FindAttr(gate, "alpha");
  const AttrDef* beta = FindAttr(gate, "beta");
  if (alpha == nullptr || beta == nullptr || alpha->f() != 1.0f / 6.0f ||
      beta->f() != 0.5f) {
    return nullptr;
  }
  return "hard_swish";
}

struct Uses {
  std::vector<int> readers;  // an op once per slot position it reads
  std::vector<int> writers;
};

}  // namespace

absl::StatusOr<bool> GatedActivationPass::Run(
    PassBlock& block, const PassContext& context) const {
  const BlockDef& in = block.block;
  const PreparedNet& prepared = context.prepared;
  absl::flat_hash_map<std::string, Uses> uses;
  for (int i = 0; i < in.ops_size(); ++i) {
    for (const OpSlot& slot : in.ops(i).inputs()) {
      for (const std::string& var : slot.vars()) uses[var].readers.push_back(i);
    }
    for (const OpSlot& slot : in.ops(i).outputs()) {
      for (const std::string& var : slot.vars()) uses[var].writers.push_back(i);
    }
  }
  absl::flat_hash_set<std::string> persistable;
  for (const VarDef& var : in.vars()) {
    if (var.persistable()) persistable.insert(var.name());
  }
  auto info = [&](const std::string& name) -> const VarInfo* {
    const int v = prepared.VarIndex(name);
    if (v < 0 || !prepared.var_infos()[v].has_dims) return nullptr;
    return &prepared.var_infos()[v];
  };

  std::vector<OpDef> ops(in.ops().begin(), in.ops().end());
  std::vector<int> source(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) source[i] = static_cast<int>(i);
  std::vector<bool> alive(ops.size(), true);
  absl::flat_hash_set<std::string> gone;
  for (int g = 0; g < static_cast<int>(ops.size()); ++g) {
    const OpDef& gate = ops[g];
    const char* fused_type = FusedType(gate);
    if (fused_type == nullptr || gate.outputs_size() != 1) continue;
    const std::string* x = OnlyVar(gate.inputs(), "X");
    const std::string* gated = OnlyVar(gate.outputs(), "Out");
    if (x == nullptr || gated == nullptr || persistable.contains(*gated)) {
      continue;
    }
    const Uses& gated_uses = uses[*gated];
    if (gated_uses.writers.size() != 1 || gated_uses.readers.size() != 1) {
      continue;
    }
    const int m = gated_uses.readers[0];
    const OpDef& product = ops[m];
    if (m <= g || !alive[m] || product.type() != "mul" ||
        product.outputs_size() != 1 || product.attrs_size() != 0) {
      continue;
    }
    const std::string* a = OnlyVar(product.inputs(), "X");
    const std::string* b = OnlyVar(product.inputs(), "Y");
    const std::string* out = OnlyVar(product.outputs(), "Out");
    if (a == nullptr || b == nullptr || out == nullptr || *out == *x) continue;
    const std::string& other = *a == *gated ? *b : *a;
    if (other != *x) continue;
    const VarInfo* x_info = info(*x);
    const VarInfo* gated_info = info(*gated);
    const VarInfo* out_info = info(*out);
    if (x_info == nullptr || gated_info == nullptr || out_info == nullptr ||
        (x_info->dtype != kFloat32 && x_info->dtype != kFloat64) ||
        gated_info->dtype != x_info->dtype ||
        out_info->dtype != x_info->dtype || out_info->dims != x_info->dims) {
      continue;
    }
    const OpSpec* spec = OpRegistry::Global().Find(fused_type);
    if (spec == nullptr ||
        spec->FindKernel({context.place.type(), x_info->dtype}) == nullptr) {
      continue;
    }
    bool x_rewritten = false;
    for (int writer : uses[*x].writers) {
      x_rewritten |= writer > g && writer < m;
    }
    if (x_rewritten) continue;

    OpDef fused;
    fused.set_type(fused_type);
    OpSlot* input = fused.add_inputs();
    input->set_slot("X");
    input->add_vars(*x);
    OpSlot* output = fused.add_outputs();
    output->set_slot("Out");
    output->add_vars(*out);
    ops[m] = std::move(fused);
    source[m] = source[g];
    alive[g] = false;
    gone.insert(*gated);
  }
  if (gone.empty()) return false;

  BlockDef rewritten = in;
  rewritten.clear_ops();
  rewritten.clear_vars();
  for (const VarDef& var : in.vars()) {
    if (!gone.contains(var.name())) *rewritten.add_vars() = var;
  }
  std::vector<int> rewritten_source;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!alive[i]) continue;
    *rewritten.add_ops() = std::move(ops[i]);
    rewritten_source.push_back(source[i]);
  }
  block.Replace(std::move(rewritten), rewritten_source);
  return true;
}

}  // namespace scopeflow
