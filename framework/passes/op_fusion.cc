#include "framework/passes/op_fusion.h"

#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "framework/op_def_attrs.h"

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

void SetSlot(google::protobuf::RepeatedPtrField<OpSlot>* slots,
             const std::string& slot, const std::string& var) {
  OpSlot* bound = slots->Add();
  bound->set_slot(slot);
  bound->add_vars(var);
}

bool IsFcDtype(DataType dtype) {
  return dtype == kFloat32 || dtype == kFloat64;
}

// The ops of a block as the passes fuse them.
class Fuser {
 public:
  Fuser(const BlockDef& block,
        const absl::flat_hash_map<std::string, VarInfo>& infos)
      : block_(block), infos_(infos) {
    for (int i = 0; i < block.ops_size(); ++i) {
      ops_.push_back(block.ops(i));
      source_.push_back(i);
    }
    alive_.assign(ops_.size(), true);
    for (const VarDef& var : block.vars()) {
      if (var.persistable()) persistable_.insert(var.name());
    }
  }

  // matmul + add of a bias -> fc.
  void FuseProductsAndBiases() {
    CountUses();
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
      if (!alive_[i] || ops_[i].type() != "matmul") continue;
      const OpDef& product = ops_[i];
      const std::string* x = OnlyVar(product.inputs(), "X");
      const std::string* y = OnlyVar(product.inputs(), "Y");
      const VarInfo* x_info = x != nullptr ? Info(*x) : nullptr;
      const VarInfo* y_info = y != nullptr ? Info(*y) : nullptr;
      if (x_info == nullptr || y_info == nullptr || x_info->dims.size() < 2 ||
          y_info->dims.size() != 2 || !IsDefault(product, "transpose_x") ||
          !IsDefault(product, "transpose_y") || !AlphaIsOne(product)) {
        continue;
      }
      const std::optional<int> add = OnlyReaderOfOutput(i, "add");
      if (!add.has_value()) continue;
      const OpDef& sum = ops_[*add];
      const std::string& product_out = *OnlyVar(product.outputs(), "Out");
      const std::string* sum_x = OnlyVar(sum.inputs(), "X");
      const std::string* sum_y = OnlyVar(sum.inputs(), "Y");
      const std::string* sum_out = OnlyVar(sum.outputs(), "Out");
      if (sum_x == nullptr || sum_y == nullptr || sum_out == nullptr) continue;
      const std::string& bias = *sum_x == product_out ? *sum_y : *sum_x;
      const VarInfo* bias_info = Info(bias);
      const VarInfo* sum_info = Info(*sum_out);
      if (bias == product_out || bias_info == nullptr || sum_info == nullptr ||
          !IsRow(bias_info->dims, y_info->dims[1]) ||
          sum_info->dims != Info(product_out)->dims ||
          sum_info->dtype != Info(product_out)->dtype ||
          bias_info->dtype != x_info->dtype ||
          WrittenBetween(i, *add, {*x, *y})) {
        continue;
      }
      OpDef fc;
      fc.set_type("fc");
      SetSlot(fc.mutable_inputs(), "X", *x);
      SetSlot(fc.mutable_inputs(), "W", *y);
      SetSlot(fc.mutable_inputs(), "Bias", bias);
      SetSlot(fc.mutable_outputs(), "Out", *sum_out);
      MutableAttr(fc, "in_num_col_dims")
          .set_i(static_cast<int32_t>(x_info->dims.size() - 1));
      Fuse(i, *add, std::move(fc), product_out);
    }
  }

  // fc + relu -> fc with activation_type "relu"; where `gelu`, fc + gelu
  // -> fc with activation_type "gelu" (or "gelu_tanh", for a gelu with
  // "approximate").
  void FuseActivations(bool gelu) {
    CountUses();
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
      if (!alive_[i] || ops_[i].type() != "fc") continue;
      const AttrDef* activation = FindAttr(ops_[i], "activation_type");
      if (activation != nullptr && !activation->s().empty()) continue;
      std::optional<int> reader = OnlyReaderOfOutput(i, "relu");
      if (!reader.has_value() && gelu) reader = OnlyReaderOfOutput(i, "gelu");
      if (!reader.has_value()) continue;
      const std::string* reader_out = OnlyVar(ops_[*reader].outputs(), "Out");
      std::vector<std::string> inputs;
      for (const OpSlot& slot : ops_[i].inputs()) {
        inputs.insert(inputs.end(), slot.vars().begin(), slot.vars().end());
      }
      if (reader_out == nullptr || WrittenBetween(i, *reader, inputs)) continue;
      std::string fused_activation = "relu";
      if (ops_[*reader].type() == "gelu") {
        const AttrDef* approximate = FindAttr(ops_[*reader], "approximate");
        fused_activation =
            approximate != nullptr && approximate->b() ? "gelu_tanh" : "gelu";
      }
      const std::string fc_out = *OnlyVar(ops_[i].outputs(), "Out");
      OpDef fused = ops_[i];
      fused.mutable_outputs()->Clear();
      SetSlot(fused.mutable_outputs(), "Out", *reader_out);
      MutableAttr(fused, "activation_type").set_s(fused_activation);
      Fuse(i, *reader, std::move(fused), fc_out);
    }
  }

  std::optional<OpFusion> Result() const {
    if (gone_.empty()) return std::nullopt;
    OpFusion fusion;
    fusion.block = block_;
    fusion.block.clear_ops();
    fusion.block.clear_vars();
    for (const VarDef& var : block_.vars()) {
      if (!gone_.contains(var.name())) *fusion.block.add_vars() = var;
    }
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (!alive_[i]) {
        ++fusion.ops_removed;
        continue;
      }
      *fusion.block.add_ops() = ops_[i];
      fusion.source_op.push_back(source_[i]);
    }
    return fusion;
  }

 private:
  struct Uses {
    std::vector<int> readers;  // an op once per slot position it reads
    std::vector<int> writers;
  };

  const VarInfo* Info(const std::string& name) const {
    auto it = infos_.find(name);
    return it != infos_.end() && it->second.has_dims ? &it->second : nullptr;
  }

  static bool IsDefault(const OpDef& op, absl::string_view flag) {
    const AttrDef* attr = FindAttr(op, flag);
    return attr == nullptr || !attr->b();
  }

  static bool AlphaIsOne(const OpDef& op) {
    const AttrDef* alpha = FindAttr(op, "alpha");
    return alpha == nullptr || alpha->f() == 1.0f;
  }

  // Whether `dims` hold `n` values in one row: [n], [1, n], [1, 1, n]...
  static bool IsRow(const Dims& dims, int64_t n) {
    if (dims.empty() || n < 0 || dims.back() != n) return false;
    for (size_t d = 0; d + 1 < dims.size(); ++d) {
      if (dims[d] != 1) return false;
    }
    return true;
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

  // The op that alone reads op `i`'s one output "Out", where it is of type
  // `type`, comes after `i`, and that output is a temporary of fc's dtypes
  // written by `i` alone; else nullopt.
  std::optional<int> OnlyReaderOfOutput(int i, absl::string_view type) const {
    if (ops_[i].outputs_size() != 1) return std::nullopt;
    const std::string* out = OnlyVar(ops_[i].outputs(), "Out");
    if (out == nullptr || persistable_.contains(*out)) return std::nullopt;
    const VarInfo* info = Info(*out);
    if (info == nullptr || !IsFcDtype(info->dtype)) return std::nullopt;
    auto it = uses_.find(*out);
    if (it == uses_.end()) return std::nullopt;
    const Uses& uses = it->second;
    if (uses.writers.size() != 1 || uses.readers.size() != 1) {
      return std::nullopt;
    }
    const int reader = uses.readers[0];
    if (reader <= i || ops_[reader].type() != type) return std::nullopt;
    // The fused op writes the reader's output: not in place of an input.
    const std::string* reader_out = OnlyVar(ops_[reader].outputs(), "Out");
    if (reader_out == nullptr || ops_[reader].outputs_size() != 1) {
      return std::nullopt;
    }
    for (const OpSlot& slot : ops_[i].inputs()) {
      for (const std::string& var : slot.vars()) {
        if (var == *reader_out) return std::nullopt;
      }
    }
    return reader;
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

  // Replaces op `second` by `fused` and drops op `first` and `between`, the
  // variable that joined them. Uses are counted again before the next pass;
  // within a pass, the ops fused are not looked at again.
  void Fuse(int first, int second, OpDef fused, const std::string& between) {
    ops_[second] = std::move(fused);
    source_[second] = source_[first];
    alive_[first] = false;
    gone_.insert(between);
  }

  const BlockDef& block_;
  const absl::flat_hash_map<std::string, VarInfo>& infos_;
  std::vector<OpDef> ops_;
  std::vector<int> source_;
  std::vector<bool> alive_;
  absl::flat_hash_set<std::string> persistable_;
  absl::flat_hash_set<std::string> gone_;
  absl::flat_hash_map<std::string, Uses> uses_;
};

}  // namespace

std::optional<OpFusion> FuseOps(
    const BlockDef& block,
    const absl::flat_hash_map<std::string, VarInfo>& infos, bool gelu) {
  Fuser fuser(block, infos);
  fuser.FuseProductsAndBiases();
  fuser.FuseActivations(gelu);
  return fuser.Result();
}

absl::StatusOr<bool> OpFusionPass::Run(PassBlock& block,
                                       const PassContext& context) const {
  const PreparedNet& prepared = context.prepared;
  absl::flat_hash_map<std::string, VarInfo> infos;
  for (size_t v = 0; v < prepared.var_names().size(); ++v) {
    infos[prepared.var_names()[v]] = prepared.var_infos()[v];
  }
  // fc fuses gelu on the CPU only (its CUDA kernel has relu alone).
  std::optional<OpFusion> fusion =
      FuseOps(block.block, infos, /*gelu=*/context.place.is_cpu());
  if (!fusion.has_value()) return false;
  block.Replace(std::move(fusion->block), fusion->source_op);
  return true;
}

}  // namespace scopeflow
