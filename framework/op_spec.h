// OpSpec: what an operator declares (slots, attributes, shape inference,
// kernels), and the registry of all of them.
#ifndef SCOPEFLOW_FRAMEWORK_OP_SPEC_H_
#define SCOPEFLOW_FRAMEWORK_OP_SPEC_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/attribute.h"
#include "framework/data_type.h"
#include "framework/grad_spec.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

class InferContext;
class KernelContext;

// Shape and dtype inference: reads the inputs' VarInfo and the attributes,
// sets every output's. Runs at Prepare (dimensions may be -1, unknown) and
// again before each kernel call (all dimensions known), so that the
// executor allocates the outputs and kernels only compute.
using InferFn = std::function<absl::Status(InferContext&)>;

// Computes the outputs from the inputs. Outputs arrive allocated with the
// inferred shape and dtype.
using KernelFn = absl::Status (*)(KernelContext&);

// An AttrSpec's check: OK or an error saying what was expected, e.g.
// "must be positive"; the executor adds the op and attribute names.
using AttrCheckFn = std::function<absl::Status(const AttrValue&)>;

// What a control-flow op prepares for one of its block attributes, given the
// op and the block as the net has it: the block itself, or a rewritten form
// (e.g. a loop body whose writes to carried variables are renamed).
using BlockRewriteFn = std::function<absl::StatusOr<BlockDef>(
    const OpDef& op, const std::string& attr, const BlockDef& block)>;

struct SlotSpec {
  std::string name;
  // May be absent or empty.
  bool optional = false;
  // May hold several variables (otherwise exactly one).
  bool variadic = false;
  // Holds a list of scopes (StepScopes), not a tensor: the executor neither
  // allocates nor frees it, and the op reaches it through its scope.
  bool scopes = false;
};

struct AttrSpec {
  std::string name;
  AttrType type;
  // Used when the op does not give the attribute; none: it is required.
  std::optional<AttrValue> default_value;
  AttrCheckFn check;
};

// How the channels-last pass (framework/passes/layout_rewrite.h) may
// treat an op. Ops act on their first input slot and first output slot.
enum class LayoutRole {
  // Reads and writes the layouts its attributes say; never rewritten.
  kFixed,
  // Has a "data_format" attribute, "NCHW" or "NHWC", for its first input
  // and output; the rewrite may switch it from NCHW to NHWC.
  kDataFormat,
  // kDataFormat, and faster in NHWC: the reason a region is rewritten.
  kPrefersChannelsLast,
  // One input, one output, element by element: works in any layout as long
  // as input and output share it.
  kElementwise,
};

struct KernelKey {
  DeviceType device;
  DataType dtype;
  friend bool operator==(const KernelKey& a, const KernelKey& b) {
    return a.device == b.device && a.dtype == b.dtype;
  }
  template <typename H>
  friend H AbslHashValue(H h, const KernelKey& key) {
    return H::combine(std::move(h), key.device, key.dtype);
  }
};

// Declared once per op type, next to its kernels, with a chain of calls:
//
//   SF_REGISTER_OP(relu)
//       .Input("X")
//       .Output("Out")
//       .Infer(SameShapeAsInput("X", "Out"))
//       .Kernel(DeviceType::kCPU, kFloat32, &ReluKernel<float>);
//
// Specs are immutable once static initialisation is over, so any number of
// threads may read them.
class OpSpec {
 public:
  explicit OpSpec(std::string type) : type_(std::move(type)) {}

  OpSpec& Input(std::string name, bool optional = false, bool variadic = false);
  OpSpec& Output(std::string name, bool optional = false,
                 bool variadic = false);
  // An optional slot holding a list of scopes (SlotSpec::scopes).
  OpSpec& ScopesInput(std::string name);
  OpSpec& ScopesOutput(std::string name);
  // A required attribute.
  OpSpec& Attr(std::string name, AttrType type, AttrCheckFn check = nullptr);
  // An attribute with a default.
  OpSpec& Attr(std::string name, AttrType type, AttrValue default_value,
               AttrCheckFn check = nullptr);
  OpSpec& Infer(InferFn infer);
  OpSpec& Kernel(DeviceType device, DataType dtype, KernelFn kernel);
  // One kernel per C++ element type of `types`: make(TypeTag<T>()) gives
  // T's kernel, so a kernel template is named once for all its types, e.g.
  //   .Kernels(DeviceType::kCPU, IntegerTypes(),
  //            [](auto t) { return &NegKernel<typename decltype(t)::type>; })
  template <typename... Ts, typename MakeKernel>
  OpSpec& Kernels(DeviceType device, TypeList<Ts...>, MakeKernel make) {
    (Kernel(device, DataTypeOf<Ts>(), make(TypeTag<Ts>())), ...);
    return *this;
  }
  // The kernel is chosen by the dtype of this input (default: the first
  // declared input) or, for ops without inputs, of the first output.
  OpSpec& KernelDtypeFromInput(std::string slot);
  OpSpec& KernelDtypeFromOutput(std::string slot);
  // How to differentiate the op; ops without one stop gradients.
  OpSpec& Grad(GradSpec grad);
  // Output `output` may be the same variable as input `input` (an update in
  // place, as optimizers do to parameters): the executor then keeps the
  // input's buffer instead of allocating one.
  OpSpec& InPlace(std::string output, std::string input);
  // A control-flow op: it runs blocks of the net (its kBlock attributes,
  // prepared with the op) against its scope. The executor prepares those
  // blocks, lets its outputs also be inputs (a loop carries them), does not
  // allocate its outputs (the blocks write them) and reads their shapes
  // back after the kernel. `rewrite`, if given, says what to prepare.
  OpSpec& ControlFlow(BlockRewriteFn rewrite = nullptr);
  // How the channels-last rewrite may treat the op (default kFixed).
  OpSpec& Layout(LayoutRole role);
  // The op's outputs depend on a random state besides its inputs and
  // attributes (initializers, dropout): no pass may evaluate it ahead of a
  // run or merge two of them.
  OpSpec& Random();

