// argmax and argmin of input "X" (float32, float64, int32, int64) along
// attribute "axis" (default 0): output "Out", int64, of X's shape with that
// axis reduced to 1 ("keepdims", the default) or removed. Ties give the
// first index, or with "select_last_index" the last; NaN wins over any
// number for both (numpy's rule). Their outputs are indices: no gradient.
#include "operators/reduction/argmax.h"

#include <cstdint>
#include <vector>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status InferArgMax(InferContext& context) {
  SF_RETURN_IF_ERROR(
      CheckDtypeIn(context, "X", {kFloat32, kFloat64, kInt32, kInt64}));
  const VarInfo& x = context.Input("X");
  if (!x.has_dims) {
    VarInfo out;
    out.dtype = kInt64;
    context.SetOutput("Out", out);
    return absl::OkStatus();
  }
  SF_ASSIGN_OR_RETURN(const int axis, InputAxis(context, "X"));
  Dims dims = x.dims;
  if (context.attrs().Get<bool>("keepdims")) {
    dims[axis] = 1;
  } else {
    dims.erase(dims.begin() + axis);
  }
  bool output_empty = false;  // Possibly, if a dimension is unknown.
  for (int64_t d : dims) output_empty = output_empty || d <= 0;
  SF_CHECK(x.dims[axis] != 0 || output_empty,
           "%s: %s along axis %d, of size 0 (expected a non-empty axis)",
           DescribeInputShape(context, "X"), context.op_type(), axis);
  context.SetOutput("Out", 0, kInt64, std::move(dims));
  return absl::OkStatus();
}

// The argmax rule, or with kMin the argmin rule.
template <bool kMin, typename T>
bool Replaces(T value, T best, bool last) {
  return kMin ? ArgMinReplaces(value, best, last)
              : ArgMaxReplaces(value, best, last);
}

template <typename T, bool kMin = false>
absl::Status ArgMaxKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const AxisSplit split, ArgMaxSplit(context));
  // Inference rejects an empty axis unless the output is empty.
  if (out->numel() == 0) return absl::OkStatus();
  const bool last = context.attrs().Get<bool>("select_last_index");
  const T* in = x.data<T>();
  int64_t* index = out->data<int64_t>();
  if (split.inner == 1 && !kMin) {
    for (int64_t o = 0; o < split.outer; ++o) {
      index[o] = ArgMax(in + o * split.size, split.size, 1, last);
    }
    return absl::OkStatus();
  }
  // Strided slices: walk each [size, inner] block row by row, keeping the
  // best value of every slice, so that the reads stay contiguous.
  std::vector<T> best(split.inner);
  for (int64_t o = 0; o < split.outer; ++o) {
    const T* block = in + o * split.size * split.inner;
    int64_t* block_index = index + o * split.inner;
    for (int64_t i = 0; i < split.inner; ++i) {
      best[i] = block[i];
      block_index[i] = 0;
    }
    for (int64_t k = 1; k < split.size; ++k) {
      const T* row = block + k * split.inner;
      for (int64_t i = 0; i < split.inner; ++i) {
        if (Replaces<kMin>(row[i], best[i], last)) {
          best[i] = row[i];
          block_index[i] = k;
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(argmax)
    .Input("X")
    .Output("Out")
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{0}))
    .Attr("keepdims", AttrType::kBool, AttrValue(true))
    .Attr("select_last_index", AttrType::kBool, AttrValue(false))
    .Infer(InferArgMax)
    .Kernel(DeviceType::kCPU, kFloat32, &ArgMaxKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ArgMaxKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ArgMaxKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ArgMaxKernel<int64_t>);

SF_REGISTER_OP(argmin)
    .Input("X")
    .Output("Out")
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{0}))
    .Attr("keepdims", AttrType::kBool, AttrValue(true))
    .Attr("select_last_index", AttrType::kBool, AttrValue(false))
    .Infer(InferArgMax)
    .Kernel(DeviceType::kCPU, kFloat32, &ArgMaxKernel<float, true>)
    .Kernel(DeviceType::kCPU, kFloat64, &ArgMaxKernel<double, true>)
    .Kernel(DeviceType::kCPU, kInt32, &ArgMaxKernel<int32_t, true>)
    .Kernel(DeviceType::kCPU, kInt64, &ArgMaxKernel<int64_t, true>);

}  // namespace scopeflow
