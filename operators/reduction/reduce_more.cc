// More reductions of input "X" to an output "Out" of X's dtype, over the
// axes of input "Axes" or attribute "axes" as for reduce_sum (see
// reduce.cc), as ONNX ReduceMin, ReduceProd, ReduceL1, ReduceL2 and
// ReduceLogSumExp:
// - reduce_min (float32, float64, every integer type and bool, where it is
//   "all"): NaN propagates; of no elements the identity, +inf (the
//   type's largest value for integers, true for bool), as ONNX ReduceMin
//   (18, 20) defines it;
// - reduce_prod (float32, float64, int32, int64; 1 of no elements;
//   integers wrap around);
// - reduce_l1, the sum of |X| (the same dtypes; 0 of no elements);
// - reduce_l2, sqrt of the sum of squares (float32, float64);
// - reduce_log_sum_exp, log(sum(exp(X))) computed as m + log(sum(exp(X -
//   m))) with m each output's maximum, so it neither overflows nor
//   underflows (float32, float64; -inf of no elements).
// Float accumulations run in double.
//
// Gradients (float32, float64), each reading X, Out and Out@GRAD:
// reduce_min_grad gives each output's gradient to the first minimal
// element (as reduce_max_grad does for the maximum); reduce_prod_grad gives
// element i the product of the other elements times the gradient (exact
// with zeros: counted, not divided by); reduce_l1_grad sign(X) times the
// gradient (0 at X = 0, where |X| has no derivative); reduce_l2_grad X /
// Out times it (0 where Out = 0); reduce_log_sum_exp_grad exp(X - Out)
// times it (the softmax of the reduced elements).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/reduction/reduce_axes.h"
#include "operators/reduction/reduce_infer.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using reduction::InferReduce;
using reduction::InferReduceGrad;
using reduction::KernelReducedAxes;
using reduction::ReduceGradSpec;

// Calls f(i, o) for every element i of X in order, o being the index of
// the output element it reduces into; `slot` is the tensor of the output's
// shape the kernel indexes by. An odometer over X's dimensions keeps o.
template <typename F>
absl::Status ForEachElement(const KernelContext& context, const Tensor& x,
                            absl::string_view slot, F f) {
  SF_ASSIGN_OR_RETURN(const std::vector<bool> reduced,
                      KernelReducedAxes(context, x, slot));
  const int rank = x.rank();
  std::vector<int64_t> out_stride(rank, 0);
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (!reduced[d]) {
      out_stride[d] = stride;
      stride *= x.dim(d);
    }
  }
  std::vector<int64_t> index(rank, 0);
  int64_t o = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    f(i, o);
    for (int d = rank - 1; d >= 0; --d) {
      o += out_stride[d];
      if (++index[d] < x.dim(d)) break;
      o -= out_stride[d] * x.dim(d);
      index[d] = 0;
    }
  }
  return absl::OkStatus();
}

// Floats accumulate in double; integers in uint64, wrapping around as the
// machine's own arithmetic would (signed overflow is undefined).
template <typename T>
using AccType =
    std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

// Out[o] = finish(acc[o]) with acc[o] = op(acc[o], X[i]) over o's elements,
// from `identity`.
template <typename T, typename Acc, typename Op, typename Finish>
absl::Status Fold(KernelContext& context, Acc identity, Op op, Finish finish) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  std::vector<Acc> acc(out->numel(), identity);
  const T* in = x.data<T>();
  SF_RETURN_IF_ERROR(ForEachElement(
      context, x, "Out",
      [&](int64_t i, int64_t o) { acc[o] = op(acc[o], in[i]); }));
  T* y = out->data<T>();
  for (size_t o = 0; o < acc.size(); ++o) y[o] = finish(acc[o]);
  return absl::OkStatus();
}

// The smaller of a and v; NaN once either is NaN.
template <typename T>
T MinOrNaN(T a, T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return v;
  }
  return v < a ? v : a;
}

template <typename T>
absl::Status ReduceMin(KernelContext& context) {
  if constexpr (std::is_same_v<T, bool>) {
    // All: folded in bytes, as reduce_max folds "any".
    return Fold<T>(
        context, uint8_t{1}, [](uint8_t a, bool v) { return a & v; },
        [](uint8_t a) { return a != 0; });
  } else {
    // The min of no elements is the identity (ONNX ReduceMin 18, 20).
    const T highest = std::numeric_limits<T>::has_infinity
                          ? std::numeric_limits<T>::infinity()
                          : std::numeric_limits<T>::max();
    return Fold<T>(context, highest, &MinOrNaN<T>, [](T a) { return a; });
  }
}

template <typename T>
absl::Status ReduceProd(KernelContext& context) {
  using Acc = AccType<T>;
  return Fold<T>(
      context, Acc{1}, [](Acc a, T v) { return a * static_cast<Acc>(v); },
      [](Acc a) { return static_cast<T>(a); });
}

