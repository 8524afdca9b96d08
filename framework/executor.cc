#include "framework/executor.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/host_staging.h"
#include "framework/passes/layout_rewrite.h"
#include "framework/net_io.h"
#include "framework/passes/op_fusion.h"
#include "framework/run_buffer_pool.h"
#include "framework/step_scopes.h"
#include "platform/cuda_runtime.h"
#include "platform/device.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using Clock = std::chrono::steady_clock;

std::string InfoToString(const VarInfo& info) {
  return absl::StrCat(DataTypeName(info.dtype), " ",
                      info.has_dims ? DimsToString(info.dims) : "[?]");
}

bool FullyKnown(const VarInfo& info) {
  if (!info.has_dims || !IsValidDataType(info.dtype)) return false;
  for (int64_t d : info.dims) {
    if (d < 0) return false;
  }
  return true;
}

// OK if `dims` can be a variable's shape: each dim known (>= 0) or unknown
// (-1), and the known nonzero dims' product within int64. Inference may then
// multiply any of a shape's dims without overflow; the error says what is
// wrong.
absl::Status CheckShape(absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    SF_CHECK(d >= -1,
             "dimension %d is below -1 (expected a size, or -1 for unknown)",
             d);
    if (d > 0 && __builtin_mul_overflow(count, d, &count)) {
      return absl::InvalidArgumentError("its element count overflows int64");
    }
  }
  return absl::OkStatus();
}

// Whether a declared shape admits `dims` (-1 matches anything).
bool ShapeAdmits(const VarInfo& declared, absl::Span<const int64_t> dims) {
  if (!declared.has_dims) return true;
  if (declared.dims.size() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (declared.dims[i] >= 0 && dims[i] >= 0 && declared.dims[i] != dims[i]) {
      return false;
    }
  }
  return true;
}

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

namespace {

// Takes a run scope from the net's cache and gives it back, emptied, when
// the run ends, whichever way it ends. Lists of scopes a control-flow op
// left in it are cleared first, deleting their scopes.
class RunScopeLease {
 public:
  RunScopeLease(RunScopeCache& cache, const PreparedNet& prepared,
                bool keep_buffers)
      : cache_(cache), prepared_(prepared), keep_buffers_(keep_buffers) {}
  ~RunScopeLease() {
    if (run_ == nullptr) return;
    for (const std::string& name : prepared_.scope_lists()) {
      Variable* var = run_->scope->FindLocalVar(name);
      if (var != nullptr) var->Clear();
    }
    if (keep_buffers_) {
      // The fed buffers are the caller's.
      for (const std::string& name : prepared_.input_names()) {
        Tensor* tensor = run_->tensors[prepared_.VarIndex(name)];
        if (tensor != nullptr) tensor->Clear();
      }
    }
    cache_.Release(std::move(run_), keep_buffers_);
  }
  absl::Status Acquire(Scope& parent) {
    const int n = static_cast<int>(prepared_.var_names().size());
    std::vector<bool> temporary(n);
    for (int v = 0; v < n; ++v) temporary[v] = prepared_.IsTemporary(v);
    SF_ASSIGN_OR_RETURN(
        run_, cache_.Acquire(parent, prepared_.var_names(), temporary));
    return absl::OkStatus();
  }
  RunScope& get() const { return *run_; }

