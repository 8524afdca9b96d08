// What shape inference and kernels see of the op they work for.
#ifndef SCOPEFLOW_FRAMEWORK_OP_CONTEXT_H_
#define SCOPEFLOW_FRAMEWORK_OP_CONTEXT_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "framework/attribute.h"
#include "framework/data_type.h"
#include "framework/op_spec.h"
#include "framework/tensor.h"
#include "platform/place.h"

namespace scopeflow {

class BlockRunner;
class PreparedNet;
class Scope;

// A variable's dtype and shape as inference knows them. A dimension of -1
// is unknown; has_dims false means even the rank is unknown.
struct VarInfo {
  DataType dtype = DATA_TYPE_UNSPECIFIED;
  Dims dims;
  bool has_dims = false;
};

// An op of a net, validated and bound to variable indices by Prepare.
// Immutable after Prepare.
struct PreparedOp {
  int index = 0;  // position in its block
  const OpSpec* spec = nullptr;
  // The type of the op of the block as written that this op comes from,
  // where a pass of Prepare changed it (a matmul fused into an fc, a
  // layout transfer placed for a convolution); empty where it is the
  // spec's type.
  std::string written_type;
  Attributes attrs;
  // Per slot of spec->inputs() / outputs(): indices into the net's
  // variable table (possibly empty for optional slots).
  std::vector<std::vector<int>> inputs;
  std::vector<std::vector<int>> outputs;
  KernelFn kernel = nullptr;
  // Where the kernel runs: the net's place, or the CPU for an op with no
  // kernel on the net's device. The executor then copies the op's inputs
  // that live on the device to the host, and its outputs back.
  Place kernel_place;
  // Every input's and output's dtype and shape was fully known at Prepare,
  // so the outputs Prepare inferred hold at every run and Run skips
  // inference.
  bool static_shapes = false;
  // A control-flow op's blocks, prepared with it: (attribute, block).
  std::vector<std::pair<std::string, std::shared_ptr<const PreparedNet>>>
      blocks;
};

// How errors name an op: "op 3 (fc)", or for an op a pass rewrote
// "op 3 (matmul, run as fc)": the index and type of the net as written.
std::string OpName(const PreparedOp& op);

// Shape inference's view: the op's attributes and the VarInfo of its
// inputs and outputs in a table indexed like the net's variables; at run
// time also the input tensors (indexed likewise), for ops whose output
// shape depends on an input's values.
class InferContext {
 public:
  InferContext(const PreparedOp& op, std::vector<VarInfo>& table,
               const std::vector<std::string>& names,
               Tensor* const* tensors = nullptr)
      : op_(op), table_(table), names_(names), tensors_(tensors) {}

  int InputCount(absl::string_view slot) const;
  bool HasInput(absl::string_view slot) const { return InputCount(slot) > 0; }
  const VarInfo& Input(absl::string_view slot, int i = 0) const;
  const std::string& InputName(absl::string_view slot, int i = 0) const;
  // The input's value where inference can see it: at run time, the tensor
  // (on the run's place) the op is about to read; null at Prepare and at
  // import. An op whose output shape depends on an input's values (sizes
  // fed as a tensor) leaves those dimensions -1 when this is null; the
  // executor infers again at run time for every op whose outputs Prepare
  // did not fully know.
  const Tensor* InputValue(absl::string_view slot, int i = 0) const;

  int OutputCount(absl::string_view slot) const;
  bool HasOutput(absl::string_view slot) const { return OutputCount(slot) > 0; }
  const std::string& OutputName(absl::string_view slot, int i = 0) const;
  void SetOutput(absl::string_view slot, int i, DataType dtype, Dims dims);
  void SetOutput(absl::string_view slot, const VarInfo& info) {
    SetOutput(slot, 0, info);
  }
  void SetOutput(absl::string_view slot, int i, const VarInfo& info);

  const Attributes& attrs() const { return op_.attrs; }
  const std::string& op_type() const { return op_.spec->type(); }

 private:
  int InputVar(absl::string_view slot, int i) const;
  int OutputVar(absl::string_view slot, int i) const;

  const PreparedOp& op_;
  std::vector<VarInfo>& table_;
  const std::vector<std::string>& names_;
  Tensor* const* tensors_;
};

// A kernel's view of one run of its op: input and output tensors (outputs
// already allocated as inference said), attributes and place.
class KernelContext {
 public:
  KernelContext(const PreparedOp& op, Tensor* const* tensors,
                const std::vector<std::string>& names, const Place& place,
                Scope* scope = nullptr, const BlockRunner* executor = nullptr)
      : op_(op),
        tensors_(tensors),
        names_(names),
        place_(place),
        scope_(scope),
        executor_(executor) {}

  int InputCount(absl::string_view slot) const;
  bool HasInput(absl::string_view slot) const { return InputCount(slot) > 0; }
  const Tensor& Input(absl::string_view slot, int i = 0) const;
  // The variable names, for error messages.
  const std::string& InputName(absl::string_view slot, int i = 0) const;
  const std::string& OutputName(absl::string_view slot, int i = 0) const;

  int OutputCount(absl::string_view slot) const;
  bool HasOutput(absl::string_view slot) const { return OutputCount(slot) > 0; }
  Tensor* Output(absl::string_view slot, int i = 0) const;

  const Attributes& attrs() const { return op_.attrs; }
  const Place& place() const { return place_; }
  const std::string& op_type() const { return op_.spec->type(); }

  // For control-flow ops: the scope the op's block runs in (its variables,
  // with lookup to the enclosing ones), the executor running it (as the
  // BlockRunner it implements), and the op's prepared blocks. Null /
  // absent for ordinary ops and in kernel tests that run an op alone.
  Scope* scope() const { return scope_; }
  const BlockRunner* executor() const { return executor_; }
  // Null if the op has no block attribute `attr`.
  const PreparedNet* Block(absl::string_view attr) const;
  // The op's index in its block, for error messages.
  int op_index() const { return op_.index; }

 private:
  int InputVar(absl::string_view slot, int i) const;
  int OutputVar(absl::string_view slot, int i) const;

  const PreparedOp& op_;
  Tensor* const* tensors_;
  const std::vector<std::string>& names_;
  const Place& place_;
  Scope* scope_;
  const BlockRunner* executor_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_OP_CONTEXT_H_
