#include "framework/prepare_block.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/net_io.h"
#include "framework/op_spec.h"
#include "framework/run_scope_cache.h"
#include "framework/var_info_checks.h"
#include "platform/device.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

std::string SlotNames(const std::vector<SlotSpec>& slots) {
  std::vector<std::string> names;
  for (const SlotSpec& slot : slots) names.push_back(slot.name);
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

// The variables of enclosing blocks a block of a control-flow op can see,
// with what Prepare knows of them.
using OuterVars = absl::flat_hash_map<std::string, VarInfo>;

}  // namespace

// Builds a PreparedNet, collecting every problem instead of stopping at the
// first.
class PreparedNetBuilder {
 public:
  // `outer`: null for a net's top block; for a control-flow op's block,
  // the variables the enclosing blocks define before the op.
  PreparedNetBuilder(const NetDef& net, int block_index, const BlockDef& block,
                     const Place& place, const OuterVars* outer,
                     PreparedNet& prepared)
      : net_(net),
        block_index_(block_index),
        block_(block),
        place_(place),
        outer_(outer),
        prepared_(prepared),
        ops_(prepared.ops_),
        names_(prepared.names_),
        index_(prepared.index_),
        infos_(prepared.infos_),
        persistable_(prepared.persistable_),
        read_first_(prepared.read_first_),
        written_(prepared.written_),
        is_input_(prepared.is_input_),
        external_(prepared.external_),
        is_tensor_(prepared.is_tensor_) {
    prepared.place_ = place;
    prepared.block_index_ = block_index;
  }

  // What a run needs beyond the ops: when each temporary dies, the inputs
  // to feed, the enclosing variables used.
  static void Finish(PreparedNet& prepared);

  std::vector<std::string> Run() {
    DeclareVars();
    for (int i = 0; i < block_.ops_size(); ++i) PrepareOp(i, block_.ops(i));
    return std::move(errors_);
  }

 private:
  int VarIndex(const std::string& name) {
    auto [it, inserted] = index_.try_emplace(name, names_.size());
    if (inserted) {
      names_.push_back(name);
      infos_.emplace_back();
      declared_.emplace_back();
      persistable_.push_back(false);
      written_.push_back(false);
      read_first_.push_back(false);
      is_input_.push_back(false);
      defined_.push_back(false);
      is_declared_.push_back(false);
      external_.push_back(false);
      is_tensor_.push_back(true);
      // Undeclared here and visible in an enclosing block: that variable.
      // (DeclareVars runs first, so a declared name shadows it.)
      if (outer_ != nullptr) {
        auto outer = outer_->find(name);
        if (outer != outer_->end()) {
          external_.back() = true;
          infos_.back() = outer->second;
          defined_.back() = true;
        }
      }
    }
    return it->second;
  }

  void DeclareVars() {
    for (const VarDef& var : block_.vars()) {
      if (var.name().empty()) {
        errors_.push_back("a variable of the block has an empty name");
        continue;
      }
      if (index_.contains(var.name())) {
        errors_.push_back(
            absl::StrFormat("variable \"%s\" is declared twice", var.name()));
        continue;
      }
      if (var.dtype() != DATA_TYPE_UNSPECIFIED &&
          !IsValidDataType(var.dtype())) {
        errors_.push_back(
            absl::StrFormat("variable \"%s\" has invalid dtype %s", var.name(),
                            DataTypeName(var.dtype())));
      }
      const int v = VarIndex(var.name());
      VarInfo info;
      info.dtype = var.dtype();
      info.dims.assign(var.shape().begin(), var.shape().end());
      info.has_dims = var.shape_size() > 0;
      const absl::Status shape = CheckShape(info.dims);
      if (!shape.ok()) {
        errors_.push_back(absl::StrFormat(
            "variable \"%s\" is declared with shape %s: %s", var.name(),
            DimsToString(info.dims), shape.message()));
        // Ops reading it see an unknown rank, not a shape they would
        // overflow on.
        info.dims.clear();
        info.has_dims = false;
      }
      if (var.dim_names_size() > 0) {
        if (var.dim_names_size() != var.shape_size()) {
          errors_.push_back(absl::StrFormat(
              "variable \"%s\" names %d dimension(s) but its shape %s has "
              "%d",
              var.name(), var.dim_names_size(), DimsToString(info.dims),
              var.shape_size()));
        } else {
          for (int d = 0; d < var.shape_size(); ++d) {
            if (!var.dim_names(d).empty() && var.shape(d) != -1) {
              errors_.push_back(absl::StrFormat(
                  "variable \"%s\" names its dimension %d \"%s\", but only "
                  "an unknown dimension (-1) may have a name; it is %d",
                  var.name(), d, var.dim_names(d), var.shape(d)));
            }
          }
        }
      }
      infos_[v] = info;
      declared_[v] = info;
      is_declared_[v] = true;
      external_[v] = false;  // A declared name shadows an enclosing one.
      persistable_[v] = var.persistable();
      defined_[v] = var.persistable();
    }
  }

