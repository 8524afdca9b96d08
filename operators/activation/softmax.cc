// softmax and log_softmax of input "X" along attribute "axis" (default -1,
// the last), output "Out" of X's dtype and shape, for float32 and float64.
// Each slice along the axis is shifted by its maximum before exp, so large
// inputs do not overflow.
//
// Gradients (float32, float64): softmax_grad and log_softmax_grad read Out
// and Out@GRAD, as in Paddle (the Jacobian needs only the output), and write
// the optional X@GRAD along the same "axis".
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/activation/grad_util.h"
#include "operators/activation/softmax_math.h"
#include "operators/common.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status InferSoftmax(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  const VarInfo& x = context.Input("X");
  if (x.has_dims) SF_RETURN_IF_ERROR(InputAxis(context, "X").status());
  context.SetOutput("Out", x);
  return absl::OkStatus();
}

// exp(x[i] - shift[i]) summed into sum[i], and stored to y[i] if kStore.
// Blocked like softmax_math's loops so that the float exp vectorizes.
template <bool kStore, typename T>
void ExpShiftedEach(const T* x, const T* shift, T* y, T* sum, int64_t n) {
  constexpr int kBlock = softmax_math::kBlock;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    T block[kBlock];
    for (int j = 0; j < kBlock; ++j) {
      block[j] = softmax_math::ClampExpArg(x[i + j] - shift[i + j]);
    }
    for (int j = 0; j < kBlock; ++j) {
      block[j] = softmax_math::ExpOfClamped(block[j]);
    }
    for (int j = 0; j < kBlock; ++j) {
      if constexpr (kStore) y[i + j] = block[j];
      sum[i + j] += block[j];
    }
  }
  for (; i < n; ++i) {
    const T e =
        softmax_math::ExpOfClamped(softmax_math::ClampExpArg(x[i] - shift[i]));
    if constexpr (kStore) y[i] = e;
    sum[i] += e;
  }
}

// Calls fn(part, offset) for ranges of `split`'s outer index spread over
// threads: `part` is split with `outer` narrowed to the range, `offset` the
// range's first element. Each slice of the softmax axis lies within one
// range, and ranges write disjoint elements.
template <typename Fn>
void ForEachOuterRange(const AxisSplit& split, Fn fn) {
  const int64_t per_outer = split.size * split.inner;
  ParallelFor(split.outer, (kElementsWorthAThread + per_outer - 1) / per_outer,
              [&](int64_t begin, int64_t end) {
                AxisSplit part = split;
                part.outer = end - begin;
                fn(part, begin * per_outer);
              });
}

// (Log-)softmax along the middle axis of x seen as [outer, size, inner] with
// inner > 1: the slices are strided, so the loops run along `inner`, which
// is contiguous, keeping one maximum and one sum per slice.
template <bool kLog, typename T>
void SoftmaxStrided(const T* x, T* y, const AxisSplit& split) {
  const int64_t size = split.size;
  const int64_t inner = split.inner;
  std::vector<T> max(inner);
  std::vector<T> sum(inner);
  for (int64_t o = 0; o < split.outer; ++o) {
    const T* in = x + o * size * inner;
    T* out = y + o * size * inner;
    std::copy(in, in + inner, max.begin());
    for (int64_t k = 1; k < size; ++k) {
      const T* row = in + k * inner;
      for (int64_t i = 0; i < inner; ++i) {
        max[i] = row[i] > max[i] ? row[i] : max[i];
      }
    }
    std::fill(sum.begin(), sum.end(), T(0));
    for (int64_t k = 0; k < size; ++k) {
      // log_softmax reads x again below, so it must not overwrite it here.
      ExpShiftedEach<!kLog>(in + k * inner, max.data(), out + k * inner,
                            sum.data(), inner);
    }
    if constexpr (kLog) {
      for (int64_t i = 0; i < inner; ++i) sum[i] = std::log(sum[i]);
      for (int64_t k = 0; k < size; ++k) {
        const T* row = in + k * inner;
        T* out_row = out + k * inner;
        for (int64_t i = 0; i < inner; ++i) {
          out_row[i] = (row[i] - max[i]) - sum[i];
        }
      }
    } else {
      for (int64_t i = 0; i < inner; ++i) sum[i] = T(1) / sum[i];
      for (int64_t k = 0; k < size; ++k) {
        T* out_row = out + k * inner;
        for (int64_t i = 0; i < inner; ++i) out_row[i] *= sum[i];
      }
    }
  }
}

template <typename T, bool kLog>
absl::Status SoftmaxKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  T* out = context.Output("Out")->data<T>();
  // Inference has checked the axis against this rank.
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxis(context.attrs().Get<int64_t>("axis"), x.rank()));
  if (x.numel() == 0) return absl::OkStatus();
  ForEachOuterRange(SplitAtAxis(x.dims(), axis), [&](const AxisSplit& part,
                                                     int64_t offset) {
    const T* in = x.data<T>() + offset;
    if (part.inner == 1) {
      // The common case: softmax over the last axis, contiguous rows.
      if constexpr (kLog) {
        softmax_math::LogSoftmaxRows(in, out + offset, part.outer, part.size);
      } else {
        softmax_math::SoftmaxRows(in, out + offset, part.outer, part.size);
      }
    } else {
      SoftmaxStrided<kLog>(in, out + offset, part);
    }
  });
  return absl::OkStatus();
}

absl::Status InferSoftmaxGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Out"));
  SF_RETURN_IF_ERROR(activation::CheckSameInfo(context, "Out", "Out@GRAD"));
  const VarInfo& out = context.Input("Out");
  if (out.has_dims) SF_RETURN_IF_ERROR(InputAxis(context, "Out").status());
  if (context.HasOutput("X@GRAD")) context.SetOutput("X@GRAD", out);
  return absl::OkStatus();
}

