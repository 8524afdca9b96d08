// Reductions of input "X" to an output "Out" of X's dtype:
// - reduce_sum (float32, float64, int32, int64), reduce_mean (float32,
//   float64) and reduce_max (all four) over the axes of attribute "axes"
//   (default empty: every axis; negative axes count from the end), which
//   leave the output without them or, with "keep_dim", with size 1 there;
// - mean (float32, float64): of every element, to a scalar of shape [].
//
// Float sums are accumulated in double, so long sums keep float32's
// precision. Integer sums wrap around on overflow, as the integers' own
// addition would on the machine (they are accumulated as uint64).
// reduce_max propagates NaN, and of no elements is an error; the sum of no
// elements is 0 and their mean NaN.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Which axes of a rank-`rank` input "axes" reduces: every one if it is
// empty. Errors say which axis is wrong and what was expected.
absl::StatusOr<std::vector<bool>> ReducedAxes(absl::Span<const int64_t> axes,
                                              int rank) {
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    SF_CHECK(axis >= -rank && axis < rank,
             "attribute \"axes\" = %s: axis %d is out of range for rank %d "
             "(expected [%d, %d))",
             DimsToString(axes), axis, rank, -rank, rank);
    const int64_t normalized = axis < 0 ? axis + rank : axis;
    SF_CHECK(!reduced[normalized],
             "attribute \"axes\" = %s names axis %d twice (expected distinct "
             "axes)",
             DimsToString(axes), normalized);
    reduced[normalized] = true;
  }
  return reduced;
}

// Inference of the reduce_* ops. With `needs_elements` (reduce_max), a
// reduction of no elements into a non-empty output is an error.
InferFn InferReduce(std::vector<DataType> dtypes, bool needs_elements) {
  return [dtypes, needs_elements](InferContext& context) -> absl::Status {
    SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", dtypes));
    const VarInfo& x = context.Input("X");
    const auto& axes = context.attrs().Get<std::vector<int64_t>>("axes");
    const bool keep_dim = context.attrs().Get<bool>("keep_dim");
    if (!x.has_dims) {
      // Rank unknown: so is the output's, unless every axis goes.
      VarInfo out;
      out.dtype = x.dtype;
      out.has_dims = axes.empty() && !keep_dim;
      context.SetOutput("Out", out);
      return absl::OkStatus();
    }
    const int rank = static_cast<int>(x.dims.size());
    absl::StatusOr<std::vector<bool>> reduced = ReducedAxes(axes, rank);
    if (!reduced.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          DescribeInputShape(context, "X"), ": ", reduced.status().message()));
    }
    Dims dims;
    bool reduces_nothing = false;  // A reduced axis is known to be empty.
    bool output_empty = false;     // Possibly, if a dimension is unknown.
    for (int i = 0; i < rank; ++i) {
      if ((*reduced)[i]) {
        if (keep_dim) dims.push_back(1);
        reduces_nothing = reduces_nothing || x.dims[i] == 0;
      } else {
        dims.push_back(x.dims[i]);
        output_empty = output_empty || x.dims[i] <= 0;
      }
    }
    SF_CHECK(!needs_elements || !reduces_nothing || output_empty,
             "%s: attribute \"axes\" = %s reduces an axis of size 0 "
             "(expected at least one element per output)",
             DescribeInputShape(context, "X"), DimsToString(axes));
    context.SetOutput("Out", 0, x.dtype, std::move(dims));
    return absl::OkStatus();
  };
}

// X's dimensions for a reduction: adjacent axes that are all reduced or all
// kept merge into one, and axes of size 1 drop out (they move no offset).
struct ReduceShape {
  std::vector<int64_t> sizes;
  std::vector<bool> reduced;
};

ReduceShape Coalesce(absl::Span<const int64_t> dims,
                     const std::vector<bool>& reduced) {
  ReduceShape shape;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!shape.sizes.empty() && shape.reduced.back() == reduced[i]) {
      shape.sizes.back() *= dims[i];
    } else {
      shape.sizes.push_back(dims[i]);
      shape.reduced.push_back(reduced[i]);
    }
  }
  return shape;
}

