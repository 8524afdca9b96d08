#include "operators/control/step_tensors.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "platform/device.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

template <typename T>
void AddElements(const Tensor& a, const Tensor& b, Tensor& sum) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* out = sum.data<T>();
  for (int64_t i = 0; i < sum.numel(); ++i) out[i] = x[i] + y[i];
}

}  // namespace

absl::StatusOr<Tensor> StepOf(const Tensor& sequence, int64_t t) {
  SF_ASSIGN_OR_RETURN(Tensor row, sequence.Slice(t, t + 1));
  Dims dims(sequence.dims().begin() + 1, sequence.dims().end());
  SF_RETURN_IF_ERROR(row.Reshape(std::move(dims)));
  return row;
}

absl::Status CopyIntoStep(const Tensor& step, int64_t t, int64_t steps,
                          const Place& place, Tensor& sequence,
                          const std::string& what) {
  SF_CHECK(step.initialized(), "step %d left \"%s\" without a value", t, what);
  Dims dims = {steps};
  dims.insert(dims.end(), step.dims().begin(), step.dims().end());
  if (!sequence.initialized()) {
    SF_RETURN_IF_ERROR(sequence.Allocate(place, step.dtype(), dims));
  }
  SF_CHECK(sequence.dims() == dims && sequence.dtype() == step.dtype(),
           "step %d gives \"%s\" as %s, unlike the other steps (%s "
           "stacked)",
           t, what, step.DebugString(), sequence.DebugString());
  char* base = static_cast<char*>(sequence.raw_data());
  return CopyBytes(place, base + t * step.nbytes(), step.place(),
                   step.raw_data(), step.nbytes());
}

absl::StatusOr<bool> ReadBoolScalar(const KernelContext& context,
                                    absl::string_view slot) {
  const Tensor& value = context.Input(slot);
  SF_CHECK(value.initialized() && value.dtype() == kBool && value.numel() == 1,
           "input \"%s\" (variable \"%s\") must hold one bool, got %s", slot,
           context.InputName(slot), value.DebugString());
  SF_ASSIGN_OR_RETURN(Tensor host, value.CopyTo(CPUPlace()));
  return host.data<bool>()[0];
}

absl::StatusOr<Tensor> ZerosLike(const Tensor& like) {
  // Made on the host, then copied where `like` is: control-flow ops run
  // these few whole-tensor steps in blocks on any place.
  Tensor zeros;
  SF_RETURN_IF_ERROR(zeros.Allocate(CPUPlace(), like.dtype(), like.dims()));
  std::memset(zeros.raw_data(), 0, zeros.nbytes());
  if (like.place().is_cpu()) return zeros;
  return zeros.CopyTo(like.place());
}

absl::StatusOr<Tensor> Sum(const Tensor& a, const Tensor& b,
                           const std::string& what) {
  SF_CHECK(a.dtype() == b.dtype() && a.dims() == b.dims(),
           "two gradients of \"%s\" differ: %s and %s", what, a.DebugString(),
           b.DebugString());
  if (!a.place().is_cpu() || !b.place().is_cpu()) {
    // Summed on the host (see ZerosLike).
    SF_ASSIGN_OR_RETURN(const Tensor host_a, a.CopyTo(CPUPlace()));
    SF_ASSIGN_OR_RETURN(const Tensor host_b, b.CopyTo(CPUPlace()));
    SF_ASSIGN_OR_RETURN(const Tensor host_sum, Sum(host_a, host_b, what));
    return host_sum.CopyTo(a.place());
  }
  Tensor sum;
  SF_RETURN_IF_ERROR(sum.Allocate(a.place(), a.dtype(), a.dims()));
  if (a.dtype() == kFloat32) {
    AddElements<float>(a, b, sum);
  } else if (a.dtype() == kFloat64) {
    AddElements<double>(a, b, sum);
  } else {
    return absl::UnimplementedError(absl::StrFormat(
        "the gradient of \"%s\" is %s; gradients are summed over steps in "
        "float32 and float64 only",
        what, DataTypeName(a.dtype())));
  }
  return sum;
}

}  // namespace scopeflow