  // Binds the op's slots; false if any is wrong.
  bool BindSlots(const std::string& prefix, const OpSpec& spec,
                 const OpDef& def, PreparedOp& op, bool inputs) {
    const auto& given = inputs ? def.inputs() : def.outputs();
    const std::vector<SlotSpec>& declared =
        inputs ? spec.inputs() : spec.outputs();
    std::vector<std::vector<int>>& bound = inputs ? op.inputs : op.outputs;
    const char* kind = inputs ? "input" : "output";
    bound.assign(declared.size(), {});
    std::vector<bool> seen(declared.size(), false);
    bool ok = true;
    for (const OpSlot& slot : given) {
      const int s =
          inputs ? spec.InputIndex(slot.slot()) : spec.OutputIndex(slot.slot());
      if (s < 0) {
        errors_.push_back(
            absl::StrFormat("%s: unknown %s slot \"%s\" (%ss: %s)", prefix,
                            kind, slot.slot(), kind, SlotNames(declared)));
        ok = false;
        continue;
      }
      if (seen[s]) {
        errors_.push_back(absl::StrFormat("%s: %s slot \"%s\" is given twice",
                                          prefix, kind, slot.slot()));
        ok = false;
        continue;
      }
      seen[s] = true;
      for (const std::string& name : slot.vars()) {
        if (name.empty()) {
          errors_.push_back(
              absl::StrFormat("%s: %s slot \"%s\" names an empty variable",
                              prefix, kind, slot.slot()));
          ok = false;
          continue;
        }
        const int v = VarIndex(name);
        if (declared[s].scopes) is_tensor_[v] = false;
        bound[s].push_back(v);
      }
    }
    for (size_t s = 0; s < declared.size(); ++s) {
      if (!declared[s].optional && bound[s].empty()) {
        errors_.push_back(absl::StrFormat("%s: missing required %s \"%s\"",
                                          prefix, kind, declared[s].name));
        ok = false;
      }
      if (!declared[s].variadic && bound[s].size() > 1) {
        errors_.push_back(
            absl::StrFormat("%s: %s \"%s\" takes one variable, got %d", prefix,
                            kind, declared[s].name, bound[s].size()));
        ok = false;
      }
    }
    return ok;
  }

  bool BindAttrs(const std::string& prefix, const OpSpec& spec,
                 const OpDef& def, PreparedOp& op) {
    bool ok = true;
    for (const AttrDef& attr : def.attrs()) {
      const AttrSpec* attr_spec = spec.FindAttr(attr.name());
      if (attr_spec == nullptr) {
        std::vector<std::string> known;
        for (const AttrSpec& a : spec.attrs()) known.push_back(a.name);
        errors_.push_back(absl::StrFormat(
            "%s: unknown attribute \"%s\" (attributes: %s)", prefix,
            attr.name(), known.empty() ? "none" : absl::StrJoin(known, ", ")));
        ok = false;
        continue;
      }
      absl::StatusOr<AttrValue> value = AttrValueFromProto(attr);
      if (value.ok()) value = ConvertAttrValue(*value, attr_spec->type);
      if (!value.ok()) {
        errors_.push_back(absl::StrFormat("%s: attribute \"%s\": %s", prefix,
                                          attr.name(),
                                          value.status().message()));
        ok = false;
        continue;
      }
      if (attr_spec->check != nullptr) {
        absl::Status checked = attr_spec->check(*value);
        if (!checked.ok()) {
          errors_.push_back(absl::StrFormat("%s: attribute \"%s\" %s", prefix,
                                            attr.name(), checked.message()));
          ok = false;
          continue;
        }
      }
      op.attrs.Set(attr.name(), *std::move(value));
    }
    for (const AttrSpec& attr_spec : spec.attrs()) {
      if (op.attrs.Has(attr_spec.name)) continue;
      if (attr_spec.default_value.has_value()) {
        op.attrs.Set(attr_spec.name, *attr_spec.default_value);
      } else {
        errors_.push_back(absl::StrFormat(
            "%s: missing required attribute \"%s\" (%s)", prefix,
            attr_spec.name, AttrTypeName(attr_spec.type)));
        ok = false;
      }
    }
    return ok;
  }