// acc[o] = op(acc[o], x[i]) for every element i of x (numel > 0) in order,
// o being its output's index. The innermost run of `shape` is contiguous:
// either reduced into one accumulator, or kept and added element by element
// to a contiguous run of accumulators.
template <typename T, typename Acc, typename Op>
void Accumulate(const T* x, const ReduceShape& shape, Acc* acc, Op op) {
  const int runs = static_cast<int>(shape.sizes.size());
  if (runs == 0) {  // A single element.
    acc[0] = op(acc[0], x[0]);
    return;
  }
  std::vector<int64_t> out_stride(runs, 0);  // 0 for reduced runs
  int64_t stride = 1;
  int64_t numel = 1;
  for (int r = runs - 1; r >= 0; --r) {
    numel *= shape.sizes[r];
    if (!shape.reduced[r]) {
      out_stride[r] = stride;
      stride *= shape.sizes[r];
    }
  }
  const int64_t inner = shape.sizes[runs - 1];
  const bool inner_reduced = shape.reduced[runs - 1];
  std::vector<int64_t> index(runs, 0);  // of the outer runs
  int64_t out = 0;
  for (int64_t start = 0; start < numel; start += inner) {
    const T* in = x + start;
    if (inner_reduced) {
      Acc a = acc[out];
      for (int64_t k = 0; k < inner; ++k) a = op(a, in[k]);
      acc[out] = a;
    } else {
      Acc* a = acc + out;
      for (int64_t k = 0; k < inner; ++k) a[k] = op(a[k], in[k]);
    }
    for (int r = runs - 2; r >= 0; --r) {
      out += out_stride[r];
      if (++index[r] < shape.sizes[r]) break;
      out -= out_stride[r] * shape.sizes[r];
      index[r] = 0;
    }
  }
}

// Reduces X over "axes" into Out: starting from `identity`, folds the
// elements of each output with `op` into an Acc, then writes
// finish(acc, number of elements folded) as T.
template <typename T, typename Acc, typename Op, typename Finish>
absl::Status Reduce(KernelContext& context, Acc identity, Op op,
                    Finish finish) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(
      const std::vector<bool> reduced,
      ReducedAxes(context.attrs().Get<std::vector<int64_t>>("axes"), x.rank()));
  int64_t count = 1;
  for (int i = 0; i < x.rank(); ++i) {
    if (reduced[i]) count *= x.dim(i);
  }
  std::vector<Acc> acc(out->numel(), identity);
  if (x.numel() > 0) {
    Accumulate(x.data<T>(), Coalesce(x.dims(), reduced), acc.data(), op);
  }
  T* y = out->data<T>();
  for (size_t o = 0; o < acc.size(); ++o) y[o] = finish(acc[o], count);
  return absl::OkStatus();
}

// Sums accumulate floats in double and integers in uint64 (wrapping, where
// signed overflow would be undefined).
template <typename T>
using SumType =
    std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <typename T>
absl::Status ReduceSum(KernelContext& context) {
  using Acc = SumType<T>;
  return Reduce<T>(
      context, Acc{0}, [](Acc a, T v) { return a + static_cast<Acc>(v); },
      [](Acc a, int64_t) { return static_cast<T>(a); });
}

template <typename T>
absl::Status ReduceMean(KernelContext& context) {
  return Reduce<T>(
      context, 0.0, [](double a, T v) { return a + static_cast<double>(v); },
      [](double a, int64_t count) {
        return static_cast<T>(a / static_cast<double>(count));
      });
}

// The larger of a and v; NaN once either is NaN.
template <typename T>
T MaxOrNaN(T a, T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return v;
  }
  return v > a ? v : a;
}

template <typename T>
absl::Status ReduceMax(KernelContext& context) {
  // Inference rejects a max of no elements, so the identity never shows.
  const T lowest = std::numeric_limits<T>::has_infinity
                       ? -std::numeric_limits<T>::infinity()
                       : std::numeric_limits<T>::lowest();
  return Reduce<T>(context, lowest, &MaxOrNaN<T>,
                   [](T a, int64_t) { return a; });
}

absl::Status InferMean(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  context.SetOutput("Out", 0, context.Input("X").dtype, Dims{});
  return absl::OkStatus();
}

template <typename T>
absl::Status Mean(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const T* in = x.data<T>();
  double sum = 0;
  for (int64_t i = 0; i < x.numel(); ++i) sum += in[i];
  *context.Output("Out")->data<T>() =
      static_cast<T>(sum / static_cast<double>(x.numel()));
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(reduce_sum)
    .Input("X")
    .Output("Out")
    .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("keep_dim", AttrType::kBool, AttrValue(false))
    .Infer(InferReduce({kFloat32, kFloat64, kInt32, kInt64},
                       /*needs_elements=*/false))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceSum<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceSum<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ReduceSum<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ReduceSum<int64_t>);

SF_REGISTER_OP(reduce_mean)
    .Input("X")
    .Output("Out")
    .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("keep_dim", AttrType::kBool, AttrValue(false))
    .Infer(InferReduce({kFloat32, kFloat64}, /*needs_elements=*/false))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceMean<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceMean<double>);

SF_REGISTER_OP(reduce_max)
    .Input("X")
    .Output("Out")
    .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("keep_dim", AttrType::kBool, AttrValue(false))
    .Infer(InferReduce({kFloat32, kFloat64, kInt32, kInt64},
                       /*needs_elements=*/true))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceMax<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceMax<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ReduceMax<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ReduceMax<int64_t>);

SF_REGISTER_OP(mean)
    .Input("X")
    .Output("Out")
    .Infer(InferMean)
    .Kernel(DeviceType::kCPU, kFloat32, &Mean<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Mean<double>);

}  // namespace scopeflow