 private:
  RunScopeCache& cache_;
  const PreparedNet& prepared_;
  const bool keep_buffers_;
  std::unique_ptr<RunScope> run_;
};

VarInfo InfoOf(const Tensor& tensor) {
  VarInfo info;
  info.dtype = tensor.dtype();
  info.dims = tensor.dims();
  info.has_dims = true;
  return info;
}

// An output updated in place keeps its input's buffer; if someone else
// also views that buffer (a tensor fetched earlier), the update goes to a
// private copy so what they hold does not change under them.
absl::Status PrepareInPlace(const PreparedOp& op, int v, const VarInfo& info,
                            const std::vector<std::string>& names,
                            Tensor& tensor) {
  SF_CHECK(tensor.initialized() && tensor.dtype() == info.dtype &&
               ShapeAdmits(info, tensor.dims()),
           "%s: variable \"%s\" is updated in place, so it must "
           "hold %s before the op; it holds %s",
           OpName(op), names[v], InfoToString(info), tensor.DebugString());
  if (!tensor.OwnsBufferAlone()) {
    SF_ASSIGN_OR_RETURN(tensor, tensor.CopyTo(tensor.place()));
  }
  // The op writes the buffer with no Allocate to declare it: copies kept of
  // the old contents must not serve a later read.
  tensor.MarkWritten();
  return absl::OkStatus();
}

// The tensor `var` holds (made if it holds nothing), or an error naming
// the variable when it holds something else.
absl::StatusOr<Tensor*> TensorOf(Variable& var, const std::string& name) {
  absl::StatusOr<Tensor*> tensor = var.GetMutable<Tensor>();
  if (!tensor.ok()) {
    return absl::Status(
        tensor.status().code(),
        absl::StrCat("variable \"", name, "\": ", tensor.status().message()));
  }
  return *tensor;
}

// Persistable variable v's tensor in `scope`: created there if the net
// writes it before reading it, otherwise found by lookup.
absl::StatusOr<Tensor*> FindPersistable(const PreparedNet& prepared,
                                        Scope& scope, int v) {
  const std::string& name = prepared.var_names()[v];
  const bool created_here = prepared.IsWrittenFirst(v);
  Variable* var = nullptr;
  if (created_here) {
    var = scope.Var(name);
  } else {
    var = scope.FindVar(name);
    SF_CHECK_CODE(var != nullptr, absl::StatusCode::kFailedPrecondition,
                  "persistable variable \"%s\" is not in the scope: run the "
                  "startup net or load the parameters first",
                  name);
  }
  return TensorOf(*var, name);
}

// After a control-flow op, its tensor outputs hold what its blocks wrote:
// later ops infer from those, which must fit what Prepare inferred.
absl::Status ReadBackOutputs(const PreparedOp& op, const PreparedNet& prepared,
                             const std::vector<Tensor*>& tensors,
                             std::vector<VarInfo>& infos) {
  for (const auto& slot : op.outputs) {
    for (int v : slot) {
      if (tensors[v] == nullptr || !tensors[v]->initialized()) continue;
      const VarInfo& known = prepared.var_infos()[v];
      SF_CHECK((known.dtype == DATA_TYPE_UNSPECIFIED ||
                known.dtype == tensors[v]->dtype()) &&
                   ShapeAdmits(known, tensors[v]->dims()),
               "%s: output \"%s\" was inferred as %s, but its block "
               "wrote %s",
               OpName(op), prepared.var_names()[v], InfoToString(known),
               tensors[v]->DebugString());
      infos[v] = InfoOf(*tensors[v]);
    }
  }
  return absl::OkStatus();
}

}  // namespace

