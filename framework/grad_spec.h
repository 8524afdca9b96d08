// How an op's gradient is built: which gradient op reads what, and which
// forward inputs it differentiates. Declared next to the op's kernels.
#ifndef SCOPEFLOW_FRAMEWORK_GRAD_SPEC_H_
#define SCOPEFLOW_FRAMEWORK_GRAD_SPEC_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "framework/attribute.h"
#include "proto/framework.pb.h"

namespace scopeflow {

class PreparedNet;
struct PreparedOp;

// "x" -> "x@GRAD": the gradient of a variable, and of a slot ("X" ->
// "X@GRAD" is the gradient op's slot for it), as in Paddle.
std::string GradName(absl::string_view name);

// What a gradient maker sees of the forward op, and where it appends the
// gradient ops.
class GradOpContext {
 public:
  // `input_grads[slot][i]`: where the gradient of forward input i of
  // `slot` goes, "" where none is wanted; `output_grads` likewise: the
  // gradient flowing into each forward output ("" where none flows).
  GradOpContext(const OpDef& forward,
                std::vector<std::vector<std::string>> input_grads,
                std::vector<std::vector<std::string>> output_grads)
      : forward_(forward),
        input_grads_(std::move(input_grads)),
        output_grads_(std::move(output_grads)) {}

  const OpDef& forward() const { return forward_; }
  // The forward op's variables of a slot (empty if the slot is absent).
  std::vector<std::string> Input(absl::string_view slot) const;
  std::vector<std::string> Output(absl::string_view slot) const;
  std::vector<std::string> InputGrad(absl::string_view slot) const;
  std::vector<std::string> OutputGrad(absl::string_view slot) const;

  // Appends a gradient op of type `type`, with no attributes.
  OpDef& AddOp(absl::string_view type);
  // Binds `vars` to `slot` of `op`, leaving out the "" ones (a slot with
  // none left is not bound at all).
  static void Bind(google::protobuf::RepeatedPtrField<OpSlot>* slots,
                   absl::string_view slot,
                   const std::vector<std::string>& vars);
  static void SetInput(OpDef& op, absl::string_view slot,
                       const std::vector<std::string>& vars) {
    Bind(op.mutable_inputs(), slot, vars);
  }
  static void SetOutput(OpDef& op, absl::string_view slot,
                        const std::vector<std::string>& vars) {
    Bind(op.mutable_outputs(), slot, vars);
  }
  // Adds attribute `name` = `value` to `op`.
  static void SetAttr(OpDef& op, absl::string_view name,
                      const AttrValue& value);
  // Copies every attribute of the forward op to `op`.
  void CopyAttrs(OpDef& op) const;

  std::vector<OpDef>& ops() { return ops_; }

  // For the gradients of control-flow ops, which add blocks to the net:
  // the net, the block holding the forward op, and what Prepare made of
  // that block and of the forward op (its prepared blocks give the
  // variables' inferred dtypes and shapes). Null outside of
  // AppendGradients.
  void SetNet(NetDef* net, int block, const PreparedNet* prepared_block,
              const PreparedOp* prepared_forward) {
    net_ = net;
    block_ = block;
    prepared_block_ = prepared_block;
    prepared_forward_ = prepared_forward;
  }
  NetDef* net() const { return net_; }
  int block() const { return block_; }
  const PreparedNet* prepared_block() const { return prepared_block_; }
  const PreparedOp* prepared_forward() const { return prepared_forward_; }

 private:
  int ForwardSlotIndex(bool input, absl::string_view slot) const;

  const OpDef& forward_;
  std::vector<std::vector<std::string>> input_grads_;
  std::vector<std::vector<std::string>> output_grads_;
  std::vector<OpDef> ops_;
  NetDef* net_ = nullptr;
  int block_ = 0;
  const PreparedNet* prepared_block_ = nullptr;
  const PreparedOp* prepared_forward_ = nullptr;
};

using GradMakerFn = std::function<absl::Status(GradOpContext&)>;

// Declares an op's gradient. By default it is one op of type `grad_type`
// that gets every forward attribute, the forward inputs and outputs named
// by ReadInput / ReadOutput under their own slot names, the gradients of
// the ReadOutputGrad outputs in slots "Out@GRAD", and writes the gradients
// of the WriteInputGrad inputs to slots "X@GRAD" (optional slots: a
// gradient nobody wants is not bound). Maker() replaces that one op by
// any ops; the Read/Write declarations still say which inputs are
// differentiable and which outputs carry gradients, and `grad_type`, if
// given, names the maker's op with the default op's slots (the layout
// rewrite, framework/passes/layout_rewrite.h, reads its images from them).
class GradSpec {
 public:
  explicit GradSpec(std::string grad_type = "")
      : grad_type_(std::move(grad_type)) {}

  GradSpec& ReadInput(std::string slot) {
    read_inputs_.push_back(std::move(slot));
    return *this;
  }
  GradSpec& ReadOutput(std::string slot) {
    read_outputs_.push_back(std::move(slot));
    return *this;
  }
  GradSpec& ReadOutputGrad(std::string slot) {
    output_grads_.push_back(std::move(slot));
    return *this;
  }
  GradSpec& WriteInputGrad(std::string slot) {
    input_grads_.push_back(std::move(slot));
    return *this;
  }
  GradSpec& Maker(GradMakerFn maker) {
    maker_ = std::move(maker);
    return *this;
  }

  const std::string& grad_type() const { return grad_type_; }
  const std::vector<std::string>& read_inputs() const { return read_inputs_; }
  const std::vector<std::string>& read_outputs() const { return read_outputs_; }
  // The forward outputs through which gradients flow back.
  const std::vector<std::string>& output_grads() const { return output_grads_; }
  // The forward inputs that get gradients.
  const std::vector<std::string>& input_grads() const { return input_grads_; }
  // Whether Maker() replaced the default op.
  bool has_maker() const { return maker_ != nullptr; }

  // Appends the gradient ops to `context`.
  absl::Status Make(GradOpContext& context) const;

 private:
  std::string grad_type_;
  std::vector<std::string> read_inputs_;
  std::vector<std::string> read_outputs_;
  std::vector<std::string> output_grads_;
  std::vector<std::string> input_grads_;
  GradMakerFn maker_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_GRAD_SPEC_H_
