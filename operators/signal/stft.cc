// stft: the short-time Fourier transform, as ONNX's STFT (17) defines it.
// Input "Signal" is [batch, length, 1] (real) or [batch, length, 2]
// (complex), float32 or float64; "FrameStep" an int32/int64 scalar >= 1;
// optional "Window" a 1-D tensor of Signal's dtype, and optional
// "FrameLength" an int32/int64 scalar, the transform's length (default:
// the window's length, or without a window the signal's). Frame f is
// Signal[f * step + t] * Window[t] for t < frame_length (window of ones
// when absent), for the 1 + (length - frame_length) / step frames that
// fit; each is transformed as the dft op does. Out is [batch, frames,
// bins, 2], bins = frame_length / 2 + 1 when attribute "onesided" (the
// default, real signals only) and frame_length otherwise.
//
// Gradient (stft_grad): with a[t] the adjoint transform of a frame's
// Out@GRAD (sum_k G[k] e^{+2 pi i k t / n}, bins past the one-sided ones
// being 0), Signal@GRAD[f * step + t] gathers a[t] * Window[t] over the
// frames holding it (the real part for a real signal) and Window@GRAD[t]
// gathers Re(a[t] conj(Signal[f * step + t])) over the frames.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/signal/dft_line.h"
#include "operators/signal/int_scalar.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace signal {
namespace {

struct StftPlan {
  int64_t batch = 0;
  int64_t length = 0;  // of the signal
  bool complex_in = false;
  int64_t step = 1;
  int64_t frame_length = 0;
  int64_t frames = 0;
  int64_t bins = 0;

  Dims OutDims() const { return {batch, frames, bins, 2}; }
};

// The plan for Signal of `signal_dims`, the step, the frame length (nullopt:
// from the window or the signal) and the window's length (nullopt: none).
// `signal` describes Signal for errors.
absl::StatusOr<StftPlan> MakeStftPlan(const Dims& signal_dims, int64_t step,
                                      std::optional<int64_t> frame_length,
                                      std::optional<int64_t> window_length,
                                      bool onesided,
                                      const std::string& signal) {
  SF_CHECK(
      signal_dims.size() == 3 && (signal_dims[2] == 1 || signal_dims[2] == 2),
      "%s: expected [batch, length, 1] (real) or [batch, length, 2] "
      "(complex)",
      signal);
  StftPlan plan;
  plan.batch = signal_dims[0];
  plan.length = signal_dims[1];
  plan.complex_in = signal_dims[2] == 2;
  SF_CHECK(!(onesided && plan.complex_in),
           "%s is complex: a one-sided transform takes a real signal", signal);
  SF_CHECK(step >= 1, "frame_step = %d: expected a step >= 1", step);
  plan.step = step;
  plan.frame_length =
      frame_length.value_or(window_length.value_or(plan.length));
  SF_CHECK(plan.frame_length >= 1, "frame_length = %d: expected a length >= 1",
           plan.frame_length);
  SF_CHECK(!window_length.has_value() || *window_length == plan.frame_length,
           "the window has %d values: expected frame_length = %d",
           window_length.value_or(0), plan.frame_length);
  SF_CHECK(plan.frame_length <= plan.length,
           "frame_length = %d is longer than %s: no frame fits",
           plan.frame_length, signal);
  plan.frames = 1 + (plan.length - plan.frame_length) / plan.step;
  plan.bins = onesided ? plan.frame_length / 2 + 1 : plan.frame_length;
  return plan;
}

std::string DescribeSignal(const std::string& var, const Dims& dims) {
  return absl::StrFormat("input \"Signal\" (variable \"%s\", shape %s)", var,
                         DimsToString(dims));
}

absl::Status InferStft(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Signal"));
  SF_RETURN_IF_ERROR(CheckRank(context, "Signal", 3, 3));
  const VarInfo& signal = context.Input("Signal");
  SF_ASSIGN_OR_RETURN(const std::optional<int64_t> step,
                      IntScalarAtInference(context, "FrameStep"));
  std::optional<int64_t> frame_length;
  bool known = step.has_value();
  if (context.HasInput("FrameLength")) {
    SF_ASSIGN_OR_RETURN(frame_length,
                        IntScalarAtInference(context, "FrameLength"));
    known = known && frame_length.has_value();
  }
  std::optional<int64_t> window_length;
  if (context.HasInput("Window")) {
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "Signal", "Window"));
    SF_RETURN_IF_ERROR(CheckRank(context, "Window", 1, 1));
    const VarInfo& window = context.Input("Window");
    known = known && window.has_dims && window.dims[0] >= 0;
    if (window.has_dims) window_length = window.dims[0];
  }
  const bool onesided = context.attrs().Get<bool>("onesided");
  known = known && signal.has_dims &&
          std::none_of(signal.dims.begin(), signal.dims.end(),
                       [](int64_t d) { return d < 0; });
  if (known) {
    SF_ASSIGN_OR_RETURN(
        const StftPlan plan,
        MakeStftPlan(signal.dims, *step, frame_length, window_length, onesided,
                     DescribeSignal(context.InputName("Signal"), signal.dims)));
    context.SetOutput("Out", 0, signal.dtype, plan.OutDims());
    return absl::OkStatus();
  }
  const int64_t batch = signal.has_dims ? signal.dims[0] : -1;
  context.SetOutput("Out", 0, signal.dtype, {batch, -1, -1, 2});
  return absl::OkStatus();
}

