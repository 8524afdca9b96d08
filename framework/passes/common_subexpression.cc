#include "framework/passes/common_subexpression.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "framework/passes/block_uses.h"

namespace scopeflow {
namespace {

// What identifies the value `op` computes: its type, its inputs by slot,
// its attributes sorted by name, and the slots it writes.
std::string ValueKey(const OpDef& op) {
  std::string key = op.type();
  for (const OpSlot& slot : op.inputs()) {
    absl::StrAppend(&key, "|in ", slot.slot());
    for (const std::string& var : slot.vars()) absl::StrAppend(&key, ",", var);
  }
  std::vector<std::string> attrs;
  for (const AttrDef& attr : op.attrs()) {
    attrs.push_back(attr.SerializeAsString());
  }
  std::sort(attrs.begin(), attrs.end());
  for (const std::string& attr : attrs) absl::StrAppend(&key, "|attr ", attr);
  for (const OpSlot& slot : op.outputs()) {
    absl::StrAppend(&key, "|out ", slot.slot(), " ", slot.vars_size());
  }
  return key;
}

}  // namespace

absl::StatusOr<bool> CommonSubexpressionPass::Run(
    PassBlock& block, const PassContext& context) const {
  const BlockDef& in = block.block;
  const absl::flat_hash_map<std::string, VarUses> uses = UsesOf(in);
  const absl::flat_hash_set<std::string> read_as_written =
      VarsRead(context.as_written);
  auto writers = [&](const std::string& var) -> const std::vector<int>& {
    static const std::vector<int> kNone;
    auto found = uses.find(var);
    return found == uses.end() ? kNone : found->second.writers;
  };

  std::vector<OpDef> ops(in.ops().begin(), in.ops().end());
  std::vector<bool> alive(ops.size(), true);
  // Reads of a merged-away output go to the kept op's.
  absl::flat_hash_map<std::string, std::string> renamed;
  // The first op computing each value.
  absl::flat_hash_map<std::string, int> first;
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    OpDef& op = ops[i];
    for (OpSlot& slot : *op.mutable_inputs()) {
      for (std::string& var : *slot.mutable_vars()) {
        auto to = renamed.find(var);
        if (to != renamed.end()) var = to->second;
      }
    }
    if (op.outputs_size() == 0 || !IsPureOp(op)) continue;
    bool mergeable = true;
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) {
        const std::vector<int>& w = writers(var);
        mergeable = mergeable && w.size() <= 1 && (w.empty() || w[0] < i);
      }
    }
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) {
        mergeable = mergeable && writers(var).size() == 1 &&
                    IsTemporary(context.prepared, var);
      }
    }
    if (!mergeable) continue;
    auto [kept, inserted] = first.try_emplace(ValueKey(op), i);
    if (inserted) continue;
    bool all_read = true;
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) {
        all_read = all_read && read_as_written.contains(var);
      }
    }
    if (!all_read) continue;
    const OpDef& original = ops[kept->second];
    for (int s = 0; s < op.outputs_size(); ++s) {
      for (int v = 0; v < op.outputs(s).vars_size(); ++v) {
        renamed[op.outputs(s).vars(v)] = original.outputs(s).vars(v);
      }
    }
    alive[i] = false;
  }
  if (renamed.empty()) return false;
  ReplaceWithLiveOps(block, std::move(ops), alive);
  return true;
}

}  // namespace scopeflow
