#include "framework/passes/layout_rewrite.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "framework/op_def_attrs.h"
#include "framework/op_spec.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace scopeflow {
namespace {

constexpr absl::string_view kDataFormatAttr = "data_format";
// An op that prefers channels-last reads its input slot of this name
// (conv2d's, added to its output) in its own layout, as a data input.
constexpr char kResidualSlot[] = "Residual";

// What the rewrite turns regions into.
struct Target {
  ActivationLayout layout;
  // Blocked layouts: the channel counts inference found
  // (RewriteChannelBlocked).
  const absl::flat_hash_map<std::string, int64_t>* channels = nullptr;
  // The NCHW dims of rank-4 variables, where known (null: none are); for
  // the binary ops of ImageBinaryOf.
  const absl::flat_hash_map<std::string, Dims>* images = nullptr;

  // The channels per block of NCHW8c and NCHW16c
  // (operators/channel_blocks.h, which the framework does not depend on);
  // 0 for NHWC.
  int64_t block() const {
    return layout == ActivationLayout::kNchw8c    ? 8
           : layout == ActivationLayout::kNchw16c ? 16
                                                  : 0;
  }
  bool blocked() const { return block() > 0; }
  const char* format() const {
    return layout == ActivationLayout::kNchw8c    ? "NCHW8c"
           : layout == ActivationLayout::kNchw16c ? "NCHW16c"
                                                  : "NHWC";
  }
  // Whether `name` may take the layout: always in NHWC; blocked, where its
  // channels are a known multiple of the block.
  bool Fits(const std::string& name) const {
    if (!blocked()) return true;
    const int64_t c = Channels(name);
    return c > 0 && c % block() == 0;
  }
  // The NCHW dims of `name` where it is a rank-4 image of known dims that
  // may take the layout (Fits); else null.
  const Dims* Image(const std::string& name) const {
    if (images == nullptr) return nullptr;
    auto it = images->find(name);
    if (it == images->end() || it->second.size() != 4 || !Fits(name)) {
      return nullptr;
    }
    return &it->second;
  }
  // -1 where unknown.
  int64_t Channels(const std::string& name) const {
    auto it = channels->find(name);
    return it == channels->end() ? -1 : it->second;
  }
};

// An op the rewrite may change: its role and the variables of its data
// slots, those that hold images in the op's data_format.
struct DataOp {
  LayoutRole role = LayoutRole::kFixed;
  // A gradient op (of a forward op with a layout role).
  bool gradient = false;
  // (slot, variable) of each data input and output bound.
  std::vector<std::pair<const std::string*, const std::string*>> ins;
  std::vector<std::pair<const std::string*, const std::string*>> outs;

  // A concat of images along their channels: joins the region like an
  // elementwise op (all its images or none) and concatenates along the
  // target layout's channel axis.
  bool channel_concat = false;