  // An op writing a variable it also reads would have its input replaced by
  // the freshly allocated output before its kernel runs.
  bool CheckNotInPlace(const std::string& prefix, const OpSpec& spec,
                       const PreparedOp& op) {
    bool ok = true;
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      const int in_place = spec.InPlaceInput(static_cast<int>(o));
      for (size_t k = 0; k < op.outputs[o].size(); ++k) {
        const int v = op.outputs[o][k];
        for (size_t i = 0; i < op.inputs.size(); ++i) {
          if (std::find(op.inputs[i].begin(), op.inputs[i].end(), v) ==
              op.inputs[i].end()) {
            continue;
          }
          // Declared in place: the same variable at the same position.
          if (static_cast<int>(i) == in_place && k < op.inputs[i].size() &&
              op.inputs[i][k] == v) {
            continue;
          }
          errors_.push_back(absl::StrFormat(
              "%s: output \"%s\" writes variable \"%s\", which input \"%s\" "
              "reads; write the result to a new variable",
              prefix, spec.outputs()[o].name, names_[v],
              spec.inputs()[i].name));
          ok = false;
        }
      }
    }
    return ok;
  }

  bool CheckReads(const std::string& prefix, const OpSpec& spec,
                  const PreparedOp& op) {
    bool ok = true;
    for (size_t s = 0; s < op.inputs.size(); ++s) {
      for (int v : op.inputs[s]) {
        if (persistable_[v] && !written_[v]) read_first_[v] = true;
        if (defined_[v]) continue;
        if (is_declared_[v]) {
          if (declared_[v].dtype == DATA_TYPE_UNSPECIFIED) {
            errors_.push_back(absl::StrFormat(
                "%s: input \"%s\" reads variable \"%s\", an input of the net "
                "that declares no dtype",
                prefix, spec.inputs()[s].name, names_[v]));
            ok = false;
          }
          // Declared and read before any write: the net's input, fed at Run.
          is_input_[v] = true;
          defined_[v] = true;
          continue;
        }
        errors_.push_back(absl::StrFormat(
            "%s: input \"%s\" reads variable \"%s\" before any op writes it "
            "(it is not persistable, and not declared in the block's vars "
            "as an input to feed)",
            prefix, spec.inputs()[s].name, names_[v]));
        defined_[v] = true;  // Report each such variable once.
        ok = false;
      }
    }
    return ok;
  }

  // Checks each output's inferred shape as DeclareVars checks declared ones
  // (a shape attribute, or sizes that add up, can overflow), reporting the
  // bad ones if `report`. Either way a bad shape becomes an unknown rank, so
  // that the ops after this one do not compute with it.
  bool CheckInferredShapes(const std::string& prefix, const OpSpec& spec,
                           const PreparedOp& op, bool report) {
    bool ok = true;
    for (size_t s = 0; s < op.outputs.size(); ++s) {
      for (int v : op.outputs[s]) {
        VarInfo& info = infos_[v];
        if (!info.has_dims) continue;
        const absl::Status shape = CheckShape(info.dims);
        if (shape.ok()) continue;
        if (report) {
          errors_.push_back(absl::StrFormat(
              "%s: output \"%s\" (variable \"%s\") is inferred with shape "
              "%s: %s",
              prefix, spec.outputs()[s].name, names_[v],
              DimsToString(info.dims), shape.message()));
        }
        info.dims.clear();
        info.has_dims = false;
        ok = false;
      }
    }
    return ok;
  }

  void CheckOutputsAgainstDeclarations(const std::string& prefix,
                                       const OpSpec& spec,
                                       const PreparedOp& op) {
    for (size_t s = 0; s < op.outputs.size(); ++s) {
      for (int v : op.outputs[s]) {
        if (!is_declared_[v]) continue;
        const VarInfo& declared = declared_[v];
        const VarInfo& inferred = infos_[v];
        const bool dtype_clash = declared.dtype != DATA_TYPE_UNSPECIFIED &&
                                 inferred.dtype != DATA_TYPE_UNSPECIFIED &&
                                 declared.dtype != inferred.dtype;
        const bool shape_clash =
            inferred.has_dims && !ShapeAdmits(declared, inferred.dims);
        if (dtype_clash || shape_clash) {
          errors_.push_back(absl::StrFormat(
              "%s: output \"%s\" (variable \"%s\") is inferred as %s but "
              "declared as %s",
              prefix, spec.outputs()[s].name, names_[v], InfoToString(inferred),
              InfoToString(declared)));
        }
      }
    }
  }

  void PrepareOp(int i, const OpDef& def) {
    const std::string prefix = absl::StrFormat("op %d (%s)", i, def.type());
    PreparedOp op;
    op.index = i;
    op.spec = OpRegistry::Global().Find(def.type());
    if (op.spec == nullptr) {
      errors_.push_back(
          absl::StrFormat("%s: unknown op type \"%s\"", prefix, def.type()));
      MarkOutputsDefined(def);
      return;
    }
    const OpSpec& spec = *op.spec;
    bool ok = BindSlots(prefix, spec, def, op, /*inputs=*/true);
    ok = BindSlots(prefix, spec, def, op, /*inputs=*/false) && ok;
    ok = BindAttrs(prefix, spec, def, op) && ok;
    if (ok && !spec.control_flow()) ok = CheckNotInPlace(prefix, spec, op);
    if (ok) ok = CheckReads(prefix, spec, op);
    if (ok && spec.infer() != nullptr) {
      InferContext context(op, infos_, names_);
      absl::Status inferred = spec.infer()(context);
      if (!inferred.ok()) {
        errors_.push_back(absl::StrCat(prefix, ": ", inferred.message()));
        ok = false;
      }
      ok = CheckInferredShapes(prefix, spec, op, /*report=*/ok) && ok;
    }
    // After inference, so that the blocks see what the op says of its
    // outputs (a loop's carried variables take their initial values' types).
    if (ok && spec.control_flow()) ok = PrepareBlocks(prefix, def, op);
    if (ok) {
      CheckOutputsAgainstDeclarations(prefix, spec, op);
      ok = ChooseKernel(prefix, op);
      // Outputs Prepare could not fully infer from fully known inputs
      // depend on input values (InferContext::InputValue): those ops infer
      // again at every run.
      op.static_shapes = spec.infer() != nullptr;
      for (const auto* slots : {&op.inputs, &op.outputs}) {
        for (const auto& slot : *slots) {
          for (int v : slot) {
            op.static_shapes = op.static_shapes && FullyKnown(infos_[v]);
          }
        }
      }
    }
    MarkOutputsDefined(def);
    for (const auto& slot : op.outputs) {
      for (int v : slot) written_[v] = true;
    }
    if (ok) ops_.push_back(std::move(op));
  }

  // Prepares each block attribute of a control-flow op as a block seeing
  // the variables defined so far (and the op's outputs, which its blocks
  // write), and checks that the op lists every enclosing variable a block
  // reads or writes, so that liveness and gradients can see them.
  bool PrepareBlocks(const std::string& prefix, const OpDef& def,
                     PreparedOp& op) {
    bool ok = true;
    for (const AttrSpec& attr : op.spec->attrs()) {
      if (attr.type != AttrType::kBlock) continue;
      const int b = op.attrs.Get<BlockIndex>(attr.name).index;
      if (b <= 0 || b >= net_.blocks_size() || b == block_index_) {
        errors_.push_back(absl::StrFormat(
            "%s: attribute \"%s\" names block %d, which is not a block of the "
            "net other than its top block and this one (it has %d)",
            prefix, attr.name, b, net_.blocks_size()));
        ok = false;
        continue;
      }
      if (depth_ >= kMaxBlockDepth) {
        errors_.push_back(absl::StrFormat(
            "%s: block %d would be nested %d blocks deep (at most %d)", prefix,
            b, depth_ + 1, kMaxBlockDepth));
        ok = false;
        continue;
      }
      const BlockDef& block = net_.blocks(b);
      if (!block.has_parent_idx() || block.parent_idx() != block_index_) {
        errors_.push_back(absl::StrFormat(
            "%s: attribute \"%s\" names block %d, whose parent_idx is %d; "
            "the block of an op in block %d must have parent_idx %d",
            prefix, attr.name, b,
            block.has_parent_idx() ? block.parent_idx() : -1, block_index_,
            block_index_));
        ok = false;
        continue;
      }
      absl::StatusOr<BlockDef> rewritten = block;
      if (op.spec->block_rewrite() != nullptr) {
        rewritten = op.spec->block_rewrite()(def, attr.name, block);
      }
      if (!rewritten.ok()) {
        errors_.push_back(absl::StrFormat("%s: block %d: %s", prefix, b,
                                          rewritten.status().message()));
        ok = false;
        continue;
      }
      OuterVars visible = outer_ != nullptr ? *outer_ : OuterVars();
      for (size_t v = 0; v < names_.size(); ++v) {
        if (defined_[v] || persistable_[v]) visible[names_[v]] = infos_[v];
      }
      for (const auto& slot : op.outputs) {
        for (int v : slot) visible[names_[v]] = infos_[v];
      }
      auto sub = std::make_shared<PreparedNet>();
      PreparedNetBuilder builder(net_, b, *rewritten, place_, &visible, *sub);
      builder.depth_ = depth_ + 1;
      std::vector<std::string> errors = builder.Run();
      for (const std::string& error : errors) {
        errors_.push_back(
            absl::StrFormat("%s: block %d: %s", prefix, b, error));
      }
      if (!errors.empty()) {
        ok = false;
        continue;
      }
      Finish(*sub);
      ok = CheckOuterAccess(prefix, b, op, *sub) && ok;
      JoinOuterWrites(*sub);
      op.blocks.emplace_back(attr.name, std::move(sub));
    }
    return ok;
  }

  // What a block infers for the enclosing variables it writes becomes what
  // this block knows of them: taken where nothing was known, and where the
  // two disagree (the block may or may not run, or run many times) the
  // dimension becomes unknown.
  void JoinOuterWrites(const PreparedNet& sub) {
    for (const std::string& name : sub.outer_writes()) {
      auto it = index_.find(name);
      if (it == index_.end()) continue;
      VarInfo& known = infos_[it->second];
      const VarInfo& wrote = sub.var_infos()[sub.VarIndex(name)];
      if (known.dtype == DATA_TYPE_UNSPECIFIED) known.dtype = wrote.dtype;
      if (!known.has_dims) {
        known.dims = wrote.dims;
        known.has_dims = wrote.has_dims;
      } else if (wrote.has_dims) {
        if (known.dims.size() != wrote.dims.size()) {
          known.dims.clear();
          known.has_dims = false;
          continue;
        }
        for (size_t d = 0; d < known.dims.size(); ++d) {
          if (known.dims[d] != wrote.dims[d]) known.dims[d] = -1;
        }
      }
    }
  }

  bool CheckOuterAccess(const std::string& prefix, int b, const PreparedOp& op,
                        const PreparedNet& sub) {
    absl::flat_hash_set<std::string> inputs;
    absl::flat_hash_set<std::string> outputs;
    for (const auto& slot : op.inputs) {
      for (int v : slot) inputs.insert(names_[v]);
    }
    for (const auto& slot : op.outputs) {
      for (int v : slot) outputs.insert(names_[v]);
    }
    bool ok = true;
    for (const std::string& name : sub.outer_reads()) {
      if (inputs.contains(name) || outputs.contains(name)) continue;
      errors_.push_back(absl::StrFormat(
          "%s: block %d reads variable \"%s\" of an enclosing block, which "
          "the op does not list among its inputs",
          prefix, b, name));
      ok = false;
    }
    for (const std::string& name : sub.outer_writes()) {
      if (outputs.contains(name)) continue;
      errors_.push_back(absl::StrFormat(
          "%s: block %d writes variable \"%s\" of an enclosing block, which "
          "the op does not list among its outputs",
          prefix, b, name));
      ok = false;
    }
    return ok;
  }

  bool ChooseKernel(const std::string& prefix, PreparedOp& op) {
    const OpSpec& spec = *op.spec;
    const int slot = spec.kernel_dtype_slot();
    const bool from_input =
        spec.kernel_dtype_from_input() && !spec.inputs().empty();
    const auto& slots = from_input ? op.inputs : op.outputs;
    DataType dtype = DATA_TYPE_UNSPECIFIED;
    if (slot >= 0 && slot < static_cast<int>(slots.size()) &&
        !slots[slot].empty()) {
      dtype = infos_[slots[slot][0]].dtype;
    }
    op.kernel_place = place_;
    op.kernel = spec.FindKernel(KernelKey{place_.type(), dtype});
    if (op.kernel == nullptr && !place_.is_cpu()) {
      // No device kernel: the CPU kernel runs on host copies (HostStaging).
      // A control-flow op's kernel only runs blocks, prepared for the
      // device, and reads its condition through a copy: it stays.
      op.kernel = spec.FindKernel(KernelKey{DeviceType::kCPU, dtype});
      if (!spec.control_flow()) op.kernel_place = CPUPlace();
    }
    if (op.kernel == nullptr) {
      errors_.push_back(absl::StrFormat(
          "%s: no kernel for dtype %s on %s (kernels there: %s)", prefix,
          DataTypeName(dtype), place_.ToString(),
          spec.KernelDtypes(place_.type())));
      return false;
    }
    return true;
  }

  void MarkOutputsDefined(const OpDef& def) {
    for (const OpSlot& slot : def.outputs()) {
      for (const std::string& name : slot.vars()) {
        if (!name.empty()) defined_[VarIndex(name)] = true;
      }
    }
  }

  // Blocks nest by recursion here and at run time: a bound keeps a
  // malformed net from exhausting the stack.
  static constexpr int kMaxBlockDepth = 64;

  const NetDef& net_;
  const int block_index_;
  int depth_ = 0;  // how many blocks enclose this one
  const BlockDef& block_;
  const Place& place_;
  const OuterVars* outer_;
  PreparedNet& prepared_;
  std::vector<PreparedOp>& ops_;
  std::vector<std::string>& names_;
  absl::flat_hash_map<std::string, int>& index_;
  std::vector<VarInfo>& infos_;
  std::vector<bool>& persistable_;
  std::vector<bool>& read_first_;
  std::vector<bool>& written_;
  std::vector<bool>& is_input_;
  std::vector<bool>& external_;
  std::vector<bool>& is_tensor_;
  std::vector<VarInfo> declared_;
  std::vector<bool> is_declared_;
  std::vector<bool> defined_;
  std::vector<std::string> errors_;
};