int PreparedNet::VarIndex(absl::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

const PreparedNet& PreparedNet::PlanFor(
    absl::Span<const std::string> fetches) const {
  if (as_written_ == nullptr) return *this;
  for (const std::string& name : fetches) {
    if (VarIndex(name) < 0) return *as_written_;
  }
  return *this;
}

absl::StatusOr<PreparedNet> Executor::Prepare(const NetDef& net, int block,
                                              const Place& place) const {
  SF_ASSIGN_OR_RETURN(PreparedNet as_written,
                      PrepareAsWritten(net, block, place));
  // The layout rewrite is the CPU's (its blocked and NHWC kernels); fusion
  // pays on every place, on a device by one op's dispatch per op removed.
  const bool rewrites_layout = options_.channels_last && place.is_cpu();
  if (!rewrites_layout && !options_.fuse_ops) return as_written;
  BlockDef changed = net.blocks(block);
  // Per op of `changed`, the op of the block as written it comes from.
  std::vector<int> source_op;
  bool rewritten = false;
  if (options_.fuse_ops) {
    absl::flat_hash_map<std::string, VarInfo> infos;
    for (size_t v = 0; v < as_written.var_names().size(); ++v) {
      infos[as_written.var_names()[v]] = as_written.var_infos()[v];
    }
    if (std::optional<OpFusion> fusion = FuseOps(changed, infos)) {
      changed = std::move(fusion->block);
      source_op = std::move(fusion->source_op);
      rewritten = true;
    }
  }
  if (rewrites_layout) {
    if (std::optional<LayoutRewrite> rewrite =
            RewriteLayout(changed, as_written)) {
      for (int& source : rewrite->source_op) {
        if (!source_op.empty()) source = source_op[source];
      }
      changed = std::move(rewrite->block);
      source_op = std::move(rewrite->source_op);
      rewritten = true;
    }
  }
  if (!rewritten) return as_written;
  NetDef rewritten_net = net;
  *rewritten_net.mutable_blocks(block) = std::move(changed);
  absl::StatusOr<PreparedNet> prepared =
      PrepareAsWritten(rewritten_net, block, place);
  SF_CHECK_CODE(prepared.ok(), absl::StatusCode::kInternal,
                "the layout rewrite or op fusion of net \"%s\" block %d does "
                "not prepare (ExecutorOptions::AsWritten() avoids them): %s",
                net.name(), block, prepared.status().message());
  // Errors name the op of the net as written.
  const BlockDef& written = net.blocks(block);
  for (PreparedOp& op : prepared->ops_) {
    op.index = source_op[op.index];
    const std::string& type = written.ops(op.index).type();
    if (type != op.spec->type()) op.written_type = type;
  }
  prepared->as_written_ =
      std::make_shared<const PreparedNet>(std::move(as_written));
  return std::move(*prepared);
}

std::optional<LayoutRewrite> Executor::RewriteLayout(
    const BlockDef& block, const PreparedNet& as_written) const {
  const ActivationLayout layout =
      options_.activation_layout == ActivationLayout::kAuto
          ? PreferredCpuActivationLayout()
          : options_.activation_layout;
  if (layout == ActivationLayout::kNhwc) return RewriteChannelsLast(block);
  absl::flat_hash_map<std::string, int64_t> channels;
  for (size_t v = 0; v < as_written.var_names().size(); ++v) {
    const VarInfo& info = as_written.var_infos()[v];
    if (info.has_dims && info.dims.size() == 4) {
      channels[as_written.var_names()[v]] = info.dims[1];
    }
  }
  std::optional<LayoutRewrite> rewrite =
      RewriteChannelBlocked(block, channels, layout);
  if (options_.activation_layout == ActivationLayout::kAuto &&
      (!rewrite.has_value() || rewrite->convolutions_left_out > 0)) {
    // Channel counts that do not fill blocks leave convolutions out of a
    // blocked layout (the example CNN's 8 in 16-channel blocks): each
    // then reorders on its own, which costs more than the blocks save.
    // NHWC takes any channel count.
    std::optional<LayoutRewrite> nhwc = RewriteChannelsLast(block);
    if (nhwc.has_value() &&
        (!rewrite.has_value() ||
         nhwc->convolutions_left_out < rewrite->convolutions_left_out)) {
      rewrite = std::move(nhwc);
    }
  }
  return rewrite;
}

absl::StatusOr<PreparedNet> Executor::PrepareAsWritten(
    const NetDef& net, int block, const Place& place) const {
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

absl::StatusOr<std::vector<Tensor>> Executor::Run(
    const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
    absl::Span<const std::string> fetches, RunProfile* profile) const {
  if (prepared.rewritten()) {
    const PreparedNet& plan = prepared.PlanFor(fetches);
    if (&plan != &prepared) return Run(plan, scope, feeds, fetches, profile);
  }
  RunScopeLease run_scope(*prepared.run_scopes_, prepared,
                          options_.keep_buffers_between_runs);
  SF_RETURN_IF_ERROR(run_scope.Acquire(scope));
  return RunResolved(
      prepared, scope, *run_scope.get().scope, run_scope.get().tensors, feeds,
      fetches, profile,
      options_.free_dead_tensors && !options_.keep_buffers_between_runs,
      options_.resolve_persistables_once ? &run_scope.get().persistables
                                         : nullptr);
}

absl::StatusOr<std::vector<Tensor>> Executor::RunInScope(
    const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
    absl::Span<const std::string> fetches) const {
  if (prepared.rewritten()) {
    const PreparedNet& plan = prepared.PlanFor(fetches);
    if (&plan != &prepared) return RunInScope(plan, scope, feeds, fetches);
  }
  const int n = static_cast<int>(prepared.names_.size());
  std::vector<Tensor*> tensors(n, nullptr);
  for (int v = 0; v < n; ++v) {
    if (!prepared.IsTemporary(v)) continue;
    SF_ASSIGN_OR_RETURN(tensors[v], TensorOf(*scope.Var(prepared.names_[v]),
                                             prepared.names_[v]));
  }
  return RunResolved(prepared, scope, scope, std::move(tensors), feeds, fetches,
                     /*profile=*/nullptr, /*free_dead_tensors=*/false);
}

namespace {

// How many runs enclose the calling thread's current one.
thread_local int run_depth = 0;

class RunNesting {
 public:
  RunNesting() { ++run_depth; }
  ~RunNesting() { --run_depth; }
  RunNesting(const RunNesting&) = delete;
  RunNesting& operator=(const RunNesting&) = delete;
  bool outermost() const { return run_depth == 1; }
};

}  // namespace

absl::StatusOr<std::vector<Tensor>> Executor::RunResolved(
    const PreparedNet& prepared, Scope& scope, Scope& run_scope,
    std::vector<Tensor*> tensors, absl::Span<const Feed> feeds,
    absl::Span<const std::string> fetches, RunProfile* profile,
    bool free_dead_tensors, std::vector<Tensor*>* persistables) const {
  const int n = static_cast<int>(prepared.names_.size());
  const Place& place = prepared.place_;
  // Runs nest (a loop's body runs inside its op, on the same thread and
  // stream): the outermost run on a device is the one that waits for it.
  const RunNesting nesting;
  const bool waits_for_device = place.is_cuda() && nesting.outermost();
  if (waits_for_device) SF_RETURN_IF_ERROR(DiscardDeviceChecks(place.device()));
  // The shapes of this run: Prepare's where it knew every one, else a copy
  // that the run's inference and what the scope and feeds hold update.
  // (Where Prepare knew every shape, the checks below make those equal to
  // Prepare's.) Copying the table costs a cache line per variable.
  std::vector<VarInfo> run_infos;
  if (prepared.infers_at_run_) run_infos = prepared.infos_;
  const std::vector<VarInfo>& infos =
      prepared.infers_at_run_ ? run_infos : prepared.infos_;
  const bool resolved = persistables != nullptr && !persistables->empty();
  for (int v : prepared.scope_bound_) {
    const std::string& name = prepared.names_[v];
    if (prepared.external_[v]) {
      Variable* var = scope.FindVar(name);
      SF_CHECK_CODE(var != nullptr, absl::StatusCode::kFailedPrecondition,
                    "variable \"%s\" of an enclosing block is not in the "
                    "scope the block runs against",
                    name);
      SF_ASSIGN_OR_RETURN(tensors[v], TensorOf(*var, name));
      if (tensors[v]->initialized()) {
        // Ops were prepared with what the enclosing block knew of it.
        const VarInfo& known = prepared.infos_[v];
        SF_CHECK((known.dtype == DATA_TYPE_UNSPECIFIED ||
                  known.dtype == tensors[v]->dtype()) &&
                     ShapeAdmits(known, tensors[v]->dims()),
                 "variable \"%s\" of an enclosing block: the block was "
                 "prepared for %s, the scope holds %s",
                 name, InfoToString(known), tensors[v]->DebugString());
        if (prepared.infers_at_run_) run_infos[v] = InfoOf(*tensors[v]);
      }
      continue;
    }
    if (resolved) {
      tensors[v] = (*persistables)[v];
    } else {
      SF_ASSIGN_OR_RETURN(tensors[v], FindPersistable(prepared, scope, v));
    }
    if (!prepared.written_[v] || prepared.read_first_[v]) {
      SF_CHECK_CODE(tensors[v]->initialized(),
                    absl::StatusCode::kFailedPrecondition,
                    "persistable variable \"%s\" holds no tensor: run the "
                    "startup net or load the parameters first",
                    name);
      if (prepared.infers_at_run_) run_infos[v] = InfoOf(*tensors[v]);
      // Kernels were chosen at Prepare from the declared dtype.
      const VarInfo& declared = prepared.infos_[v];
      SF_CHECK(
          (declared.dtype == DATA_TYPE_UNSPECIFIED ||
           declared.dtype == tensors[v]->dtype()) &&
              ShapeAdmits(declared, tensors[v]->dims()),
          "persistable variable \"%s\": the net declares %s, the scope holds "
          "%s",
          name, InfoToString(declared), tensors[v]->DebugString());
    }
  }

  if (persistables != nullptr && !resolved) {
    persistables->assign(tensors.begin(), tensors.end());
  }

  // Parameters the caller left on another place (loaded on the host for a
  // net on a device): a run reads a copy on its place. One the net updates
  // must be on the place, or the update would go to the copy.
  std::vector<std::unique_ptr<Tensor>> persistable_copies;
  for (int v : prepared.scope_bound_) {
    if (prepared.external_[v] || !tensors[v]->initialized() ||
        tensors[v]->place() == place ||
        (prepared.written_[v] && !prepared.read_first_[v])) {
      continue;  // a net that writes it first allocates it on its place
    }
    SF_CHECK_CODE(!prepared.written_[v], absl::StatusCode::kFailedPrecondition,
                  "persistable variable \"%s\" is on %s, but the net runs on "
                  "%s and writes it: copy it to %s first (Tensor::CopyTo)",
                  prepared.names_[v], tensors[v]->place().ToString(),
                  place.ToString(), place.ToString());
    SF_ASSIGN_OR_RETURN(Tensor copy, tensors[v]->CopyTo(place));
    persistable_copies.push_back(std::make_unique<Tensor>(std::move(copy)));
    tensors[v] = persistable_copies.back().get();
  }

  // Flags as bytes: std::vector<bool>'s bit access costs more per op.
  std::vector<char> fed(n, false);
  for (const Feed& feed : feeds) {
    const int v = prepared.VarIndex(feed.name);
    SF_CHECK(v >= 0 && prepared.is_input_[v],
             "feed \"%s\" is not an input of the net (inputs: %s)", feed.name,
             absl::StrJoin(prepared.input_names_, ", "));
    const VarInfo& declared = prepared.infos_[v];
    SF_CHECK(feed.tensor.dtype() == declared.dtype &&
                 ShapeAdmits(declared, feed.tensor.dims()),
             "feed \"%s\": expected %s, got %s", feed.name,
             InfoToString(declared), feed.tensor.DebugString());
    if (feed.tensor.place() == place) {
      tensors[v]->ShareBufferWith(feed.tensor);
      // The caller may have changed the elements since a run before this
      // one was fed the same buffer.
      tensors[v]->MarkWritten();
    } else {
      SF_ASSIGN_OR_RETURN(*tensors[v], feed.tensor.CopyTo(place));
    }
    if (prepared.infers_at_run_) run_infos[v] = InfoOf(feed.tensor);
    fed[v] = true;
  }
  for (int v : prepared.input_vars_) {
    SF_CHECK(fed[v], "input \"%s\" is not fed", prepared.names_[v]);
  }

  std::vector<int> fetch_index;
  std::vector<char> fetched(n, false);
  for (const std::string& name : fetches) {
    const int v = prepared.VarIndex(name);
    SF_CHECK(v >= 0, "fetch \"%s\": the net has no such variable", name);
    SF_CHECK(prepared.is_tensor_[v],
             "fetch \"%s\": it holds a list of scopes, not a tensor", name);
    fetch_index.push_back(v);
    fetched[v] = true;
  }

  if (profile != nullptr) profile->ops.resize(prepared.ops_.size());
  // Dead temporaries' buffers for later outputs, in runs on the host.
  std::optional<RunBufferPool> spare_buffers;
  if (free_dead_tensors && place.is_cpu()) spare_buffers.emplace();
  for (size_t position = 0; position < prepared.ops_.size(); ++position) {
    const PreparedOp& op = prepared.ops_[position];
    const Clock::time_point op_start =
        profile != nullptr ? Clock::now() : Clock::time_point();
    if (op.spec->infer() != nullptr && !op.static_shapes) {
      InferContext context(op, run_infos, prepared.names_, tensors.data());
      absl::Status inferred = op.spec->infer()(context);
      if (!inferred.ok()) {
        return absl::Status(inferred.code(),
                            absl::StrCat(OpName(op), ": ", inferred.message()));
      }
    }
    // An op with no kernel on the run's device runs its CPU kernel on host
    // copies of its inputs and outputs.
    const bool on_host = op.kernel_place != place;
    // Made only for such an op: a deque allocates as it is constructed,
    // and an empty std::optional of it is zeroed for every op.
    std::unique_ptr<HostStaging> staging;
    if (on_host) {
      staging = std::make_unique<HostStaging>();
      absl::Status staged = staging->StageInputs(op, tensors);
      if (!staged.ok()) {
        return absl::Status(
            staged.code(),
            absl::StrCat(OpName(op),
                         ": copying its inputs to the host for its CPU "
                         "kernel: ",
                         staged.message()));
      }
    }
    for (size_t o = 0; o < op.outputs.size() && !op.spec->control_flow(); ++o) {
      const int in_place = op.spec->InPlaceInput(static_cast<int>(o));
      for (size_t k = 0; k < op.outputs[o].size(); ++k) {
        const int v = op.outputs[o][k];
        if (on_host) staging->StageOutput(v, tensors);
        if (in_place >= 0 && k < op.inputs[in_place].size() &&
            op.inputs[in_place][k] == v) {
          SF_RETURN_IF_ERROR(
              PrepareInPlace(op, v, infos[v], prepared.names_, *tensors[v]));
          continue;
        }
        SF_CHECK_CODE(FullyKnown(infos[v]), absl::StatusCode::kInternal,
                      "%s: inference left output \"%s\" as %s at run time",
                      OpName(op), prepared.names_[v], InfoToString(infos[v]));
        if (spare_buffers && !tensors[v]->initialized()) {
          size_t bytes = SizeOf(infos[v].dtype);
          for (int64_t d : infos[v].dims) bytes *= static_cast<size_t>(d);
          spare_buffers->Lend(bytes, *tensors[v]);
        }
        absl::Status allocated = tensors[v]->Allocate(
            op.kernel_place, infos[v].dtype, infos[v].dims);
        if (!allocated.ok()) {
          return absl::Status(
              allocated.code(),
              absl::StrFormat("%s: output \"%s\": %s", OpName(op),
                              prepared.names_[v], allocated.message()));
        }
      }
    }
    KernelContext context(op, tensors.data(), prepared.names_, op.kernel_place,
                          &run_scope, this);
    const Clock::time_point kernel_start =
        profile != nullptr ? Clock::now() : Clock::time_point();
    absl::Status status = op.kernel(context);
    if (profile != nullptr) {
      profile->ops[position].kernel_seconds +=
          std::chrono::duration<double>(Clock::now() - kernel_start).count();
    }
    if (on_host && status.ok()) {
      status = staging->Finish(op, place, tensors);
    }
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(OpName(op), ": ", status.message()));
    }
    if (op.spec->control_flow()) {
      SF_RETURN_IF_ERROR(ReadBackOutputs(op, prepared, tensors, run_infos));
    }
    if (free_dead_tensors) {
      for (int v : prepared.dies_after_[position]) {
        if (fetched[v]) continue;
        if (spare_buffers) {
          spare_buffers->Keep(*tensors[v]);
        } else {
          tensors[v]->Clear();
        }
      }
    }
    if (profile != nullptr) {
      profile->ops[position].total_seconds +=
          std::chrono::duration<double>(Clock::now() - op_start).count();
    }
  }

  std::vector<Tensor> results;
  results.reserve(fetch_index.size());
  for (int v : fetch_index) {
    SF_CHECK_CODE(tensors[v]->initialized(),
                  absl::StatusCode::kFailedPrecondition,
                  "fetch \"%s\": no op of the net wrote it and it was not fed",
                  prepared.names_[v]);
    results.push_back(*tensors[v]);
  }
  if (waits_for_device) {
    // The run's kernels were only queued on this thread's stream: wait, so
    // that the fetched tensors and the parameters the run wrote may be used
    // from any thread once Run returns, then read what the kernels found
    // wrong in their inputs.
    absl::Status done = SynchronizeCudaStream(place.device());
    if (!done.ok()) {
      return absl::Status(done.code(),
                          absl::StrCat("a kernel of the run failed on ",
                                       place.ToString(), ": ", done.message()));
    }
    SF_RETURN_IF_ERROR(TakeDeviceCheckFailure(place.device()));
  }
  return results;
}

}  // namespace scopeflow