template <typename T>
absl::Status ReduceL1(KernelContext& context) {
  using Acc = AccType<T>;
  return Fold<T>(
      context, Acc{0},
      [](Acc a, T v) { return a + static_cast<Acc>(v < T{0} ? -v : v); },
      [](Acc a) { return static_cast<T>(a); });
}

template <typename T>
absl::Status ReduceL2(KernelContext& context) {
  return Fold<T>(
      context, 0.0,
      [](double a, T v) {
        const double d = static_cast<double>(v);
        return a + d * d;
      },
      [](double a) { return static_cast<T>(std::sqrt(a)); });
}

template <typename T>
absl::Status ReduceLogSumExp(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const T* in = x.data<T>();
  // Each output's maximum, then the sum of exp(x - max).
  std::vector<double> max(out->numel(),
                          -std::numeric_limits<double>::infinity());
  SF_RETURN_IF_ERROR(
      ForEachElement(context, x, "Out", [&](int64_t i, int64_t o) {
        const double v = static_cast<double>(in[i]);
        if (std::isnan(v) || v > max[o]) max[o] = v;
      }));
  std::vector<double> sum(out->numel(), 0.0);
  SF_RETURN_IF_ERROR(
      ForEachElement(context, x, "Out", [&](int64_t i, int64_t o) {
        if (std::isfinite(max[o])) {
          sum[o] += std::exp(static_cast<double>(in[i]) - max[o]);
        }
      }));
  T* y = out->data<T>();
  for (int64_t o = 0; o < out->numel(); ++o) {
    // An infinite or NaN maximum is the result itself (no elements: -inf).
    y[o] = static_cast<T>(std::isfinite(max[o]) ? max[o] + std::log(sum[o])
                                                : max[o]);
  }
  return absl::OkStatus();
}

// X@GRAD[i] = grad(X[i], Out[o], Out@GRAD[o]).
template <typename T, typename Grad>
absl::Status ElementGrad(KernelContext& context, Grad grad) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  const T* in = x.data<T>();
  const T* y = context.Input("Out").data<T>();
  const T* g = context.Input("Out@GRAD").data<T>();
  T* dx = context.Output("X@GRAD")->data<T>();
  return ForEachElement(context, x, "Out@GRAD", [&](int64_t i, int64_t o) {
    dx[i] = grad(in[i], y[o], g[o]);
  });
}

template <typename T>
absl::Status ReduceL1Grad(KernelContext& context) {
  return ElementGrad<T>(context, [](T x, T, T g) {
    return x > T{0} ? g : (x < T{0} ? -g : T{0});
  });
}

template <typename T>
absl::Status ReduceL2Grad(KernelContext& context) {
  return ElementGrad<T>(
      context, [](T x, T y, T g) { return y == T{0} ? T{0} : g * x / y; });
}

template <typename T>
absl::Status ReduceLogSumExpGrad(KernelContext& context) {
  return ElementGrad<T>(context,
                        [](T x, T y, T g) { return g * std::exp(x - y); });
}

// Each output's gradient to the first element equal to its minimum (NaN
// matching a NaN minimum), 0 to the others.
template <typename T>
absl::Status ReduceMinGrad(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  const T* in = x.data<T>();
  const T* min = context.Input("Out").data<T>();
  const T* g = context.Input("Out@GRAD").data<T>();
  T* dx = context.Output("X@GRAD")->data<T>();
  std::vector<uint8_t> found(context.Input("Out@GRAD").numel(), 0);
  return ForEachElement(context, x, "Out@GRAD", [&](int64_t i, int64_t o) {
    const bool is_min =
        in[i] == min[o] || (std::isnan(in[i]) && std::isnan(min[o]));
    dx[i] = is_min && !found[o] ? g[o] : T{0};
    if (is_min) found[o] = 1;
  });
}

// d prod / d x_i is the product of the other elements: with no zero among
// an output's elements prod / x_i; with one zero, the product of the rest
// at the zero and 0 elsewhere; with more, 0 everywhere. Counted in a pass
// of their own, so that no division by zero occurs.
template <typename T>
absl::Status ReduceProdGrad(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  const T* in = x.data<T>();
  const T* g = context.Input("Out@GRAD").data<T>();
  T* dx = context.Output("X@GRAD")->data<T>();
  const int64_t outputs = context.Input("Out@GRAD").numel();
  std::vector<int64_t> zeros(outputs, 0);
  std::vector<double> nonzero_product(outputs, 1.0);
  SF_RETURN_IF_ERROR(
      ForEachElement(context, x, "Out@GRAD", [&](int64_t i, int64_t o) {
        if (in[i] == T{0}) {
          ++zeros[o];
        } else {
          nonzero_product[o] *= static_cast<double>(in[i]);
        }
      }));
  return ForEachElement(context, x, "Out@GRAD", [&](int64_t i, int64_t o) {
    double others = 0;
    if (zeros[o] == 0) {
      others = nonzero_product[o] / static_cast<double>(in[i]);
    } else if (zeros[o] == 1 && in[i] == T{0}) {
      others = nonzero_product[o];
    }
    dx[i] = static_cast<T>(others * static_cast<double>(g[o]));
  });
}

}  // namespace