  bool rewritable() const { return role != LayoutRole::kFixed; }
  // A forward op's one data input and output.
  const std::string& in() const { return *ins[0].second; }
  const std::string& out() const { return *outs[0].second; }
  // Calls fn(variable) for each data input and output.
  template <typename Fn>
  void ForEachVar(Fn fn) const {
    for (const auto* vars : {&ins, &outs}) {
      for (const auto& [slot, var] : *vars) fn(*var);
    }
  }
  // Whether `var` (a variable an op binds, by address) is a data input.
  bool ReadsAsData(const std::string* var) const {
    for (const auto& [slot, data_var] : ins) {
      if (data_var == var) return true;
    }
    return false;
  }
  // The variable of data input slot `slot`, or null.
  const std::string* Var(const std::string& slot) const {
    for (const auto& [data_slot, var] : ins) {
      if (*data_slot == slot) return var;
    }
    return nullptr;
  }
};

// The slots of an op type the rewrite may lay out anew.
struct DataSlots {
  LayoutRole role = LayoutRole::kFixed;
  bool gradient = false;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // Output slots that may be bound and hold no image: a gradient op's
  // gradients of its forward op's other inputs (a filter's, a bias's).
  std::vector<std::string> free_outputs;
};

// Per op type with a layout role, its data slots: its first input and first
// output slots. Per gradient op of such a type (the GradSpec's grad_type),
// those slots, the gradient of the output and the gradient of the input:
// each holds an image of the same layout (conv2d_grad's Input,
// Output@GRAD and Input@GRAD, relu_grad's Out, Out@GRAD and X@GRAD).
absl::flat_hash_map<std::string, DataSlots> DataSlotsOfRegisteredOps() {
  absl::flat_hash_map<std::string, DataSlots> forward;
  absl::flat_hash_map<std::string, DataSlots> gradients;
  // Gradient op types of two forward ops: which of their slots hold images
  // is not known, so they are not rewritten.
  absl::flat_hash_set<std::string> shared;
  const OpRegistry& registry = OpRegistry::Global();
  for (const std::string& type : registry.Types()) {
    const OpSpec& spec = *registry.Find(type);
    if (spec.layout_role() == LayoutRole::kFixed || spec.inputs().empty() ||
        spec.outputs().empty()) {
      continue;
    }
    const std::string& in = spec.inputs()[0].name;
    const std::string& out = spec.outputs()[0].name;
    forward[type] = {spec.layout_role(), false, {in}, {out}, {}};
    if (spec.layout_role() == LayoutRole::kPrefersChannelsLast &&
        spec.InputIndex(kResidualSlot) >= 0) {
      forward[type].inputs.push_back(kResidualSlot);
    }
    if (spec.grad() == nullptr || spec.grad()->grad_type().empty()) continue;
    DataSlots grad{
        spec.layout_role(), true, {in, out, GradName(out)}, {GradName(in)}, {}};
    for (size_t i = 1; i < spec.inputs().size(); ++i) {
      grad.free_outputs.push_back(GradName(spec.inputs()[i].name));
    }
    const std::string& grad_type = spec.grad()->grad_type();
    if (!gradients.emplace(grad_type, std::move(grad)).second) {
      shared.insert(grad_type);
    }
  }
  for (auto& [type, slots] : gradients) {
    // A type with a role of its own is that op first.
    if (!shared.contains(type)) forward.emplace(type, std::move(slots));
  }
  return forward;
}

const absl::flat_hash_map<std::string, DataSlots>& DataSlotsByType() {
  // Made once, after static initialisation has registered every op.
  static const absl::flat_hash_map<std::string, DataSlots> by_type =
      DataSlotsOfRegisteredOps();
  return by_type;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Whether a convolution of `groups` groups from `in` to `out` runs on
// oneDNN's blocked kernels: each group's input and output channels fill
// whole blocks, or each group is one channel (depthwise), and NCHW input
// (a first convolution) comes in one group. Elsewhere oneDNN falls back to
// its reference kernel, about 50 times slower than on NHWC.
bool GroupsFitBlocks(const Target& target, int64_t groups,
                     const std::string& in, const std::string& out) {
  if (groups == 1) return true;
  const int64_t in_channels = target.Channels(in);
  const int64_t out_channels = target.Channels(out);
  if (!target.Fits(in) || groups <= 0) return false;
  if (in_channels == groups && out_channels == groups) return true;
  return in_channels % groups == 0 && out_channels % groups == 0 &&
         (in_channels / groups) % target.block() == 0 &&
         (out_channels / groups) % target.block() == 0;
}

// What the rewrite may do with `op`: nothing (kFixed) unless its type has
// data slots (DataSlotsByType), one variable is bound to each data slot it
// binds, and no other output is bound but free ones (pool2d's Indices
// number NCHW positions); elementwise ops take no other input either, and
// data-format ops must be NCHW now. A forward op binds its data input and
// output, a gradient op at least one data input.
//
// A blocked op also needs its variables to fit blocks: a conv2d its output
// (it reads NCHW input of any channel count itself) and its groups
// (GroupsFitBlocks), other forward ops their input (whose channels their
// output shares), gradient ops every data variable (and conv2d_grad its
// groups).
// Whether `small` broadcasts to `image` in any layout: rank 4, the same
// channels, each other dim equal or 1.
bool BroadcastsInAnyLayout(const Dims& small, const Dims& image) {
  if (small.size() != 4 || image.size() != 4 || small[1] != image[1] ||
      image[1] <= 0) {
    return false;
  }
  for (int d : {0, 2, 3}) {
    if (small[d] != 1 && small[d] != image[d]) return false;
  }
  return true;
}

// A mul or add of two images into a third of the dims of one of them, the
// other broadcast over batch, height or width only: an elementwise op of
// two data inputs in any layout. Else a kFixed DataOp.
DataOp ImageBinaryOf(const OpDef& op, const Target& target) {
  if (target.images == nullptr || (op.type() != "mul" && op.type() != "add") ||
      op.attrs_size() != 0 || op.inputs_size() != 2 || op.outputs_size() != 1) {
    return {};
  }
  DataOp data;
  for (const OpSlot& slot : op.inputs()) {
    if (slot.vars_size() != 1) return {};
    data.ins.push_back({&slot.slot(), &slot.vars(0)});
  }
  const OpSlot& out = op.outputs(0);
  if (out.slot() != "Out" || out.vars_size() != 1) return {};
  data.outs.push_back({&out.slot(), &out.vars(0)});
  std::vector<const Dims*> dims;
  for (const std::string* var :
       {data.ins[0].second, data.ins[1].second, data.outs[0].second}) {
    const Dims* image = target.Image(*var);
    if (image == nullptr) return {};
    dims.push_back(image);
  }
  const Dims& a = *dims[0];
  const Dims& b = *dims[1];
  const Dims& result = *dims[2];
  if (!((result == a && BroadcastsInAnyLayout(b, a)) ||
        (result == b && BroadcastsInAnyLayout(a, b)))) {
    return {};
  }
  if (*data.ins[0].second == *data.outs[0].second ||
      *data.ins[1].second == *data.outs[0].second) {
    return {};
  }
  data.role = LayoutRole::kElementwise;
  return data;
}

// A concat of rank-4 images along their channels (axis 1): all of them
// fit the target (in a blocked layout, each input's channels fill whole
// blocks, so the blocks of the inputs follow each other in the output's
// [N, C / B, H, W, B]). DenseNet's and Inception's blocks end in one; left
// in NCHW, each of its inputs leaves the layout and its output enters it
// again. Else a kFixed DataOp.
DataOp ChannelConcatOf(const OpDef& op, const Target& target) {
  if (target.images == nullptr || op.type() != "concat" ||
      op.inputs_size() != 1 || op.inputs(0).slot() != "X" ||
      op.outputs_size() != 1 || op.outputs(0).slot() != "Out" ||
      op.outputs(0).vars_size() != 1) {
    return {};
  }
  const AttrDef* axis = FindAttr(op, "axis");
  if (axis == nullptr || (axis->i() != 1 && axis->i() != -3)) return {};
  DataOp data;
  for (const std::string& var : op.inputs(0).vars()) {
    data.ins.push_back({&op.inputs(0).slot(), &var});
  }
  data.outs.push_back({&op.outputs(0).slot(), &op.outputs(0).vars(0)});
  bool images = !data.ins.empty();
  data.ForEachVar([&](const std::string& var) {
    images = images && target.Image(var) != nullptr;
  });
  if (!images) return {};
  for (const auto& [slot, var] : data.ins) {
    if (*var == data.out()) return {};
  }
  data.role = LayoutRole::kElementwise;
  data.channel_concat = true;
  return data;
}

// An inference batch_norm (is_test) of a rank-4 image that writes only Y:
// a per-channel scale and shift, which it applies in any layout
// (data_format). One that follows a concat or opens a pre-activation block
// (DenseNet's) has no convolution before it to fold into. Else a kFixed
// DataOp.
DataOp BatchNormOf(const OpDef& op, const Target& target) {
  if (target.images == nullptr || op.type() != "batch_norm") return {};
  const AttrDef* is_test = FindAttr(op, "is_test");
  if (is_test != nullptr && !is_test->b()) return {};
  DataOp data;
  for (const OpSlot& slot : op.inputs()) {
    if (slot.slot() != "X") continue;
    if (slot.vars_size() != 1) return {};
    data.ins.push_back({&slot.slot(), &slot.vars(0)});
  }
  for (const OpSlot& slot : op.outputs()) {
    if (slot.vars().empty()) continue;
    if (slot.slot() != "Y" || slot.vars_size() != 1) return {};
    data.outs.push_back({&slot.slot(), &slot.vars(0)});
  }
  if (data.ins.size() != 1 || data.outs.size() != 1 ||
      data.in() == data.out()) {
    return {};
  }
  const AttrDef* format = FindAttr(op, kDataFormatAttr);
  if (format != nullptr && format->s() != "NCHW") return {};
  if (target.Image(data.in()) == nullptr) return {};
  data.role = LayoutRole::kDataFormat;
  return data;
}

DataOp DataOpOf(const OpDef& op, const Target& target) {
  if (DataOp norm = BatchNormOf(op, target); norm.rewritable()) return norm;
  if (DataOp binary = ImageBinaryOf(op, target); binary.rewritable()) {
    return binary;
  }
  if (DataOp concat = ChannelConcatOf(op, target); concat.rewritable()) {
    return concat;
  }
  const auto& by_type = DataSlotsByType();
  const auto found = by_type.find(op.type());
  if (found == by_type.end()) return {};
  const DataSlots& slots = found->second;
  DataOp data;
  data.role = slots.role;
  data.gradient = slots.gradient;
  for (const OpSlot& slot : op.inputs()) {
    if (slot.vars().empty()) continue;
    if (Contains(slots.inputs, slot.slot()) && slot.vars_size() == 1) {
      data.ins.push_back({&slot.slot(), &slot.vars(0)});
    } else if (Contains(slots.inputs, slot.slot()) ||
               data.role == LayoutRole::kElementwise) {
      return {};
    }
  }
  for (const OpSlot& slot : op.outputs()) {
    if (slot.vars().empty() || Contains(slots.free_outputs, slot.slot())) {
      continue;
    }
    if (!Contains(slots.outputs, slot.slot()) || slot.vars_size() != 1) {
      return {};
    }
    data.outs.push_back({&slot.slot(), &slot.vars(0)});
  }
  if (data.ins.empty() || (!data.gradient && data.outs.empty())) return {};
  // The first data slot's variable first (in()), whatever order the op
  // binds its slots in.
  std::stable_sort(
      data.ins.begin(), data.ins.end(), [&slots](const auto& a, const auto& b) {
        return *a.first == slots.inputs[0] && *b.first != slots.inputs[0];
      });
  for (const auto& [out_slot, out] : data.outs) {
    for (const auto& [in_slot, in] : data.ins) {
      if (*in == *out) return {};
    }
  }
  if (data.role != LayoutRole::kElementwise) {
    const AttrDef* format = FindAttr(op, kDataFormatAttr);
    if (format != nullptr && format->s() != "NCHW") return {};
  }
  if (!target.blocked()) return data;
  const bool conv = data.role == LayoutRole::kPrefersChannelsLast;
  bool fits = true;
  if (data.gradient) {
    data.ForEachVar(
        [&](const std::string& var) { fits = fits && target.Fits(var); });
  } else {
    fits = target.Fits(conv ? data.out() : data.in());
  }
  if (!fits) return {};
  if (conv) {
    // A forward conv2d's input and output; conv2d_grad's input and the
    // gradient of its output, which has the output's channels.
    const std::string* in = data.Var(slots.inputs[0]);
    const std::string* out =
        data.gradient ? data.Var(slots.inputs.back()) : &data.out();
    const AttrDef* groups = FindAttr(op, "groups");
    if (in == nullptr || out == nullptr ||
        !GroupsFitBlocks(target, groups == nullptr ? 1 : groups->i(), *in,
                         *out)) {
      return {};
    }
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

// The variables to rewrite: temporaries one data op writes and only data
// ops read, after it, that fit the target layout; an elementwise op's
// input and output both or neither; and only regions with an op that
// prefers channels-last.
absl::flat_hash_set<std::string> RegionVars(
    const BlockDef& block, const std::vector<DataOp>& data_ops,
    const absl::flat_hash_map<std::string, Uses>& uses, const Target& target) {
  absl::flat_hash_set<std::string> persistable;
  for (const VarDef& var : block.vars()) {
    if (var.persistable()) persistable.insert(var.name());
  }
  absl::flat_hash_set<std::string> chosen;
  for (const auto& [name, use] : uses) {
    if (use.writers != 1 || use.data_writer < 0 || use.other_reader ||
        use.data_readers.empty() || persistable.contains(name) ||
        !target.Fits(name)) {
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
      bool all = true;
      op.ForEachVar(
          [&](const std::string& var) { all = all && chosen.contains(var); });
      if (all) continue;
      op.ForEachVar(
          [&](const std::string& var) { changed |= chosen.erase(var) > 0; });
    }
  }
  Components components;
  for (const DataOp& op : data_ops) {
    const std::string* first = nullptr;
    op.ForEachVar([&](const std::string& var) {
      if (!chosen.contains(var)) return;
      if (first != nullptr) components.Join(*first, var);
      first = &var;
    });
  }
  absl::flat_hash_set<std::string> useful;
  for (const DataOp& op : data_ops) {
    if (op.role != LayoutRole::kPrefersChannelsLast) continue;
    op.ForEachVar([&](const std::string& var) {
      if (chosen.contains(var)) useful.insert(components.Root(var));
    });
  }
  absl::flat_hash_set<std::string> kept;
  for (const std::string& name : chosen) {
    if (useful.contains(components.Root(name))) kept.insert(name);
  }
  return kept;
}

// An op of `type` from X = `in` to Out = `out`.
OpDef XToOut(const std::string& type, const std::string& in,
             const std::string& out) {
  OpDef op;
  op.set_type(type);
  OpSlot* x = op.add_inputs();
  x->set_slot("X");
  x->add_vars(in);
  OpSlot* y = op.add_outputs();
  y->set_slot("Out");
  y->add_vars(out);
  return op;
}

// The op taking `in` from NCHW into the target layout (`entering`) or
// back out of it to `out`.
OpDef Relayout(const Target& target, bool entering, const std::string& in,
               const std::string& out) {
  if (target.blocked()) {
    OpDef op = XToOut("transfer_layout", in, out);
    AttrDef* src = op.add_attrs();
    src->set_name("src_format");
    src->set_s(entering ? "NCHW" : target.format());
    AttrDef* dst = op.add_attrs();
    dst->set_name("dst_format");
    dst->set_s(entering ? target.format() : "NCHW");
    return op;
  }
  OpDef op = XToOut("transpose", in, out);
  AttrDef* perm = op.add_attrs();
  perm->set_name("perm");
  for (int32_t axis : entering ? std::vector<int32_t>{0, 2, 3, 1}
                               : std::vector<int32_t>{0, 3, 1, 2}) {
    perm->mutable_ints()->add_values(axis);
  }
  return op;
}

// Binds `var` in `changed` (a copy of `op`) where `op` binds `bound` (one of
// its variables, by address), whichever slot and position that is.
void Rebind(const OpDef& op, const std::string* bound, const std::string& var,
            OpDef& changed) {
  for (bool inputs : {true, false}) {
    const auto& slots = inputs ? op.inputs() : op.outputs();
    for (int s = 0; s < slots.size(); ++s) {
      for (int v = 0; v < slots[s].vars_size(); ++v) {
        if (&slots[s].vars(v) != bound) continue;
        OpSlot& target =
            inputs ? *changed.mutable_inputs(s) : *changed.mutable_outputs(s);
        target.set_vars(v, var);
        return;
      }
    }
  }
}

// `op`'s attribute `name`, added (with no value yet) if it has none.
// Names for the new variables, unused in the block.
class FreshNames {
 public:
  FreshNames(const BlockDef& block, const char* format)
      : suffix_(absl::StrCat("@", format)) {
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
    std::string name = absl::StrCat(base, suffix_);
    for (int k = 2; used_.contains(name); ++k) {
      name = absl::StrCat(base, suffix_, k);
    }
    used_.insert(name);
    return name;
  }

 private:
  std::string suffix_;
  absl::flat_hash_set<std::string> used_;
};

// Per op index, for each op that prefers channels-last or is an inference
// batch_norm, has a fuse_relu attribute (conv2d, batch_norm) and whose
// rewritten output only a relu reads: that relu's index.
// The op then writes the relu's output itself, in one pass.
absl::flat_hash_map<int, int> ReluFusions(
    const BlockDef& block, const std::vector<DataOp>& data_ops,
    const absl::flat_hash_map<std::string, Uses>& uses,
    const absl::flat_hash_set<std::string>& region) {
  absl::flat_hash_map<int, int> fusions;
  for (int i = 0; i < block.ops_size(); ++i) {
    const DataOp& op = data_ops[i];
    // Convolutions, and the inference batch norms of the region
    // (BatchNormOf), apply a relu in their own pass.
    const bool fuses = op.role == LayoutRole::kPrefersChannelsLast ||
                       (op.role == LayoutRole::kDataFormat &&
                        block.ops(i).type() == "batch_norm");
    if (!fuses || op.gradient || !region.contains(op.out())) {
      continue;
    }
    const OpSpec* spec = OpRegistry::Global().Find(block.ops(i).type());
    const AttrDef* fused = FindAttr(block.ops(i), "fuse_relu");
    const AttrDef* activation = FindAttr(block.ops(i), "activation");
    if (spec->FindAttr("fuse_relu") == nullptr ||
        (fused != nullptr && fused->b()) ||
        (activation != nullptr && !activation->s().empty())) {
      continue;
    }
    const std::vector<int>& readers = uses.at(op.out()).data_readers;
    if (readers.size() == 1 && block.ops(readers[0]).type() == "relu" &&
        region.contains(data_ops[readers[0]].out())) {
      fusions[i] = readers[0];
    }
  }
  return fusions;
}

std::optional<LayoutRewrite> Rewrite(const BlockDef& block,
                                     const Target& target) {
  const int n = block.ops_size();
  std::vector<DataOp> data_ops(n);
  absl::flat_hash_map<std::string, Uses> uses;
  for (int i = 0; i < n; ++i) {
    const OpDef& op = block.ops(i);
    const DataOp& data = data_ops[i] = DataOpOf(op, target);
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) {
        if (data.ReadsAsData(&var)) {
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
        for (const auto& [data_slot, data_var] : data.outs) {
          if (data_var == &var) use.data_writer = i;
        }
      }
    }
  }
  // The variables the rewrite renames into the target layout.
  const absl::flat_hash_set<std::string> region =
      RegionVars(block, data_ops, uses, target);
  if (region.empty()) return std::nullopt;

  const absl::flat_hash_map<int, int> fusions =
      ReluFusions(block, data_ops, uses, region);
  absl::flat_hash_set<int> fused_relus;
  for (const auto& [conv, relu] : fusions) fused_relus.insert(relu);
  FreshNames fresh(block, target.format());
  // In name order, so that the same net always gets the same names.
  std::vector<std::string> names(region.begin(), region.end());
  std::sort(names.begin(), names.end());
  absl::flat_hash_map<std::string, std::string> renamed;
  for (const std::string& name : names) renamed[name] = fresh.For(name);

  LayoutRewrite rewrite;
  if (block.has_parent_idx()) rewrite.block.set_parent_idx(block.parent_idx());
  for (const VarDef& var : block.vars()) {
    // A declared NCHW shape would not fit the renamed variable.
    if (!region.contains(var.name())) *rewrite.block.add_vars() = var;
  }
  auto append = [&rewrite](OpDef op, int source) {
    *rewrite.block.add_ops() = std::move(op);
    rewrite.source_op.push_back(source);
  };
  // NCHW inputs already taken into the layout for an earlier op: (name,
  // position).
  absl::flat_hash_map<std::string, std::pair<std::string, int>> entered;
  for (int i = 0; i < n; ++i) {
    const OpDef& op = block.ops(i);
    const DataOp& data = data_ops[i];
    bool touches_region = false;
    data.ForEachVar([&](const std::string& var) {
      touches_region = touches_region || region.contains(var);
    });
    if (!touches_region) {
      const OpSpec* spec = OpRegistry::Global().Find(op.type());
      if (spec != nullptr &&
          spec->layout_role() == LayoutRole::kPrefersChannelsLast) {
        ++rewrite.convolutions_left_out;
      }
      append(op, i);
      continue;
    }
    if (fused_relus.contains(i)) continue;
    OpDef changed = op;
    for (const auto& [slot, var] : data.ins) {
      std::string in;
      if (region.contains(*var)) {
        in = renamed[*var];
      } else if (target.blocked() && !data.gradient &&
                 data.role == LayoutRole::kPrefersChannelsLast &&
                 *slot == *data.ins[0].first && !target.Fits(*var)) {
        // A blocked conv2d reads NCHW input of any channel count itself.
        in = *var;
      } else if (auto it = entered.find(*var);
                 it != entered.end() &&
                 uses[*var].last_writer < it->second.second) {
        in = it->second.first;
      } else {
        in = fresh.For(*var);
        append(Relayout(target, /*entering=*/true, *var, in), i);
        entered[*var] = {in, i};
      }
      Rebind(op, var, in, changed);
    }
    // Outputs outside the region are written in the layout under new names
    // and then taken out of it; later ops reading them in the layout read
    // those (entered, valid until the next write of the variable).
    std::vector<std::pair<std::string, std::string>> leaving;
    for (const auto& [slot, var] : data.outs) {
      std::string out;
      if (auto fusion = fusions.find(i); fusion != fusions.end()) {
        out = renamed[data_ops[fusion->second].out()];
        MutableAttr(changed, "fuse_relu").set_b(true);
      } else if (region.contains(*var)) {
        out = renamed[*var];
      } else {
        out = fresh.For(*var);
        leaving.push_back({out, *var});
      }
      Rebind(op, var, out, changed);
    }
    if (data.channel_concat) {
      // NHWC's channels are its last axis; a blocked image's [N, C / B, H,
      // W, B] concatenates its blocks along axis 1, as NCHW does.
      MutableAttr(changed, "axis").set_i(target.blocked() ? 1 : 3);
    } else if (data.role != LayoutRole::kElementwise) {
      MutableAttr(changed, kDataFormatAttr).set_s(target.format());
    }
    append(std::move(changed), i);
    for (const auto& [out, var] : leaving) {
      append(Relayout(target, /*entering=*/false, out, var), i);
      entered[var] = {out, i + 1};
    }
  }
  return rewrite;
}

}  // namespace

ActivationLayout PreferredActivationLayoutFor(bool avx512_core, bool avx2,
                                              const char* max_cpu_isa) {
  // oneDNN's ISA names (its docs: SSE41, AVX, AVX2, AVX2_VNNI,
  // AVX512_CORE..., AVX512_CORE_AMX, ALL), in upper case as it reads them.
  const std::string cap = max_cpu_isa == nullptr || *max_cpu_isa == '\0'
                              ? "ALL"
                              : absl::AsciiStrToUpper(max_cpu_isa);
  const bool uncapped = cap == "ALL" || absl::StartsWith(cap, "AVX10") ||
                        absl::StartsWith(cap, "AMX");
  const bool avx512_allowed = uncapped || absl::StartsWith(cap, "AVX512_CORE");
  const bool avx2_allowed = avx512_allowed || absl::StartsWith(cap, "AVX2") ||
                            absl::StartsWith(cap, "AVX512");
  if (avx512_core && avx512_allowed) return ActivationLayout::kNchw16c;
  if (avx2 && avx2_allowed) return ActivationLayout::kNchw8c;
  return ActivationLayout::kNhwc;
}

ActivationLayout PreferredCpuActivationLayout() {
  static const ActivationLayout layout = [] {
    const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
    if (cap == nullptr) cap = std::getenv("DNNL_MAX_CPU_ISA");
    return PreferredActivationLayoutFor(
        __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512dq"),
        __builtin_cpu_supports("avx2"), cap);
  }();
  return layout;
}

std::optional<LayoutRewrite> RewriteChannelsLast(
    const BlockDef& block,
    const absl::flat_hash_map<std::string, Dims>* images) {
  return Rewrite(block, Target{ActivationLayout::kNhwc, nullptr, images});
}

std::optional<LayoutRewrite> RewriteChannelBlocked(
    const BlockDef& block,
    const absl::flat_hash_map<std::string, int64_t>& channels,
    ActivationLayout layout,
    const absl::flat_hash_map<std::string, Dims>* images) {
  return Rewrite(block, Target{layout, &channels, images});
}

std::optional<LayoutRewrite> LayoutPass::Rewrite(
    const BlockDef& block, const PreparedNet& prepared) const {
  const ActivationLayout layout = layout_ == ActivationLayout::kAuto
                                      ? PreferredCpuActivationLayout()
                                      : layout_;
  absl::flat_hash_map<std::string, Dims> images;
  absl::flat_hash_map<std::string, int64_t> channels;
  for (size_t v = 0; v < prepared.var_names().size(); ++v) {
    const VarInfo& info = prepared.var_infos()[v];
    if (info.has_dims && info.dims.size() == 4) {
      images[prepared.var_names()[v]] = info.dims;
      channels[prepared.var_names()[v]] = info.dims[1];
    }
  }
  if (layout == ActivationLayout::kNhwc) {
    return RewriteChannelsLast(block, &images);
  }
  std::optional<LayoutRewrite> rewrite =
      RewriteChannelBlocked(block, channels, layout, &images);
  if (layout_ == ActivationLayout::kAuto &&
      (!rewrite.has_value() || rewrite->convolutions_left_out > 0)) {
    // Channel counts that do not fill blocks leave convolutions out of a
    // blocked layout (the example CNN's 8 in 16-channel blocks): each
    // then reorders on its own, which costs more than the blocks save.
    // NHWC takes any channel count.
    std::optional<LayoutRewrite> nhwc = RewriteChannelsLast(block, &images);
    if (nhwc.has_value() &&
        (!rewrite.has_value() ||
         nhwc->convolutions_left_out < rewrite->convolutions_left_out)) {
      rewrite = std::move(nhwc);
    }
  }
  return rewrite;
}

absl::StatusOr<bool> LayoutPass::Run(PassBlock& block,
                                     const PassContext& context) const {
  std::optional<LayoutRewrite> rewrite = Rewrite(block.block, context.prepared);
  if (!rewrite.has_value()) return false;
  block.Replace(std::move(rewrite->block), rewrite->source_op);
  return true;
}

}  // namespace scopeflow
