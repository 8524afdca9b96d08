// Reductions of input "X" to an output "Out" of X's dtype:
// - reduce_sum (float32, float64, int32, int64), reduce_mean (float32,
//   float64) and reduce_max (float32, float64, every integer type and bool,
//   where it is "any") over the axes of input "Axes" (int32
//   or int64, 1-D) when it is bound, else of attribute "axes" (empty: every
//   axis, or none with "noop_with_empty_axes"; negative axes count from the
//   end), which leave the output without them or, with "keep_dim", with
//   size 1 there;
// - mean (float32, float64): of every element, to a scalar of shape [].
//
// Float sums are accumulated in double, so long sums keep float32's
// precision. Integer sums wrap around on overflow, as the integers' own
// addition would on the machine (they are accumulated as uint64).
// reduce_max propagates NaN, and of no elements is an error; the sum of no
// elements is 0 and their mean NaN.
//
// Gradients (float32, float64), each reading X and Out@GRAD and writing the
// optional X@GRAD: reduce_sum_grad and reduce_mean_grad spread each
// output's gradient over the elements it reduced (divided by their number
// for the mean), mean_grad likewise over every element. reduce_max_grad
// also reads Out, and gives each output's gradient to one element: the
// first maximal one in X's order (the first NaN, when the maximum is NaN),
// which is the one the forward's strict comparison keeps on ties, as argmax
// picks the first index. The gradient thus sums to Out@GRAD, and the other
// tied elements get 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/reduction/reduce_axes.h"
#include "operators/reduction/reduce_infer.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using reduction::Coalesce;
using reduction::InferReduce;
using reduction::InferReduceGrad;
using reduction::KernelReducedAxes;
using reduction::ReduceGradSpec;
using reduction::ReduceShape;

// The innermost run of a ReduceShape, which is contiguous in X: its length,
// and whether it is reduced (into one output) or kept (each element to its
// own output, contiguous too). A shape of no runs is a single element,
// seen as a reduced run of one.
int64_t InnerSize(const ReduceShape& shape) {
  return shape.sizes.empty() ? 1 : shape.sizes.back();
}
bool InnerReduced(const ReduceShape& shape) {
  return shape.sizes.empty() || shape.reduced.back();
}