#define SF_REDUCTION_ATTRS                                                \
  Input("X")                                                              \
      .Input("Axes", /*optional=*/true)                                   \
      .Output("Out")                                                      \
      .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{})) \
      .Attr("keep_dim", AttrType::kBool, AttrValue(false))                \
      .Attr("noop_with_empty_axes", AttrType::kBool, AttrValue(false))

#define SF_REDUCTION_GRAD_SLOTS                                           \
  Input("X")                                                              \
      .Input("Axes", /*optional=*/true)                                   \
      .Input("Out")                                                       \
      .Input("Out@GRAD")                                                  \
      .Output("X@GRAD", /*optional=*/true)                                \
      .Attr("axes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{})) \
      .Attr("keep_dim", AttrType::kBool, AttrValue(false))                \
      .Attr("noop_with_empty_axes", AttrType::kBool, AttrValue(false))    \
      .Infer(InferReduceGrad(/*reads_out=*/true))

SF_REGISTER_OP(reduce_min)
    .SF_REDUCTION_ATTRS
    .Infer(InferReduce({kFloat32, kFloat64, kInt8, kInt16, kInt32, kInt64,
                        kUInt8, kUInt16, kUInt32, kUInt64, kBool},
                       /*needs_elements=*/false))
    .Grad(ReduceGradSpec("reduce_min_grad", /*reads_out=*/true))
    .Kernels(DeviceType::kCPU, NumberTypes(),
             [](auto t) { return &ReduceMin<typename decltype(t)::type>; })
    .Kernel(DeviceType::kCPU, kBool, &ReduceMin<bool>);

SF_REGISTER_OP(reduce_prod)
    .SF_REDUCTION_ATTRS
    .Infer(InferReduce({kFloat32, kFloat64, kInt32, kInt64},
                       /*needs_elements=*/false))
    .Grad(ReduceGradSpec("reduce_prod_grad", /*reads_out=*/true))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceProd<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceProd<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ReduceProd<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ReduceProd<int64_t>);

SF_REGISTER_OP(reduce_l1)
    .SF_REDUCTION_ATTRS
    .Infer(InferReduce({kFloat32, kFloat64, kInt32, kInt64},
                       /*needs_elements=*/false))
    .Grad(ReduceGradSpec("reduce_l1_grad", /*reads_out=*/true))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceL1<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceL1<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ReduceL1<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ReduceL1<int64_t>);

SF_REGISTER_OP(reduce_l2)
    .SF_REDUCTION_ATTRS
    .Infer(InferReduce({kFloat32, kFloat64}, /*needs_elements=*/false))
    .Grad(ReduceGradSpec("reduce_l2_grad", /*reads_out=*/true))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceL2<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceL2<double>);

SF_REGISTER_OP(reduce_log_sum_exp)
    .SF_REDUCTION_ATTRS
    .Infer(InferReduce({kFloat32, kFloat64}, /*needs_elements=*/false))
    .Grad(ReduceGradSpec("reduce_log_sum_exp_grad", /*reads_out=*/true))
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceLogSumExp<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceLogSumExp<double>);

SF_REGISTER_OP(reduce_min_grad)
    .SF_REDUCTION_GRAD_SLOTS
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceMinGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceMinGrad<double>);

SF_REGISTER_OP(reduce_prod_grad)
    .SF_REDUCTION_GRAD_SLOTS
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceProdGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceProdGrad<double>);

SF_REGISTER_OP(reduce_l1_grad)
    .SF_REDUCTION_GRAD_SLOTS
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceL1Grad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceL1Grad<double>);

SF_REGISTER_OP(reduce_l2_grad)
    .SF_REDUCTION_GRAD_SLOTS
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceL2Grad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceL2Grad<double>);

SF_REGISTER_OP(reduce_log_sum_exp_grad)
    .SF_REDUCTION_GRAD_SLOTS
    .Kernel(DeviceType::kCPU, kFloat32, &ReduceLogSumExpGrad<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ReduceLogSumExpGrad<double>);

#undef SF_REDUCTION_ATTRS
#undef SF_REDUCTION_GRAD_SLOTS

}  // namespace scopeflow