void PreparedNetBuilder::Finish(PreparedNet& prepared) {
  prepared.run_scopes_ = std::make_shared<RunScopeCache>();
  prepared.memory_plans_ = std::make_shared<MemoryPlanCache>();
  const size_t n = prepared.names_.size();
  std::vector<int> last_use(n, -1);
  absl::flat_hash_set<int> reads;
  absl::flat_hash_set<int> writes;
  for (size_t position = 0; position < prepared.ops_.size(); ++position) {
    const PreparedOp& op = prepared.ops_[position];
    for (const auto& slot : op.inputs) {
      for (int v : slot) {
        last_use[v] = static_cast<int>(position);
        if (prepared.external_[v]) reads.insert(v);
      }
    }
    for (const auto& slot : op.outputs) {
      for (int v : slot) {
        last_use[v] = static_cast<int>(position);
        if (prepared.external_[v]) writes.insert(v);
      }
    }
  }
  for (const PreparedOp& op : prepared.ops_) {
    if (!op.static_shapes || op.spec->control_flow()) {
      prepared.infers_at_run_ = true;
    }
  }
  prepared.dies_after_.resize(prepared.ops_.size());
  for (size_t v = 0; v < n; ++v) {
    const int vi = static_cast<int>(v);
    if (last_use[v] >= 0 && prepared.IsTemporary(vi)) {
      prepared.dies_after_[last_use[v]].push_back(vi);
    }
    if (prepared.is_input_[v]) {
      prepared.input_names_.push_back(prepared.names_[v]);
      prepared.input_vars_.push_back(vi);
    }
    if (prepared.is_tensor_[v] &&
        (prepared.external_[v] || prepared.persistable_[v])) {
      prepared.scope_bound_.push_back(vi);
    }
    if (!prepared.is_tensor_[v]) {
      prepared.scope_lists_.push_back(prepared.names_[v]);
    }
    if (reads.contains(vi)) {
      prepared.outer_reads_.push_back(prepared.names_[v]);
    }
    if (writes.contains(vi)) {
      prepared.outer_writes_.push_back(prepared.names_[v]);
    }
  }
}

absl::StatusOr<PreparedNet> PrepareAsWritten(const NetDef& net, int block,
                                             const Place& place) {
  SF_RETURN_IF_ERROR(CheckNetFormatVersion(net));
  SF_CHECK(block >= 0 && block < net.blocks_size(),
           "net \"%s\" has no block %d (it has %d)", net.name(), block,
           net.blocks_size());
  SF_RETURN_IF_ERROR(CheckPlaceAvailable(place));
  PreparedNet prepared;
  PreparedNetBuilder builder(net, block, net.blocks(block), place,
                             /*outer=*/nullptr, prepared);
  std::vector<std::string> errors = builder.Run();
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "net \"%s\" block %d has %d problem(s):\n  %s", net.name(), block,
        errors.size(), absl::StrJoin(errors, "\n  ")));
  }
  PreparedNetBuilder::Finish(prepared);
  return prepared;
}

}  // namespace scopeflow
