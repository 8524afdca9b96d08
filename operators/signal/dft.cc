// dft: the discrete Fourier transform along one axis, as ONNX's DFT (17,
// 20) defines it (operators/signal/dft_plan.h has the forms: full, RFFT,
// IRFFT, forward or inverse). Input "X" is float32 or float64; optional
// int32/int64 scalar inputs "DftLength" (the transform's length) and
// "Axis" (ONNX 20's axis; when unbound, attribute "axis", ONNX 17's).
// Fed lengths and axes decide Out's shape, which Prepare then leaves
// unknown.
//
// The gradient is a transform of Out@GRAD the other way (dft_grad): the
// adjoint of sum_t X[t] e^{-i w k t} is sum_k G[k] e^{+i w k t}, so
//   full forward:  X@GRAD = the unnormalised inverse transform of G;
//   full inverse:  X@GRAD = the forward transform of G, divided by n;
//   RFFT:          the bins above n / 2 get no gradient (G is padded with
//                  zeros to n), and X being real, the real part;
//   IRFFT:         Out[t] = 1/n sum_k w_k Re(X[k] e^{+i w k t}) with w_k
//                  the one-sided weight (1 for bins 0 and n / 2, else 2),
//                  so X@GRAD[k] = w_k / n times the forward transform of G;
// cut or padded with zeros back to X's length (values the transform did
// not read get 0), real parts only where X is real.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/signal/dft_line.h"
#include "operators/signal/dft_plan.h"
#include "operators/signal/int_scalar.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace signal {
namespace {

// The plan of the op's X (dims known), reading the axis and the length
// from their inputs where bound. `axis` and `dft_length` are their values:
// nullopt for an unbound input (attribute, or default length).
absl::StatusOr<DftPlan> PlanFor(const Dims& x_dims, const std::string& x_var,
                                const Attributes& attrs,
                                std::optional<int64_t> axis,
                                std::optional<int64_t> dft_length) {
  return MakeDftPlan(x_dims, axis.value_or(attrs.Get<int32_t>("axis")),
                     dft_length, attrs.Get<bool>("inverse"),
                     attrs.Get<bool>("onesided"),
                     absl::StrFormat("input \"X\" (variable \"%s\", shape %s)",
                                     x_var, DimsToString(x_dims)));
}

absl::Status InferDft(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  const VarInfo& x = context.Input("X");
  // A value the shape depends on: bound but not yet visible.
  bool unknown_axis = false;
  bool unknown_length = false;
  std::optional<int64_t> axis;
  std::optional<int64_t> dft_length;
  if (context.HasInput("Axis")) {
    SF_ASSIGN_OR_RETURN(axis, IntScalarAtInference(context, "Axis"));
    unknown_axis = !axis.has_value();
  }
  if (context.HasInput("DftLength")) {
    SF_ASSIGN_OR_RETURN(dft_length, IntScalarAtInference(context, "DftLength"));
    unknown_length = !dft_length.has_value();
  }
  const bool irfft = context.attrs().Get<bool>("inverse") &&
                     context.attrs().Get<bool>("onesided");
  if (!x.has_dims) {
    context.SetOutput("Out", VarInfo{x.dtype, {}, false});
    return absl::OkStatus();
  }
  Dims out = x.dims;
  const bool known = std::none_of(x.dims.begin(), x.dims.end(),
                                  [](int64_t d) { return d < 0; });
  if (known && !unknown_axis && !unknown_length) {
    SF_ASSIGN_OR_RETURN(const DftPlan plan,
                        PlanFor(x.dims, context.InputName("X"), context.attrs(),
                                axis, dft_length));
    context.SetOutput("Out", 0, x.dtype, plan.OutDims(x.dims));
    return absl::OkStatus();
  }
  // Part of the shape waits for run time: the axis's dimension (or, the
  // axis unknown, every one but the last).
  SF_CHECK(out.size() >= 2,
           "input \"X\" (variable \"%s\", shape %s): "
           "expected rank 2 or more ([..., signal, ..., 1 or 2])",
           context.InputName("X"), DimsToString(x.dims));
  if (unknown_axis) {
    std::fill(out.begin(), out.end() - 1, -1);
  } else {
    const int rank = static_cast<int>(out.size());
    const int64_t a = axis.value_or(context.attrs().Get<int32_t>("axis"));
    if (a >= -rank && a <= rank - 2 && a != -1) out[a < 0 ? a + rank : a] = -1;
  }
  out.back() = irfft ? 1 : 2;
  context.SetOutput("Out", 0, x.dtype, out);
  return absl::OkStatus();
}

// The kernels' plan: from X's shape and the op's inputs.
absl::StatusOr<DftPlan> KernelPlan(const KernelContext& context) {
  std::optional<int64_t> axis;
  std::optional<int64_t> dft_length;
  if (context.HasInput("Axis")) {
    SF_ASSIGN_OR_RETURN(axis, IntScalarInput(context, "Axis"));
  }
  if (context.HasInput("DftLength")) {
    SF_ASSIGN_OR_RETURN(dft_length, IntScalarInput(context, "DftLength"));
  }
  return PlanFor(context.Input("X").dims(), context.InputName("X"),
                 context.attrs(), axis, dft_length);
}

// Offset of value j of line (o, i) in a tensor of `length` along the axis
// and `parts` values (1 or 2) per element.
int64_t At(const DftPlan& plan, int64_t o, int64_t i, int64_t j, int64_t length,
           int parts) {
  return ((o * length + j) * plan.inner + i) * parts;
}

template <typename T>
absl::Status DftKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const DftPlan plan, KernelPlan(context));
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_CHECK(out->dims() == plan.OutDims(x.dims()),
           "output \"Out\" (variable \"%s\") has shape %s: expected %s",
           context.OutputName("Out"), DimsToString(out->dims()),
           DimsToString(plan.OutDims(x.dims())));
  if (out->numel() == 0) return absl::OkStatus();
  const int in_parts = plan.complex_in ? 2 : 1;
  const int out_parts = plan.complex_out ? 2 : 1;
  const Twiddles roots(plan.n, plan.inverse ? +1 : -1);
  const double scale = plan.inverse ? 1.0 / static_cast<double>(plan.n) : 1.0;
  const T* src = x.data<T>();
  T* dst = out->data<T>();
  std::vector<Complex> line(plan.read_length);
  std::vector<Complex> spectrum(plan.out_length);
  for (int64_t o = 0; o < plan.outer; ++o) {
    for (int64_t i = 0; i < plan.inner; ++i) {
      for (int64_t t = 0; t < plan.read_length; ++t) {
        const T* v = src + At(plan, o, i, t, plan.in_length, in_parts);
        line[t] = Complex(v[0], in_parts == 2 ? v[1] : 0.0);
        // IRFFT: each bin stands for itself and its conjugate.
        if (plan.irfft()) line[t] *= OneSidedWeight(t, plan.n);
      }
      TransformLine(line, roots, absl::MakeSpan(spectrum));
      for (int64_t k = 0; k < plan.out_length; ++k) {
        T* v = dst + At(plan, o, i, k, plan.out_length, out_parts);
        v[0] = static_cast<T>(spectrum[k].real() * scale);
        if (out_parts == 2) v[1] = static_cast<T>(spectrum[k].imag() * scale);
      }
    }
  }
  return absl::OkStatus();
}