// The gradients along the middle axis of [outer, size, inner] with
// inner > 1, looping along the contiguous `inner` with one accumulator per
// slice, as SoftmaxStrided does.
// softmax: dx = y * (g - sum_k(g * y)).
template <typename T>
void SoftmaxGradStrided(const T* y, const T* g, T* dx, const AxisSplit& split) {
  const int64_t size = split.size;
  const int64_t inner = split.inner;
  std::vector<T> dot(inner);
  for (int64_t o = 0; o < split.outer; ++o) {
    const int64_t base = o * size * inner;
    std::fill(dot.begin(), dot.end(), T(0));
    for (int64_t k = 0; k < size; ++k) {
      const T* y_row = y + base + k * inner;
      const T* g_row = g + base + k * inner;
      for (int64_t i = 0; i < inner; ++i) dot[i] += g_row[i] * y_row[i];
    }
    for (int64_t k = 0; k < size; ++k) {
      const T* y_row = y + base + k * inner;
      const T* g_row = g + base + k * inner;
      T* dx_row = dx + base + k * inner;
      for (int64_t i = 0; i < inner; ++i) {
        dx_row[i] = y_row[i] * (g_row[i] - dot[i]);
      }
    }
  }
}

// dx[i] = g[i] - exp(out[i]) * sum[i], exp blocked as in ExpShiftedEach.
template <typename T>
void SubtractScaledExpEach(const T* out, const T* g, const T* sum, T* dx,
                           int64_t n) {
  constexpr int kBlock = softmax_math::kBlock;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    T block[kBlock];
    for (int j = 0; j < kBlock; ++j) {
      block[j] = softmax_math::ClampExpArg(out[i + j]);
    }
    for (int j = 0; j < kBlock; ++j) {
      block[j] = softmax_math::ExpOfClamped(block[j]);
    }
    for (int j = 0; j < kBlock; ++j) {
      dx[i + j] = g[i + j] - block[j] * sum[i + j];
    }
  }
  for (; i < n; ++i) dx[i] = g[i] - std::exp(out[i]) * sum[i];
}

// log_softmax: dx = g - exp(out) * sum_k(g).
template <typename T>
void LogSoftmaxGradStrided(const T* out, const T* g, T* dx,
                           const AxisSplit& split) {
  const int64_t size = split.size;
  const int64_t inner = split.inner;
  std::vector<T> sum(inner);
  for (int64_t o = 0; o < split.outer; ++o) {
    const int64_t base = o * size * inner;
    std::fill(sum.begin(), sum.end(), T(0));
    for (int64_t k = 0; k < size; ++k) {
      const T* g_row = g + base + k * inner;
      for (int64_t i = 0; i < inner; ++i) sum[i] += g_row[i];
    }
    for (int64_t k = 0; k < size; ++k) {
      const int64_t row = base + k * inner;
      SubtractScaledExpEach(out + row, g + row, sum.data(), dx + row, inner);
    }
  }
}

template <typename T, bool kLog>
absl::Status SoftmaxGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& out = context.Input("Out");
  const T* y = out.data<T>();
  const T* g = context.Input("Out@GRAD").data<T>();
  T* dx = context.Output("X@GRAD")->data<T>();
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxis(context.attrs().Get<int64_t>("axis"), out.rank()));
  if (out.numel() == 0) return absl::OkStatus();
  ForEachOuterRange(SplitAtAxis(out.dims(), axis), [&](const AxisSplit& part,
                                                       int64_t offset) {
    if (part.inner == 1) {
      if constexpr (kLog) {
        softmax_math::LogSoftmaxGradRows(y + offset, g + offset, dx + offset,
                                         part.outer, part.size);
      } else {
        softmax_math::SoftmaxGradRows(y + offset, g + offset, dx + offset,
                                      part.outer, part.size);
      }
    } else if constexpr (kLog) {
      LogSoftmaxGradStrided(y + offset, g + offset, dx + offset, part);
    } else {
      SoftmaxGradStrided(y + offset, g + offset, dx + offset, part);
    }
  });
  return absl::OkStatus();
}

GradSpec SoftmaxGradSpec(std::string grad_type) {
  return GradSpec(std::move(grad_type))
      .ReadOutput("Out")
      .ReadOutputGrad("Out")
      .WriteInputGrad("X");
}

}  // namespace

SF_REGISTER_OP(softmax)
    .Input("X")
    .Output("Out")
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{-1}))
    .Infer(InferSoftmax)
    .Grad(SoftmaxGradSpec("softmax_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &SoftmaxKernel<float, false>)
    .Kernel(DeviceType::kCPU, kFloat64, &SoftmaxKernel<double, false>);

SF_REGISTER_OP(log_softmax)
    .Input("X")
    .Output("Out")
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{-1}))
    .Infer(InferSoftmax)
    .Grad(SoftmaxGradSpec("log_softmax_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &SoftmaxKernel<float, true>)
    .Kernel(DeviceType::kCPU, kFloat64, &SoftmaxKernel<double, true>);

// Gets the forward's "axis" (the gradient maker copies the attributes).
SF_REGISTER_OP(softmax_grad)
    .Input("Out")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{-1}))
    .Infer(InferSoftmaxGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &SoftmaxGradKernel<float, false>)
    .Kernel(DeviceType::kCPU, kFloat64, &SoftmaxGradKernel<double, false>);

SF_REGISTER_OP(log_softmax_grad)
    .Input("Out")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{-1}))
    .Infer(InferSoftmaxGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &SoftmaxGradKernel<float, true>)
    .Kernel(DeviceType::kCPU, kFloat64, &SoftmaxGradKernel<double, true>);

}  // namespace scopeflow
