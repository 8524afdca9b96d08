#include "framework/passes/block_uses.h"

#include <utility>

#include "framework/op_spec.h"

namespace scopeflow {

absl::flat_hash_map<std::string, VarUses> UsesOf(const BlockDef& block) {
  absl::flat_hash_map<std::string, VarUses> uses;
  for (int i = 0; i < block.ops_size(); ++i) {
    for (const OpSlot& slot : block.ops(i).inputs()) {
      for (const std::string& var : slot.vars()) uses[var].readers.push_back(i);
    }
    for (const OpSlot& slot : block.ops(i).outputs()) {
      for (const std::string& var : slot.vars()) uses[var].writers.push_back(i);
    }
  }
  return uses;
}

absl::flat_hash_set<std::string> VarsRead(const BlockDef& block) {
  absl::flat_hash_set<std::string> read;
  for (const OpDef& op : block.ops()) {
    for (const OpSlot& slot : op.inputs()) {
      read.insert(slot.vars().begin(), slot.vars().end());
    }
  }
  return read;
}

bool IsPureOp(const OpDef& op) {
  const OpSpec* spec = OpRegistry::Global().Find(op.type());
  if (spec == nullptr || !spec->pure()) return false;
  for (const AttrDef& attr : op.attrs()) {
    if (attr.has_block_idx()) return false;
  }
  return true;
}

bool IsTemporary(const PreparedNet& prepared, const std::string& name) {
  const int v = prepared.VarIndex(name);
  return v >= 0 && prepared.IsTemporary(v);
}

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

void ReplaceWithLiveOps(PassBlock& block, std::vector<OpDef> ops,
                        const std::vector<bool>& alive) {
  absl::flat_hash_set<std::string> used;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!alive[i]) continue;
    for (const auto* slots : {&ops[i].inputs(), &ops[i].outputs()}) {
      for (const OpSlot& slot : *slots) {
        used.insert(slot.vars().begin(), slot.vars().end());
      }
    }
  }
  // What ops wrote as the block was and none touches now; a variable no op
  // wrote (a fed input) stays declared, so that feeding it stays valid.
  absl::flat_hash_set<std::string> dropped;
  for (const OpDef& op : block.block.ops()) {
    for (const OpSlot& slot : op.outputs()) {
      dropped.insert(slot.vars().begin(), slot.vars().end());
    }
  }
  BlockDef rewritten = block.block;
  rewritten.clear_ops();
  rewritten.clear_vars();
  for (const VarDef& var : block.block.vars()) {
    const bool gone = dropped.contains(var.name()) &&
                      !used.contains(var.name()) && !var.persistable();
    if (!gone) *rewritten.add_vars() = var;
  }
  std::vector<int> source;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!alive[i]) continue;
    *rewritten.add_ops() = std::move(ops[i]);
    source.push_back(static_cast<int>(i));
  }
  block.Replace(std::move(rewritten), source);
}

}  // namespace scopeflow
