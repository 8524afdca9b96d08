// Logical ops on bool tensors: logical_not of one input "X", and
// logical_and, logical_or and logical_xor of inputs "X" and "Y" with
// numpy-style broadcasting (as ONNX Not, And, Or and Xor); output "Out" is
// bool.
//
// Their values are booleans, so they carry no gradient (backward passes
// none through bool variables).
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/broadcast.h"
#include "operators/elementwise/vector_loops.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

struct And {
  bool operator()(bool a, bool b) const { return a && b; }
};

struct Or {
  bool operator()(bool a, bool b) const { return a || b; }
};

struct Xor {
  bool operator()(bool a, bool b) const { return a != b; }
};

absl::Status InferNot(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtype(context, "X", kBool));
  return SameAsInput()(context);
}

absl::Status NotKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const bool* in = x.data<bool>();
  bool* out = context.Output("Out")->data<bool>();
  ParallelFor(x.numel(), kElementsWorthAThread,
              [&](int64_t begin, int64_t end) {
                elementwise::MapInto(in + begin, out + begin, end - begin,
                                     [](bool a) { return !a; });
              });
  return absl::OkStatus();
}

absl::Status InferLogicalBinary(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtype(context, "X", kBool));
  SF_RETURN_IF_ERROR(CheckDtype(context, "Y", kBool));
  return elementwise::InferBroadcast(context, {"X", "Y"}, kBool);
}

template <typename Op>
absl::Status LogicalKernel(KernelContext& context) {
  elementwise::BroadcastBinary<bool, bool, Op>(
      context.Input("X"), context.Input("Y"), context.Output("Out"));
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(logical_not)
    .Input("X")
    .Output("Out")
    .Infer(InferNot)
    .Kernel(DeviceType::kCPU, kBool, &NotKernel);

SF_REGISTER_OP(logical_and)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferLogicalBinary)
    .Kernel(DeviceType::kCPU, kBool, &LogicalKernel<And>);

SF_REGISTER_OP(logical_or)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferLogicalBinary)
    .Kernel(DeviceType::kCPU, kBool, &LogicalKernel<Or>);

SF_REGISTER_OP(logical_xor)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferLogicalBinary)
    .Kernel(DeviceType::kCPU, kBool, &LogicalKernel<Xor>);

}  // namespace scopeflow
