// Small helpers the kernels of operators/nn share across devices (the CPU
// kernels and the CUDA adapters alike): optional inputs and outputs, and
// layer_norm's view of X as rows.
#ifndef SCOPEFLOW_OPERATORS_NN_KERNEL_UTIL_H_
#define SCOPEFLOW_OPERATORS_NN_KERNEL_UTIL_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace nn {

// Output `slot`, or null if it is not bound.
inline Tensor* OptionalOutput(KernelContext& context, absl::string_view slot) {
  return context.HasOutput(slot) ? context.Output(slot) : nullptr;
}

// The data of output `slot`, or null if it is not bound.
template <typename T>
T* OptionalOutputData(KernelContext& context, absl::string_view slot) {
  return context.HasOutput(slot) ? context.Output(slot)->data<T>() : nullptr;
}

// The data of input `slot`, or null if it is not bound.
template <typename T>
const T* OptionalInputData(const KernelContext& context,
                           absl::string_view slot) {
  return context.HasInput(slot) ? context.Input(slot).data<T>() : nullptr;
}

// X seen as [rows, normalized] around attribute begin_norm_axis (of
// layer_norm and layer_norm_grad).
struct Rows {
  int64_t rows, normalized;
};

absl::StatusOr<Rows> RowsOf(const KernelContext& context, const Tensor& x);

}  // namespace nn
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_KERNEL_UTIL_H_
