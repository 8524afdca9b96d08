#include "framework/passes/attention_fusion.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "framework/op_def_attrs.h"
#include "framework/op_spec.h"
#include "framework/passes/block_uses.h"

namespace scopeflow {
namespace {

bool BoolAttr(const OpDef& op, absl::string_view name) {
  const AttrDef* attr = FindAttr(op, name);
  return attr != nullptr && attr->b();
}

float AlphaOf(const OpDef& matmul) {
  const AttrDef* attr = FindAttr(matmul, "alpha");
  return attr == nullptr ? 1.0f : attr->f();
}

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

// A transpose fused away: the op and the variable it reads.
struct Absorbed {
  int op = -1;
  std::string input;
};

// Finds the attention around one softmax of a block; see the header for
// the pattern.
class Matcher {
 public:
  Matcher(const BlockDef& block, const PassContext& context)
      : block_(block), context_(context), uses_(UsesOf(block)) {}

  // The attention op replacing the chain around softmax op `s`, placed at
  // `at`; `chain` the ops it replaces.
  struct Match {
    OpDef op;
    int at = -1;
    std::vector<int> chain;
  };
  std::optional<Match> At(int s) const;

 private:
  const OpDef& Op(int i) const { return block_.ops(i); }

  // The writer of `var`, where `var` is a temporary that op alone writes
  // and one other op reads once; else -1. SoleReader: that reader.
  int SoleWriter(const std::string& var) const {
    const VarUses* uses = Private(var);
    return uses == nullptr ? -1 : uses->writers[0];
  }
  int SoleReader(const std::string& var) const {
    const VarUses* uses = Private(var);
    return uses == nullptr ? -1 : uses->readers[0];
  }
  const VarUses* Private(const std::string& var) const {
    auto found = uses_.find(var);
    if (found == uses_.end() || found->second.writers.size() != 1 ||
        found->second.readers.size() != 1 ||
        !IsTemporary(context_.prepared, var)) {
      return nullptr;
    }
    return &found->second;
  }
  // What inference knows of `var` (its rank may be unknown: the heads'
  // reshapes take their shapes from tensors computed at run time).
  const VarInfo* Info(const std::string& var) const {
    const int v = context_.prepared.VarIndex(var);
    return v < 0 ? nullptr : &context_.prepared.var_infos()[v];
  }
  // Whether `var` holds one element of `dtype`: by its inferred dims, or,
  // for a parameter whose rank is unknown (the importer declares the
  // exporter's scalar constants so), by attention's check at run time.
  bool OneElement(const std::string& var, DataType dtype) const {
    const VarInfo* info = Info(var);
    if (info == nullptr || info->dtype != dtype) return false;
    if (!info->has_dims) {
      const int v = context_.prepared.VarIndex(var);
      return !context_.prepared.IsTemporary(v) &&
             !context_.prepared.is_external(v);
    }
    return NumElements(info->dims) == 1 &&
           std::none_of(info->dims.begin(), info->dims.end(),
                        [](int64_t d) { return d < 0; });
  }
  // The transpose writing `var` (a temporary it alone writes and one op
  // reads) with permutation `perm`, and its input.
  std::optional<Absorbed> TransposeOf(const std::string& var,
                                      const std::vector<int32_t>& perm) const {
    const int t = SoleWriter(var);
    if (t < 0 || Op(t).type() != "transpose" || PermOf(Op(t)) != perm) {
      return std::nullopt;
    }
    const std::string* input = OnlyVar(Op(t).inputs(), "X");
    if (input == nullptr) return std::nullopt;
    return Absorbed{t, *input};
  }

