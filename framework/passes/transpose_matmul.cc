#include "framework/passes/transpose_matmul.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "framework/op_def_attrs.h"
#include "framework/passes/block_uses.h"

namespace scopeflow {
namespace {

// The transpose writing `var` and what it reads, where `var` is a
// temporary written by that transpose alone, after a single write (or
// none) of its input.
struct Transposed {
  int op = -1;
  const std::string* input = nullptr;
  std::vector<int32_t> perm;
};

std::vector<int32_t> PermOf(const OpDef& op) {
  const AttrDef* perm = FindAttr(op, "perm");
  if (perm == nullptr) return {};
  return {perm->ints().values().begin(), perm->ints().values().end()};
}

bool SwapsLastTwo(const std::vector<int32_t>& perm) {
  const int r = static_cast<int>(perm.size());
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2) return false;
  for (int i = 0; i < r - 2; ++i) {
    if (perm[i] != i) return false;
  }
  return true;
}

bool Cancel(const std::vector<int32_t>& p, const std::vector<int32_t>& q) {
  if (p.size() != q.size()) return false;
  for (size_t i = 0; i < q.size(); ++i) {
    if (q[i] < 0 || q[i] >= static_cast<int32_t>(p.size()) ||
        p[q[i]] != static_cast<int32_t>(i)) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> TransposeMatmulPass::Run(
    PassBlock& block, const PassContext& context) const {
  const BlockDef& in = block.block;
  const absl::flat_hash_map<std::string, VarUses> uses = UsesOf(in);
  const absl::flat_hash_set<std::string> read_as_written =
      VarsRead(context.as_written);
  auto transposed = [&](const std::string& var) -> Transposed {
    auto found = uses.find(var);
    if (found == uses.end() || found->second.writers.size() != 1 ||
        !IsTemporary(context.prepared, var)) {
      return {};
    }
    const int t = found->second.writers[0];
    const OpDef& op = in.ops(t);
    const std::string* input = OnlyVar(op.inputs(), "X");
    if (op.type() != "transpose" || input == nullptr || *input == var) {
      return {};
    }
    auto input_uses = uses.find(*input);
    if (input_uses != uses.end() &&
        (input_uses->second.writers.size() > 1 ||
         (input_uses->second.writers.size() == 1 &&
          input_uses->second.writers[0] > t))) {
      return {};
    }
    return {t, input, PermOf(op)};
  };

  std::vector<OpDef> ops(in.ops().begin(), in.ops().end());
  bool changed = false;
  // Reads of U (a transpose undoing another) go to S.
  absl::flat_hash_map<std::string, std::string> undone;
  for (int i = 0; i < in.ops_size(); ++i) {
    const OpDef& op = in.ops(i);
    if (op.type() != "transpose") continue;
    const std::string* x = OnlyVar(op.inputs(), "X");
    const std::string* out = OnlyVar(op.outputs(), "Out");
    if (x == nullptr || out == nullptr || !read_as_written.contains(*out) ||
        transposed(*out).op != i) {
      continue;
    }
    const Transposed first = transposed(*x);
    if (first.op < 0 || !Cancel(first.perm, PermOf(op))) continue;
    // S's dims and dtype are U's: the readers see the same tensor.
    undone[*out] = *first.input;
  }
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    OpDef& op = ops[i];
    for (OpSlot& slot : *op.mutable_inputs()) {
      for (std::string& var : *slot.mutable_vars()) {
        auto to = undone.find(var);
        if (to == undone.end()) continue;
        var = to->second;
        changed = true;
      }
    }
    if (op.type() != "matmul") continue;
    for (const auto& [slot_name, attr_name] :
         {std::pair<const char*, const char*>{"X", "transpose_x"},
          {"Y", "transpose_y"}}) {
      OpSlot* slot = nullptr;
      for (OpSlot& bound : *op.mutable_inputs()) {
        if (bound.slot() == slot_name && bound.vars_size() == 1) slot = &bound;
      }
      if (slot == nullptr) continue;
      const Transposed t = transposed(slot->vars(0));
      if (t.op < 0 || t.op > i || !SwapsLastTwo(t.perm)) continue;
      const AttrDef* was = FindAttr(op, attr_name);
      const bool flag = was != nullptr && was->b();
      slot->set_vars(0, *t.input);
      AttrDef* attr = nullptr;
      for (AttrDef& a : *op.mutable_attrs()) {
        if (a.name() == attr_name) attr = &a;
      }
      if (attr == nullptr) {
        attr = op.add_attrs();
        attr->set_name(attr_name);
      }
      attr->set_b(!flag);
      changed = true;
    }
  }
  if (!changed) return false;
  const std::vector<bool> alive(ops.size(), true);
  ReplaceWithLiveOps(block, std::move(ops), alive);
  return true;
}

}  // namespace scopeflow