// X@GRAD: the adjoint transform of Out@GRAD (see the top of the file).
template <typename T>
absl::Status DftGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const DftPlan plan, KernelPlan(context));
  const Tensor& x = context.Input("X");
  const Tensor& g = context.Input("Out@GRAD");
  SF_CHECK(g.dims() == plan.OutDims(x.dims()),
           "input \"Out@GRAD\" (variable \"%s\") has shape %s: expected Out's "
           "shape %s",
           context.InputName("Out@GRAD"), DimsToString(g.dims()),
           DimsToString(plan.OutDims(x.dims())));
  Tensor* dx = context.Output("X@GRAD");
  const int in_parts = plan.complex_in ? 2 : 1;
  const int out_parts = plan.complex_out ? 2 : 1;
  T* dst = dx->data<T>();
  std::fill(dst, dst + dx->numel(), T(0));
  if (dx->numel() == 0 || g.numel() == 0) return absl::OkStatus();
  const Twiddles roots(plan.n, plan.inverse ? -1 : +1);
  const double scale = plan.inverse ? 1.0 / static_cast<double>(plan.n) : 1.0;
  const T* src = g.data<T>();
  std::vector<Complex> line(plan.out_length);
  std::vector<Complex> adjoint(plan.read_length);
  for (int64_t o = 0; o < plan.outer; ++o) {
    for (int64_t i = 0; i < plan.inner; ++i) {
      for (int64_t k = 0; k < plan.out_length; ++k) {
        const T* v = src + At(plan, o, i, k, plan.out_length, out_parts);
        line[k] = Complex(v[0], out_parts == 2 ? v[1] : 0.0);
      }
      TransformLine(line, roots, absl::MakeSpan(adjoint));
      for (int64_t t = 0; t < plan.read_length; ++t) {
        const double weight =
            scale * (plan.irfft() ? OneSidedWeight(t, plan.n) : 1.0);
        T* v = dst + At(plan, o, i, t, plan.in_length, in_parts);
        v[0] = static_cast<T>(adjoint[t].real() * weight);
        if (in_parts == 2) v[1] = static_cast<T>(adjoint[t].imag() * weight);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status InferDftGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Out@GRAD"));
  SF_RETURN_IF_ERROR(CheckIntScalarInput(context, "Axis"));
  SF_RETURN_IF_ERROR(CheckIntScalarInput(context, "DftLength"));
  if (context.HasOutput("X@GRAD")) {
    context.SetOutput("X@GRAD", context.Input("X"));
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(dft)
    .Input("X")
    .Input("DftLength", /*optional=*/true)
    .Input("Axis", /*optional=*/true)
    .Output("Out")
    .Attr("axis", AttrType::kInt, AttrValue(1))
    .Attr("inverse", AttrType::kBool, AttrValue(false))
    .Attr("onesided", AttrType::kBool, AttrValue(false))
    .Infer(InferDft)
    .Grad(GradSpec("dft_grad")
              .ReadInput("X")
              .ReadInput("DftLength")
              .ReadInput("Axis")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &DftKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DftKernel<double>);

SF_REGISTER_OP(dft_grad)
    .Input("X")
    .Input("DftLength", /*optional=*/true)
    .Input("Axis", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt, AttrValue(1))
    .Attr("inverse", AttrType::kBool, AttrValue(false))
    .Attr("onesided", AttrType::kBool, AttrValue(false))
    .Infer(InferDftGrad)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &DftGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DftGradKernel<double>);

}  // namespace signal
}  // namespace scopeflow
