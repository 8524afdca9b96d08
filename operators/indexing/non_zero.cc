// non_zero (ONNX NonZero, numpy.nonzero): the indices of X's nonzero
// elements, as an int64 tensor [rank, count] whose column j holds the
// index of the j-th nonzero element in row-major order. A scalar counts as
// a tensor of one element ([1, count]), as numpy does. The count depends
// on X's values: inference sees them at run time only, and leaves it
// unknown (-1) at Prepare. NaN is nonzero. No gradient: the output is
// indices.
#include <algorithm>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

template <typename T>
int64_t CountNonZero(const Tensor& x) {
  const T* data = x.data<T>();
  int64_t count = 0;
  for (int64_t i = 0; i < x.numel(); ++i) count += data[i] != T(0) ? 1 : 0;
  return count;
}

int64_t CountNonZeroOf(const Tensor& x) {
  switch (x.dtype()) {
    case kFloat32:
      return CountNonZero<float>(x);
    case kFloat64:
      return CountNonZero<double>(x);
    case kInt32:
      return CountNonZero<int32_t>(x);
    case kInt64:
      return CountNonZero<int64_t>(x);
    case kUInt8:
      return CountNonZero<uint8_t>(x);
    default:
      return CountNonZero<bool>(x);
  }
}

absl::Status InferNonZero(InferContext& context) {
  const VarInfo& x = context.Input("X");
  SF_RETURN_IF_ERROR(CheckDtypeIn(
      context, "X", {kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool}));
  const int64_t rank =
      x.has_dims ? std::max<int64_t>(1, static_cast<int64_t>(x.dims.size()))
                 : -1;
  int64_t count = -1;
  if (const Tensor* value = context.InputValue("X")) {
    SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(*value));
    count = CountNonZeroOf(host);
  }
  context.SetOutput("Out", VarInfo{kInt64, {rank, count}, true});
  return absl::OkStatus();
}

template <typename T>
absl::Status NonZeroKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const int64_t count = CountNonZero<T>(x);
  // Inference counted the same values (every run: Prepare cannot know the
  // count); the kernel writes by its own count.
  SF_CHECK_CODE(out->rank() == 2 && out->dims()[1] == count,
                absl::StatusCode::kInternal,
                "output \"Out\" (variable \"%s\") was allocated as %s for %d "
                "nonzero elements of input \"X\" (variable \"%s\")",
                context.OutputName("Out"), DimsToString(out->dims()), count,
                context.InputName("X"));
  if (count == 0) return absl::OkStatus();
  const Dims dims = x.rank() == 0 ? Dims{1} : x.dims();
  const int rank = static_cast<int>(dims.size());
  absl::InlinedVector<int64_t, 8> coord(rank, 0);
  const T* data = x.data<T>();
  int64_t* indices = out->data<int64_t>();
  int64_t column = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (data[i] != T(0)) {
      for (int d = 0; d < rank; ++d) indices[d * count + column] = coord[d];
      ++column;
    }
    for (int d = rank - 1; d >= 0 && ++coord[d] == dims[d]; --d) coord[d] = 0;
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(non_zero)
    .Input("X")
    .Output("Out")
    .Infer(InferNonZero)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &NonZeroKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &NonZeroKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &NonZeroKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &NonZeroKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kUInt8, &NonZeroKernel<uint8_t>)
    .Kernel(DeviceType::kCPU, kBool, &NonZeroKernel<bool>);

}  // namespace scopeflow