// Calls visit(start, out) for each innermost run of `shape` (numel > 0), in
// the order of X: the run is X's elements [start, start + InnerSize), and
// `out` the output index of all of them if InnerReduced, else of the first
// (the others follow one by one).
template <typename Visit>
void ForEachRun(const ReduceShape& shape, Visit visit) {
  const int runs = static_cast<int>(shape.sizes.size());
  if (runs == 0) {
    visit(int64_t{0}, int64_t{0});
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
  std::vector<int64_t> index(runs, 0);  // of the outer runs
  int64_t out = 0;
  for (int64_t start = 0; start < numel; start += inner) {
    visit(start, out);
    for (int r = runs - 2; r >= 0; --r) {
      out += out_stride[r];
      if (++index[r] < shape.sizes[r]) break;
      out -= out_stride[r] * shape.sizes[r];
      index[r] = 0;
    }
  }
}

// acc[o] = op(acc[o], x[i]) for every element i of x (numel > 0) in order,
// o being its output's index: a reduced innermost run folds into one
// accumulator, a kept one adds element by element to a contiguous run of
// accumulators.
template <typename T, typename Acc, typename Op>
void Accumulate(const T* x, const ReduceShape& shape, Acc* acc, Op op) {
  const int64_t inner = InnerSize(shape);
  if (InnerReduced(shape)) {
    ForEachRun(shape, [&](int64_t start, int64_t out) {
      const T* in = x + start;
      Acc a = acc[out];
      for (int64_t k = 0; k < inner; ++k) a = op(a, in[k]);
      acc[out] = a;
    });
  } else {
    ForEachRun(shape, [&](int64_t start, int64_t out) {
      const T* in = x + start;
      Acc* a = acc + out;
      for (int64_t k = 0; k < inner; ++k) a[k] = op(a[k], in[k]);
    });
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
  SF_ASSIGN_OR_RETURN(const std::vector<bool> reduced,
                      KernelReducedAxes(context, x, "Out"));
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
  if constexpr (std::is_same_v<T, bool>) {
    // Any: folded in bytes (a vector<bool> has no data()).
    return Reduce<T>(
        context, uint8_t{0}, [](uint8_t a, bool v) { return a | v; },
        [](uint8_t a, int64_t) { return a != 0; });
  } else {
    // Inference rejects a max of no elements, so the identity never shows.
    const T lowest = std::numeric_limits<T>::has_infinity
                         ? -std::numeric_limits<T>::infinity()
                         : std::numeric_limits<T>::lowest();
    return Reduce<T>(context, lowest, &MaxOrNaN<T>,
                     [](T a, int64_t) { return a; });
  }
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

// X's reduced axes, coalesced, and the number of elements per output.
struct GradLayout {
  ReduceShape shape;
  int64_t count = 1;
};

absl::StatusOr<GradLayout> LayoutOf(const KernelContext& context,
                                    const Tensor& x) {
  SF_ASSIGN_OR_RETURN(const std::vector<bool> reduced,
                      KernelReducedAxes(context, x, "Out@GRAD"));
  GradLayout layout;
  for (int i = 0; i < x.rank(); ++i) {
    if (reduced[i]) layout.count *= x.dim(i);
  }
  layout.shape = Coalesce(x.dims(), reduced);
  return layout;
}

// dx[i] = scale * g[o] for every element i of X (numel > 0), o being its
// output's index: a fill of each reduced run, a scaled copy of each kept
// one.
template <typename T>
void Spread(const T* g, T scale, const ReduceShape& shape, T* dx) {
  const int64_t inner = InnerSize(shape);
  if (InnerReduced(shape)) {
    ForEachRun(shape, [&](int64_t start, int64_t out) {
      const T value = scale * g[out];
      T* d = dx + start;
      for (int64_t k = 0; k < inner; ++k) d[k] = value;
    });
  } else {
    ForEachRun(shape, [&](int64_t start, int64_t out) {
      const T* from = g + out;
      T* d = dx + start;
      for (int64_t k = 0; k < inner; ++k) d[k] = scale * from[k];
    });
  }
}

// reduce_sum: every element gets its output's gradient; reduce_mean
// (kMean): divided by the number of elements the output averaged.
template <typename T, bool kMean>
absl::Status ReduceSumOrMeanGrad(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  if (x.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const GradLayout layout, LayoutOf(context, x));
  const T scale =
      kMean ? static_cast<T>(1.0 / static_cast<double>(layout.count)) : T(1);
  Spread(context.Input("Out@GRAD").data<T>(), scale, layout.shape,
         context.Output("X@GRAD")->data<T>());
  return absl::OkStatus();
}

// Whether X's element v is the maximum m the forward found; NaN matches a
// NaN maximum.
template <typename T>
bool IsTheMax(T v, T m) {
  return v == m || (std::isnan(v) && std::isnan(m));
}

// Each output's gradient to the first of its elements that is the maximum
// (see the top of the file), 0 to every other element.
template <typename T>
absl::Status ReduceMaxGrad(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  SF_CHECK(context.Input("Out").numel() == context.Input("Out@GRAD").numel(),
           "input \"Out\" holds %d elements, but \"Out@GRAD\" %d: expected "
           "the same count",
           context.Input("Out").numel(), context.Input("Out@GRAD").numel());
  const T* in = x.data<T>();
  const T* max = context.Input("Out").data<T>();
  const T* g = context.Input("Out@GRAD").data<T>();
  Tensor* dx_tensor = context.Output("X@GRAD");
  T* dx = dx_tensor->data<T>();
  std::fill(dx, dx + x.numel(), T(0));
  if (x.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const GradLayout layout, LayoutOf(context, x));
  // Whether an output's maximum has been found, so that later ties get 0.
  std::vector<uint8_t> found(context.Input("Out").numel(), 0);
  const int64_t inner = InnerSize(layout.shape);
  if (InnerReduced(layout.shape)) {
    ForEachRun(layout.shape, [&](int64_t start, int64_t out) {
      if (found[out]) return;
      for (int64_t k = 0; k < inner; ++k) {
        if (IsTheMax(in[start + k], max[out])) {
          dx[start + k] = g[out];
          found[out] = 1;
          return;
        }
      }
    });
  } else {
    ForEachRun(layout.shape, [&](int64_t start, int64_t out) {
      for (int64_t k = 0; k < inner; ++k) {
        if (!found[out + k] && IsTheMax(in[start + k], max[out + k])) {
          dx[start + k] = g[out + k];
          found[out + k] = 1;
        }
      }
    });
  }
  return absl::OkStatus();
}

// Out@GRAD holds one element, the gradient of the scalar mean.
absl::Status InferMeanGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Out@GRAD"));
  const VarInfo& g = context.Input("Out@GRAD");
  bool one = true;
  for (int64_t d : g.dims) one = one && (d == 1 || d < 0);
  SF_CHECK(!g.has_dims || one,
           "%s: expected one element, the gradient of the mean of %s",
           DescribeInputShape(context, "Out@GRAD"),
           DescribeInputShape(context, "X"));
  if (context.HasOutput("X@GRAD")) {
    context.SetOutput("X@GRAD", context.Input("X"));
  }
  return absl::OkStatus();
}

// Every element gets the mean's gradient over the number of elements.
template <typename T>
absl::Status MeanGrad(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  Tensor* dx_tensor = context.Output("X@GRAD");
  const int64_t n = dx_tensor->numel();
  if (n == 0) return absl::OkStatus();
  const T value =
      static_cast<T>(static_cast<double>(*context.Input("Out@GRAD").data<T>()) /
                     static_cast<double>(n));
  T* dx = dx_tensor->data<T>();
  for (int64_t i = 0; i < n; ++i) dx[i] = value;
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(reduce_sum)
    .Input("X")
    .Input("Axes", /*optional=*/true)
    .Output("Out")
    .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("keep_dim", AttrType::kBool, AttrValue(false))
    .Attr("noop_with_empty_axes", AttrType::kBool, AttrValue(false))
    .Infer(InferReduce({kFloat32, kFloat64, kInt32, kInt64},
                       /*needs_elements=*/false))
    .Grad(ReduceGradSpec("reduce_sum_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceSum<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceSum<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ReduceSum<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ReduceSum<int64_t>);

SF_REGISTER_OP(reduce_mean)
    .Input("X")
    .Input("Axes", /*optional=*/true)
    .Output("Out")
    .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("keep_dim", AttrType::kBool, AttrValue(false))
    .Attr("noop_with_empty_axes", AttrType::kBool, AttrValue(false))
    .Infer(InferReduce({kFloat32, kFloat64}, /*needs_elements=*/false))
    .Grad(ReduceGradSpec("reduce_mean_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceMean<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceMean<double>);

SF_REGISTER_OP(reduce_max)
    .Input("X")
    .Input("Axes", /*optional=*/true)
    .Output("Out")
    .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("keep_dim", AttrType::kBool, AttrValue(false))
    .Attr("noop_with_empty_axes", AttrType::kBool, AttrValue(false))
    .Infer(InferReduce({kFloat32, kFloat64, kInt8, kInt16, kInt32, kInt64,
                        kUInt8, kUInt16, kUInt32, kUInt64, kBool},
                       /*needs_elements=*/true))
    .Grad(ReduceGradSpec("reduce_max_grad", /*reads_out=*/true))
    .Kernels(DeviceType::kCPU, NumberTypes(),
             [](auto t) { return &ReduceMax<typename decltype(t)::type>; })
    .Kernel(DeviceType::kCPU, kBool, &ReduceMax<bool>);

SF_REGISTER_OP(mean)
    .Input("X")
    .Output("Out")
    .Infer(InferMean)
    .Grad(GradSpec("mean_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &Mean<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Mean<double>);

// The reduce_*_grad ops get the forward's "Axes", "axes",
// "noop_with_empty_axes" and "keep_dim" (the gradient maker copies the
// attributes).
SF_REGISTER_OP(reduce_sum_grad)
    .Input("X")
    .Input("Axes", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("keep_dim", AttrType::kBool, AttrValue(false))
    .Attr("noop_with_empty_axes", AttrType::kBool, AttrValue(false))
    .Infer(InferReduceGrad(/*reads_out=*/false))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceSumOrMeanGrad<float, false>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceSumOrMeanGrad<double, false>);

SF_REGISTER_OP(reduce_mean_grad)
    .Input("X")
    .Input("Axes", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("keep_dim", AttrType::kBool, AttrValue(false))
    .Attr("noop_with_empty_axes", AttrType::kBool, AttrValue(false))
    .Infer(InferReduceGrad(/*reads_out=*/false))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceSumOrMeanGrad<float, true>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceSumOrMeanGrad<double, true>);

SF_REGISTER_OP(reduce_max_grad)
    .Input("X")
    .Input("Axes", /*optional=*/true)
    .Input("Out")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("keep_dim", AttrType::kBool, AttrValue(false))
    .Attr("noop_with_empty_axes", AttrType::kBool, AttrValue(false))
    .Infer(InferReduceGrad(/*reads_out=*/true))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceMaxGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceMaxGrad<double>);

SF_REGISTER_OP(mean_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(InferMeanGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &MeanGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &MeanGrad<double>);

}  // namespace scopeflow