  const std::string& type() const { return type_; }
  const std::vector<SlotSpec>& inputs() const { return inputs_; }
  const std::vector<SlotSpec>& outputs() const { return outputs_; }
  const std::vector<AttrSpec>& attrs() const { return attrs_; }
  const InferFn& infer() const { return infer_; }
  // -1 if there is no such slot.
  int InputIndex(absl::string_view slot) const;
  int OutputIndex(absl::string_view slot) const;
  const AttrSpec* FindAttr(absl::string_view name) const;
  // Null if there is no kernel for `key`.
  KernelFn FindKernel(const KernelKey& key) const;
  // The dtypes with a kernel on `device`, e.g. "float32, float64".
  std::string KernelDtypes(DeviceType device) const;
  // Which slot picks the kernel dtype: (true, index) for an input slot,
  // (false, index) for an output slot.
  bool kernel_dtype_from_input() const { return kernel_dtype_from_input_; }
  int kernel_dtype_slot() const;
  // Null if the op has no gradient.
  const GradSpec* grad() const { return grad_ ? &*grad_ : nullptr; }
  // The input slot index output slot `output` may update in place, or -1.
  int InPlaceInput(int output) const;
  bool control_flow() const { return control_flow_; }
  // Null: the blocks are prepared as the net has them.
  const BlockRewriteFn& block_rewrite() const { return block_rewrite_; }
  LayoutRole layout_role() const { return layout_role_; }
  bool random() const { return random_; }
  // Whether the op's outputs follow from its inputs and attributes alone
  // and it touches nothing else: not random, no control flow, no update in
  // place, no lists of scopes. Passes may evaluate such an op at import
  // (constant folding) or merge two that read the same inputs.
  bool pure() const;

 private:
  std::string type_;
  std::vector<SlotSpec> inputs_;
  std::vector<SlotSpec> outputs_;
  std::vector<AttrSpec> attrs_;
  InferFn infer_;
  absl::flat_hash_map<KernelKey, KernelFn> kernels_;
  bool kernel_dtype_from_input_ = true;
  std::string kernel_dtype_slot_;
  std::optional<GradSpec> grad_;
  std::vector<std::pair<std::string, std::string>> in_place_;
  bool control_flow_ = false;
  BlockRewriteFn block_rewrite_;
  LayoutRole layout_role_ = LayoutRole::kFixed;
  bool random_ = false;
};

// Every registered op type. Registration happens during static
// initialisation (SF_REGISTER_OP); lookups may come from any thread after.
class OpRegistry {
 public:
  static OpRegistry& Global();

  // A new spec for `type`; registering a type twice aborts the program
  // (two definitions of one op are a build error, not a user error).
  OpSpec& Add(absl::string_view type);
  // Null if unknown.
  const OpSpec* Find(absl::string_view type) const;
  // All registered types, sorted.
  std::vector<std::string> Types() const;

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<OpSpec>> specs_;
};

#define SF_REGISTER_OP_CONCAT_INNER_(a, b) a##b
#define SF_REGISTER_OP_CONCAT_(a, b) SF_REGISTER_OP_CONCAT_INNER_(a, b)

// Registers op type `type` (an identifier) at static initialisation. Op
// libraries are linked with alwayslink = True so the linker keeps them.
#define SF_REGISTER_OP(type)                                           \
  [[maybe_unused]] static ::scopeflow::OpSpec& SF_REGISTER_OP_CONCAT_( \
      sf_op_spec_, __COUNTER__) = ::scopeflow::OpRegistry::Global().Add(#type)

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_OP_SPEC_H_