absl::StatusOr<StftPlan> KernelStftPlan(const KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t step, IntScalarInput(context, "FrameStep"));
  std::optional<int64_t> frame_length;
  if (context.HasInput("FrameLength")) {
    SF_ASSIGN_OR_RETURN(frame_length, IntScalarInput(context, "FrameLength"));
  }
  std::optional<int64_t> window_length;
  if (context.HasInput("Window")) {
    const Tensor& window = context.Input("Window");
    SF_CHECK(window.rank() == 1,
             "input \"Window\" (variable \"%s\") has shape %s: expected 1-D",
             context.InputName("Window"), DimsToString(window.dims()));
    window_length = window.dim(0);
  }
  const Tensor& signal = context.Input("Signal");
  return MakeStftPlan(
      signal.dims(), step, frame_length, window_length,
      context.attrs().Get<bool>("onesided"),
      DescribeSignal(context.InputName("Signal"), signal.dims()));
}

// The window as doubles: Window's values, or ones.
template <typename T>
std::vector<double> WindowOf(const KernelContext& context, int64_t length) {
  std::vector<double> window(length, 1.0);
  if (context.HasInput("Window")) {
    const T* w = context.Input("Window").data<T>();
    std::copy(w, w + length, window.begin());
  }
  return window;
}

template <typename T>
absl::Status StftKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const StftPlan plan, KernelStftPlan(context));
  Tensor* out = context.Output("Out");
  SF_CHECK(out->dims() == plan.OutDims(),
           "output \"Out\" (variable \"%s\") has shape %s: expected %s",
           context.OutputName("Out"), DimsToString(out->dims()),
           DimsToString(plan.OutDims()));
  if (out->numel() == 0) return absl::OkStatus();
  const std::vector<double> window = WindowOf<T>(context, plan.frame_length);
  const int parts = plan.complex_in ? 2 : 1;
  const T* src = context.Input("Signal").data<T>();
  T* dst = out->data<T>();
  const Twiddles roots(plan.frame_length, -1);
  std::vector<Complex> frame(plan.frame_length);
  std::vector<Complex> spectrum(plan.bins);
  for (int64_t b = 0; b < plan.batch; ++b) {
    for (int64_t f = 0; f < plan.frames; ++f) {
      const T* s = src + (b * plan.length + f * plan.step) * parts;
      for (int64_t t = 0; t < plan.frame_length; ++t) {
        frame[t] = Complex(s[t * parts], parts == 2 ? s[t * parts + 1] : 0.0) *
                   window[t];
      }
      TransformLine(frame, roots, absl::MakeSpan(spectrum));
      T* o = dst + (b * plan.frames + f) * plan.bins * 2;
      for (int64_t k = 0; k < plan.bins; ++k) {
        o[2 * k] = static_cast<T>(spectrum[k].real());
        o[2 * k + 1] = static_cast<T>(spectrum[k].imag());
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status StftGradKernel(KernelContext& context) {
  const bool want_signal = context.HasOutput("Signal@GRAD");
  const bool want_window =
      context.HasOutput("Window@GRAD") && context.HasInput("Window");
  if (!want_signal && !want_window) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const StftPlan plan, KernelStftPlan(context));
  const Tensor& g = context.Input("Out@GRAD");
  SF_CHECK(g.dims() == plan.OutDims(),
           "input \"Out@GRAD\" (variable \"%s\") has shape %s: expected Out's "
           "shape %s",
           context.InputName("Out@GRAD"), DimsToString(g.dims()),
           DimsToString(plan.OutDims()));
  const std::vector<double> window = WindowOf<T>(context, plan.frame_length);
  const int parts = plan.complex_in ? 2 : 1;
  const T* signal = context.Input("Signal").data<T>();
  // Sums in double, stored once at the end.
  std::vector<double> signal_grad(want_signal ? plan.batch * plan.length * parts
                                              : 0);
  std::vector<double> window_grad(want_window ? plan.frame_length : 0);
  const Twiddles roots(plan.frame_length, +1);
  std::vector<Complex> bins(plan.bins);
  std::vector<Complex> adjoint(plan.frame_length);
  const T* src = g.data<T>();
  for (int64_t b = 0; b < plan.batch; ++b) {
    for (int64_t f = 0; f < plan.frames; ++f) {
      const T* gf = src + (b * plan.frames + f) * plan.bins * 2;
      for (int64_t k = 0; k < plan.bins; ++k) {
        bins[k] = Complex(gf[2 * k], gf[2 * k + 1]);
      }
      TransformLine(bins, roots, absl::MakeSpan(adjoint));
      const int64_t first = (b * plan.length + f * plan.step) * parts;
      for (int64_t t = 0; t < plan.frame_length; ++t) {
        const int64_t at = first + t * parts;
        if (want_signal) {
          signal_grad[at] += adjoint[t].real() * window[t];
          if (parts == 2) signal_grad[at + 1] += adjoint[t].imag() * window[t];
        }
        if (want_window) {
          window_grad[t] +=
              adjoint[t].real() * signal[at] +
              (parts == 2 ? adjoint[t].imag() * signal[at + 1] : 0.0);
        }
      }
    }
  }
  if (want_signal) {
    T* dst = context.Output("Signal@GRAD")->data<T>();
    std::transform(signal_grad.begin(), signal_grad.end(), dst,
                   [](double v) { return static_cast<T>(v); });
  }
  if (want_window) {
    T* dst = context.Output("Window@GRAD")->data<T>();
    std::transform(window_grad.begin(), window_grad.end(), dst,
                   [](double v) { return static_cast<T>(v); });
  }
  return absl::OkStatus();
}

absl::Status InferStftGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Signal"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "Signal", "Out@GRAD"));
  return GradsLikeInputs({"Signal", "Window"})(context);
}

}  // namespace