  const BlockDef& block_;
  const PassContext& context_;
  absl::flat_hash_map<std::string, VarUses> uses_;
};

// What a mul or div by a one-element tensor contributes: the chain operand
// and the scale or divisor.
struct ScaleStep {
  std::string chain;
  std::string factor;
  bool divides = false;
};

std::optional<Matcher::Match> Matcher::At(int s) const {
  const OpDef& softmax = Op(s);
  const std::string* x = OnlyVar(softmax.inputs(), "X");
  const std::string* p = OnlyVar(softmax.outputs(), "Out");
  if (softmax.type() != "softmax" || x == nullptr || p == nullptr) {
    return std::nullopt;
  }
  const VarInfo* x_info = Info(*x);
  if (x_info == nullptr) return std::nullopt;
  const DataType dtype = x_info->dtype;
  // The prepared op's attributes hold the default where none is written.
  const int64_t axis = context_.prepared.ops()[s].attrs.Get<int64_t>("axis");
  if (axis != -1 && (!x_info->has_dims ||
                     axis != static_cast<int64_t>(x_info->dims.size()) - 1)) {
    return std::nullopt;
  }
  const OpSpec* spec = OpRegistry::Global().Find("attention");
  if (spec == nullptr ||
      spec->FindKernel({context_.place.type(), dtype}) == nullptr) {
    return std::nullopt;
  }

  // Forwards: P = softmax(...) into matmul(P, V) -> O.
  const int pv = SoleReader(*p);
  if (pv < 0 || Op(pv).type() != "matmul") return std::nullopt;
  const std::string* p_read = OnlyVar(Op(pv).inputs(), "X");
  const std::string* v = OnlyVar(Op(pv).inputs(), "Y");
  const std::string* o = OnlyVar(Op(pv).outputs(), "Out");
  if (p_read == nullptr || *p_read != *p || v == nullptr || o == nullptr ||
      BoolAttr(Op(pv), "transpose_x") || BoolAttr(Op(pv), "transpose_y")) {
    return std::nullopt;
  }
  Match match;
  match.chain = {s, pv};
  // An alpha of P V would scale the output, not the scores.
  if (AlphaOf(Op(pv)) != 1.0f) return std::nullopt;
  float scale = 1.0f;
  std::string mask, scale_var, divisor_var;

  // Backwards from the scores: [add mask], then muls and divs by one
  // element, then the matmul Q K^T.
  auto scale_step = [&](int op) -> std::optional<ScaleStep> {
    const OpDef& step = Op(op);
    const std::string* a = OnlyVar(step.inputs(), "X");
    const std::string* b = OnlyVar(step.inputs(), "Y");
    if (a == nullptr || b == nullptr) return std::nullopt;
    if (step.type() == "div" && OneElement(*b, dtype)) {
      return ScaleStep{*a, *b, true};
    }
    if (step.type() != "mul") return std::nullopt;
    if (OneElement(*b, dtype)) return ScaleStep{*a, *b, false};
    if (OneElement(*a, dtype)) return ScaleStep{*b, *a, false};
    return std::nullopt;
  };
  auto take_scale = [&](const ScaleStep& step) {
    std::string& slot = step.divides ? divisor_var : scale_var;
    if (!slot.empty()) return false;
    slot = step.factor;
    return true;
  };
  std::string cur = *x;
  int w = SoleWriter(cur);
  if (w >= 0 && Op(w).type() == "add") {
    const std::string* a = OnlyVar(Op(w).inputs(), "X");
    const std::string* b = OnlyVar(Op(w).inputs(), "Y");
    if (a == nullptr || b == nullptr) return std::nullopt;
    auto scores = [&](const std::string& var) {
      const int writer = SoleWriter(var);
      return writer >= 0 &&
             (Op(writer).type() == "matmul" || Op(writer).type() == "mul" ||
              Op(writer).type() == "div");
    };
    const bool a_scores = scores(*a);
    if (!a_scores && !scores(*b)) return std::nullopt;
    const std::string& chain = a_scores ? *a : *b;
    mask = a_scores ? *b : *a;
    // The mask must broadcast to the scores, not the scores to the mask:
    // checked below where the scores' dims are unknown here.
    const VarInfo* chain_info = Info(chain);
    const VarInfo* mask_info = Info(mask);
    if (chain_info == nullptr || mask_info == nullptr || !mask_info->has_dims ||
        mask_info->dtype != dtype || mask == chain ||
        chain_info->has_dims != x_info->has_dims ||
        (x_info->has_dims && chain_info->dims != x_info->dims)) {
      return std::nullopt;
    }
    match.chain.push_back(w);
    cur = chain;
    w = SoleWriter(cur);
  }
  while (w >= 0 && (Op(w).type() == "mul" || Op(w).type() == "div")) {
    const std::optional<ScaleStep> step = scale_step(w);
    if (!step || !take_scale(*step)) return std::nullopt;
    match.chain.push_back(w);
    cur = step->chain;
    w = SoleWriter(cur);
  }
  if (w < 0 || Op(w).type() != "matmul" || BoolAttr(Op(w), "transpose_x")) {
    return std::nullopt;
  }
  const int qk = w;
  match.chain.push_back(qk);
  scale *= AlphaOf(Op(qk));
  const std::string* qx = OnlyVar(Op(qk).inputs(), "X");
  const std::string* kx = OnlyVar(Op(qk).inputs(), "Y");
  if (qx == nullptr || kx == nullptr) return std::nullopt;

  // Q, possibly scaled first.
  std::string q = *qx;
  const int q_writer = SoleWriter(q);
  if (q_writer >= 0 &&
      (Op(q_writer).type() == "mul" || Op(q_writer).type() == "div")) {
    const std::optional<ScaleStep> step = scale_step(q_writer);
    if (step && take_scale(*step)) {
      match.chain.push_back(q_writer);
      q = step->chain;
    }
  }
  // K: K^T as the matmul reads it.
  std::string k = *kx;
  bool transpose_k = false;
  std::optional<Absorbed> k_seq, k_swap;
  if (BoolAttr(Op(qk), "transpose_y")) {
    k_seq = TransposeOf(k, {1, 0, 2});
  } else {
    k_seq = TransposeOf(k, {1, 2, 0});
    const int t = SoleWriter(k);
    if (!k_seq && t >= 0 && Op(t).type() == "transpose" &&
        SwapsLastTwo(PermOf(Op(t)))) {
      const std::string* input = OnlyVar(Op(t).inputs(), "X");
      if (input != nullptr) k_swap = Absorbed{t, *input};
    }
    transpose_k = !k_swap;
  }
  // torch's layout: every operand a transpose of the sequence-first one.
  const std::optional<Absorbed> q_seq = TransposeOf(q, {1, 0, 2});
  const std::optional<Absorbed> v_seq = TransposeOf(*v, {1, 0, 2});
  std::optional<Absorbed> out_seq;
  const int out_reader = SoleReader(*o);
  if (out_reader >= 0 && Op(out_reader).type() == "transpose" &&
      PermOf(Op(out_reader)) == std::vector<int32_t>{1, 0, 2}) {
    const std::string* out = OnlyVar(Op(out_reader).outputs(), "Out");
    if (out != nullptr) out_seq = Absorbed{out_reader, *out};
  }
  const bool seq_first = q_seq && k_seq && v_seq && out_seq;

  OpDef& op = match.op;
  op.set_type("attention");
  auto bind = [](google::protobuf::RepeatedPtrField<OpSlot>* slots,
                 const char* slot, const std::string& var) {
    OpSlot* bound = slots->Add();
    bound->set_slot(slot);
    bound->add_vars(var);
  };
  std::string out;
  if (seq_first) {
    bind(op.mutable_inputs(), "Q", q_seq->input);
    bind(op.mutable_inputs(), "K", k_seq->input);
    bind(op.mutable_inputs(), "V", v_seq->input);
    for (int t : {q_seq->op, k_seq->op, v_seq->op, out_seq->op}) {
      match.chain.push_back(t);
    }
    out = out_seq->input;
    match.at = out_seq->op;
    transpose_k = false;
  } else {
    bind(op.mutable_inputs(), "Q", q);
    if (k_swap) {
      match.chain.push_back(k_swap->op);
      k = k_swap->input;
    }
    bind(op.mutable_inputs(), "K", k);
    bind(op.mutable_inputs(), "V", *v);
    out = *o;
    match.at = pv;
  }
  if (!mask.empty()) bind(op.mutable_inputs(), "Mask", mask);
  if (!scale_var.empty()) bind(op.mutable_inputs(), "Scale", scale_var);
  if (!divisor_var.empty()) bind(op.mutable_inputs(), "Divisor", divisor_var);
  bind(op.mutable_outputs(), "Out", out);
  AttrDef* attr = op.add_attrs();
  attr->set_name("scale");
  attr->set_f(scale);
  attr = op.add_attrs();
  attr->set_name("transpose_k");
  attr->set_b(transpose_k);
  attr = op.add_attrs();
  attr->set_name("seq_first");
  attr->set_b(seq_first);

  // The operands' batch dims must be equal (matmul broadcasts them,
  // attention does not). Where inference left their ranks unknown, only
  // the sequence-first layout is fused: its transposes fix the rank at 3,
  // and its batch dim, torch's batch times heads, is the same reshape's in
  // Q, K and V. A mask of no more dims than the scores that would
  // broadcast them up (no attention's) then fails the fused op at run time.
  std::vector<const VarInfo*> operands;
  for (const char* slot : {"Q", "K", "V"}) {
    operands.push_back(Info(*OnlyVar(op.inputs(), slot)));
    if (operands.back() == nullptr || operands.back()->dtype != dtype ||
        (!operands.back()->has_dims && !seq_first)) {
      return std::nullopt;
    }
  }
  if (std::all_of(operands.begin(), operands.end(),
                  [](const VarInfo* info) { return info->has_dims; })) {
    const size_t r = operands[0]->dims.size();
    for (const VarInfo* info : operands) {
      if (info->dims.size() != r || r < (seq_first ? 3u : 2u)) {
        return std::nullopt;
      }
      for (size_t d = seq_first ? 1 : 0; d + (seq_first ? 1 : 2) < r; ++d) {
        if (info->dims[d] != operands[0]->dims[d]) return std::nullopt;
      }
    }
  }
  if (!mask.empty()) {
    const Dims& mask_dims = Info(mask)->dims;
    // The scores have Q's rank, 3 in torch's layout.
    const size_t scores_rank = x_info->has_dims ? x_info->dims.size()
                               : operands[0]->has_dims
                                   ? operands[0]->dims.size()
                                   : 3;
    if (mask_dims.size() > scores_rank) return std::nullopt;
    if (x_info->has_dims) {
      for (size_t i = 0; i < mask_dims.size(); ++i) {
        const int64_t m = mask_dims[mask_dims.size() - 1 - i];
        const int64_t s_dim = x_info->dims[scores_rank - 1 - i];
        if (m != 1 && m != s_dim) return std::nullopt;
      }
    }
  }
  // Each operand must hold at `at` what the op of the chain reading it
  // read: no op may write it in between.
  for (const OpSlot& slot : op.inputs()) {
    auto found = uses_.find(slot.vars(0));
    if (found == uses_.end()) continue;
    int read = match.at;
    for (int reader : found->second.readers) {
      if (std::find(match.chain.begin(), match.chain.end(), reader) !=
          match.chain.end()) {
        read = std::min(read, reader);
      }
    }
    for (int writer : found->second.writers) {
      if (writer >= read && writer <= match.at) return std::nullopt;
    }
  }
  return match;
}

}  // namespace

absl::StatusOr<bool> AttentionFusionPass::Run(
    PassBlock& block, const PassContext& context) const {
  const BlockDef& in = block.block;
  const Matcher matcher(in, context);
  std::vector<OpDef> ops(in.ops().begin(), in.ops().end());
  std::vector<bool> alive(ops.size(), true);
  std::vector<bool> taken(ops.size(), false);
  bool changed = false;
  for (int s = 0; s < in.ops_size(); ++s) {
    std::optional<Matcher::Match> match = matcher.At(s);
    if (!match) continue;
    const bool overlaps = std::any_of(match->chain.begin(), match->chain.end(),
                                      [&](int op) { return taken[op]; });
    if (overlaps) continue;
    for (int op : match->chain) {
      taken[op] = true;
      alive[op] = false;
    }
    alive[match->at] = true;
    ops[match->at] = std::move(match->op);
    changed = true;
  }
  if (!changed) return false;
  ReplaceWithLiveOps(block, std::move(ops), alive);
  return true;
}

}  // namespace scopeflow
