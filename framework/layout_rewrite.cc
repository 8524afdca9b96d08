#include "framework/layout_rewrite.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "framework/op_spec.h"

namespace scopeflow {
namespace {

constexpr absl::string_view kDataFormatAttr = "data_format";

// An op the rewrite may change: its role and the one variable of each of
// its data slots (its spec's first input and output slots).
struct DataOp {
  LayoutRole role = LayoutRole::kFixed;
  const std::string* in_slot = nullptr;
  const std::string* in = nullptr;
  const std::string* out = nullptr;

  bool rewritable() const { return role != LayoutRole::kFixed; }
};

const AttrDef* FindAttr(const OpDef& op, absl::string_view name) {
  for (const AttrDef& attr : op.attrs()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

// What the rewrite may do with `op`: nothing (kFixed) unless its spec gives
// it a layout role, one variable is bound to each data slot, and nothing
// to other outputs (pool2d's Indices number NCHW positions); elementwise
// ops take no other input either, and data-format ops must be NCHW now.
DataOp DataOpOf(const OpDef& op) {
  const OpSpec* spec = OpRegistry::Global().Find(op.type());
  if (spec == nullptr || spec->layout_role() == LayoutRole::kFixed ||
      spec->inputs().empty() || spec->outputs().empty()) {
    return {};
  }
  DataOp data;
  data.role = spec->layout_role();
  data.in_slot = &spec->inputs()[0].name;
  const std::string& out_slot = spec->outputs()[0].name;
  for (const OpSlot& slot : op.inputs()) {
    if (slot.vars().empty()) continue;
    if (slot.slot() == *data.in_slot && slot.vars_size() == 1) {
      data.in = &slot.vars(0);
    } else if (slot.slot() == *data.in_slot ||
               data.role == LayoutRole::kElementwise) {
      return {};
    }
  }
  for (const OpSlot& slot : op.outputs()) {
    if (slot.vars().empty()) continue;
    if (slot.slot() != out_slot || slot.vars_size() != 1) return {};
    data.out = &slot.vars(0);
  }
  if (data.in == nullptr || data.out == nullptr || *data.in == *data.out) {
    return {};
  }
  if (data.role != LayoutRole::kElementwise) {
    const AttrDef* format = FindAttr(op, kDataFormatAttr);
    if (format != nullptr && format->s() != "NCHW") return {};
  }
  return data;
}

// How the ops of a block use one variable.
struct Uses {
  int writers = 0;
  // The op writing it as its data output, or -1.
  int data_writer = -1;
  int last_writer = -1;
  std::vector<int> data_readers;
  bool other_reader = false;
};

// Union-find over variable names.
class Components {
 public:
  const std::string& Root(const std::string& name) {
    auto it = parent_.find(name);
    if (it == parent_.end() || it->second == name) return name;
    const std::string& root = Root(it->second);
    it->second = root;
    return it->second;
  }
  void Join(const std::string& a, const std::string& b) {
    const std::string root_a = Root(a);
    const std::string root_b = Root(b);
    if (root_a != root_b) parent_[root_a] = root_b;
  }

 private:
  absl::flat_hash_map<std::string, std::string> parent_;
};

// The variables to keep NHWC: temporaries one data op writes and only data
// ops read, after it; an elementwise op's input and output both or
// neither; and only regions with an op that prefers channels-last.
absl::flat_hash_set<std::string> ChannelsLastVars(
    const BlockDef& block, const std::vector<DataOp>& data_ops,
    const absl::flat_hash_map<std::string, Uses>& uses) {
  absl::flat_hash_set<std::string> persistable;
  for (const VarDef& var : block.vars()) {
    if (var.persistable()) persistable.insert(var.name());
  }
  absl::flat_hash_set<std::string> chosen;
  for (const auto& [name, use] : uses) {
    if (use.writers != 1 || use.data_writer < 0 || use.other_reader ||
        use.data_readers.empty() || persistable.contains(name)) {
      continue;
    }
    bool read_after_write = true;
    for (int reader : use.data_readers) {
      read_after_write = read_after_write && reader > use.data_writer;
    }
    if (read_after_write) chosen.insert(name);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const DataOp& op : data_ops) {
      if (op.role != LayoutRole::kElementwise) continue;
      const bool in = chosen.contains(*op.in);
      const bool out = chosen.contains(*op.out);
      if (in != out) {
        chosen.erase(in ? *op.in : *op.out);
        changed = true;
      }
    }
  }
  Components components;
  for (const DataOp& op : data_ops) {
    if (op.rewritable() && chosen.contains(*op.in) &&
        chosen.contains(*op.out)) {
      components.Join(*op.in, *op.out);
    }
  }
  absl::flat_hash_set<std::string> useful;
  for (const DataOp& op : data_ops) {
    if (op.role != LayoutRole::kPrefersChannelsLast) continue;
    for (const std::string* var : {op.in, op.out}) {
      if (chosen.contains(*var)) useful.insert(components.Root(*var));
    }
  }
  absl::flat_hash_set<std::string> kept;
  for (const std::string& name : chosen) {
    if (useful.contains(components.Root(name))) kept.insert(name);
  }
  return kept;
}

OpDef Transpose(const std::string& in, const std::string& out,
                std::vector<int32_t> perm) {
  OpDef op;
  op.set_type("transpose");
  OpSlot* x = op.add_inputs();
  x->set_slot("X");
  x->add_vars(in);
  OpSlot* y = op.add_outputs();
  y->set_slot("Out");
  y->add_vars(out);
  AttrDef* attr = op.add_attrs();
  attr->set_name("perm");
  for (int32_t axis : perm) attr->mutable_ints()->add_values(axis);
  return op;
}

void SetDataInput(OpDef& op, const std::string& slot, const std::string& var) {
  for (OpSlot& input : *op.mutable_inputs()) {
    if (input.slot() == slot && input.vars_size() == 1) {
      input.set_vars(0, var);
    }
  }
}

// `op`'s attribute `name`, added (with no value yet) if it has none.
AttrDef& MutableAttr(OpDef& op, absl::string_view name) {
  for (AttrDef& attr : *op.mutable_attrs()) {
    if (attr.name() == name) return attr;
  }
  AttrDef* attr = op.add_attrs();
  attr->set_name(std::string(name));
  return *attr;
}

// Names for the new variables, unused in the block.
class FreshNames {
 public:
  explicit FreshNames(const BlockDef& block) {
    for (const VarDef& var : block.vars()) used_.insert(var.name());
    for (const OpDef& op : block.ops()) {
      for (const auto* slots : {&op.inputs(), &op.outputs()}) {
        for (const OpSlot& slot : *slots) {
          for (const std::string& var : slot.vars()) used_.insert(var);
        }
      }
    }
  }
  std::string For(const std::string& base) {
    std::string name = absl::StrCat(base, "@NHWC");
    for (int k = 2; used_.contains(name); ++k) {
      name = absl::StrCat(base, "@NHWC", k);
    }
    used_.insert(name);
    return name;
  }

 private:
  absl::flat_hash_set<std::string> used_;
};

// Per op index, for each op that prefers channels-last and has a fuse_relu
// attribute (conv2d) whose NHWC output only a relu reads: that relu's index.
// The op then writes the relu's output itself, in one pass.
absl::flat_hash_map<int, int> ReluFusions(
    const BlockDef& block, const std::vector<DataOp>& data_ops,
    const absl::flat_hash_map<std::string, Uses>& uses,
    const absl::flat_hash_set<std::string>& nhwc) {
  absl::flat_hash_map<int, int> fusions;
  for (int i = 0; i < block.ops_size(); ++i) {
    const DataOp& op = data_ops[i];
    if (op.role != LayoutRole::kPrefersChannelsLast ||
        !nhwc.contains(*op.out)) {
      continue;
    }
    const OpSpec* spec = OpRegistry::Global().Find(block.ops(i).type());
    const AttrDef* fused = FindAttr(block.ops(i), "fuse_relu");
    if (spec->FindAttr("fuse_relu") == nullptr ||
        (fused != nullptr && fused->b())) {
      continue;
    }
    const std::vector<int>& readers = uses.at(*op.out).data_readers;
    if (readers.size() == 1 && block.ops(readers[0]).type() == "relu" &&
        nhwc.contains(*data_ops[readers[0]].out)) {
      fusions[i] = readers[0];
    }
  }
  return fusions;
}

}  // namespace

std::optional<LayoutRewrite> RewriteChannelsLast(const BlockDef& block) {
  const int n = block.ops_size();
  std::vector<DataOp> data_ops(n);
  absl::flat_hash_map<std::string, Uses> uses;
  for (int i = 0; i < n; ++i) {
    const OpDef& op = block.ops(i);
    const DataOp& data = data_ops[i] = DataOpOf(op);
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) {
        if (data.rewritable() && slot.slot() == *data.in_slot) {
          uses[var].data_readers.push_back(i);
        } else {
          uses[var].other_reader = true;
        }
      }
    }
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) {
        Uses& use = uses[var];
        ++use.writers;
        use.last_writer = i;
        if (data.rewritable() && var == *data.out) use.data_writer = i;
      }
    }
  }
  const absl::flat_hash_set<std::string> nhwc =
      ChannelsLastVars(block, data_ops, uses);
  if (nhwc.empty()) return std::nullopt;

  const absl::flat_hash_map<int, int> fusions =
      ReluFusions(block, data_ops, uses, nhwc);
  absl::flat_hash_set<int> fused_relus;
  for (const auto& [conv, relu] : fusions) fused_relus.insert(relu);
  FreshNames fresh(block);
  // In name order, so that the same net always gets the same names.
  std::vector<std::string> names(nhwc.begin(), nhwc.end());
  std::sort(names.begin(), names.end());
  absl::flat_hash_map<std::string, std::string> renamed;
  for (const std::string& name : names) renamed[name] = fresh.For(name);

  LayoutRewrite rewrite;
  if (block.has_parent_idx()) rewrite.block.set_parent_idx(block.parent_idx());
  for (const VarDef& var : block.vars()) {
    // A declared NCHW shape would not fit the NHWC variable.
    if (!nhwc.contains(var.name())) *rewrite.block.add_vars() = var;
  }
  auto append = [&rewrite](OpDef op, int source) {
    *rewrite.block.add_ops() = std::move(op);
    rewrite.source_op.push_back(source);
  };
  // NCHW inputs already transposed for an earlier op: (name, position).
  absl::flat_hash_map<std::string, std::pair<std::string, int>> entered;
  for (int i = 0; i < n; ++i) {
    const OpDef& op = block.ops(i);
    const DataOp& data = data_ops[i];
    if (!data.rewritable() ||
        (!nhwc.contains(*data.in) && !nhwc.contains(*data.out))) {
      append(op, i);
      continue;
    }
    if (fused_relus.contains(i)) continue;
    OpDef changed = op;
    std::string in;
    if (nhwc.contains(*data.in)) {
      in = renamed[*data.in];
    } else {
      auto it = entered.find(*data.in);
      if (it != entered.end() &&
          uses[*data.in].last_writer < it->second.second) {
        in = it->second.first;
      } else {
        in = fresh.For(*data.in);
        append(Transpose(*data.in, in, {0, 2, 3, 1}), i);
        entered[*data.in] = {in, i};
      }
    }
    SetDataInput(changed, *data.in_slot, in);
    const bool out_nhwc = nhwc.contains(*data.out);
    std::string out = out_nhwc ? renamed[*data.out] : fresh.For(*data.out);
    if (auto fusion = fusions.find(i); fusion != fusions.end()) {
      out = renamed[*data_ops[fusion->second].out];
      MutableAttr(changed, "fuse_relu").set_b(true);
    }
    for (OpSlot& slot : *changed.mutable_outputs()) {
      if (slot.vars_size() == 1 && slot.vars(0) == *data.out) {
        slot.set_vars(0, out);
      }
    }
    if (data.role != LayoutRole::kElementwise) {
      MutableAttr(changed, kDataFormatAttr).set_s("NHWC");
    }
    append(std::move(changed), i);
    if (!out_nhwc) append(Transpose(out, *data.out, {0, 3, 1, 2}), i);
  }
  return rewrite;
}

}  // namespace scopeflow