SF_REGISTER_OP(stft)
    .Input("Signal")
    .Input("FrameStep")
    .Input("Window", /*optional=*/true)
    .Input("FrameLength", /*optional=*/true)
    .Output("Out")
    .Attr("onesided", AttrType::kBool, AttrValue(true))
    .Infer(InferStft)
    .Grad(GradSpec("stft_grad")
              .ReadInput("Signal")
              .ReadInput("FrameStep")
              .ReadInput("Window")
              .ReadInput("FrameLength")
              .ReadOutputGrad("Out")
              .WriteInputGrad("Signal")
              .WriteInputGrad("Window"))
    .KernelDtypeFromInput("Signal")
    .Kernel(DeviceType::kCPU, kFloat32, &StftKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &StftKernel<double>);

SF_REGISTER_OP(stft_grad)
    .Input("Signal")
    .Input("FrameStep")
    .Input("Window", /*optional=*/true)
    .Input("FrameLength", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("Signal@GRAD", /*optional=*/true)
    .Output("Window@GRAD", /*optional=*/true)
    .Attr("onesided", AttrType::kBool, AttrValue(true))
    .Infer(InferStftGrad)
    .KernelDtypeFromInput("Signal")
    .Kernel(DeviceType::kCPU, kFloat32, &StftGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &StftGradKernel<double>);

}  // namespace signal
}  // namespace scopeflow
