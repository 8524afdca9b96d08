// window: the cosine-sum windows of signal processing, as ONNX's
// HannWindow, HammingWindow and BlackmanWindow (17) define them. Input
// "Size" is an int32 or int64 scalar N >= 0; output "Out" is the 1-D window
// of N elements, of dtype attribute "out_dtype" (float32 or float64):
//
//   hann:     0.5 - 0.5 cos(2 pi n / M)
//   hamming:  25/46 - 21/46 cos(2 pi n / M)
//   blackman: 0.42 - 0.5 cos(2 pi n / M) + 0.08 cos(4 pi n / M)
//
// for n = 0 .. N - 1, with M = N when attribute "periodic" is true (the
// default, the window for spectral analysis: one period of a periodic
// function) and M = N - 1 when false (a window symmetric about its middle,
// for filter design). ONNX defines M = 0 for a symmetric window of one
// element, 0 / 0: the window is then NaN, as ONNX's own reference gives it.
//
// Its length depends on Size's value, so Prepare leaves it unknown unless
// Size is a constant. No gradient: the output depends on an integer only.
#include <cmath>
#include <cstdint>
#include <string>
#include <variant>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kSizeDtypes[] = {kInt32, kInt64};

absl::Status CheckOutDtype(const AttrValue& value) {
  const DataType dtype = static_cast<DataType>(std::get<int32_t>(value));
  SF_CHECK(dtype == kFloat32 || dtype == kFloat64,
           "must be float32 (%d) or float64 (%d); got %d",
           static_cast<int>(kFloat32), static_cast<int>(kFloat64),
           static_cast<int>(dtype));
  return absl::OkStatus();
}

// The coefficients a0, a1, a2 of a0 - a1 cos(2 pi n / M) + a2 cos(4 pi n / M).
struct CosineSum {
  double a0;
  double a1;
  double a2;
};

CosineSum CoefficientsOf(const std::string& kind) {
  if (kind == "hann") return {0.5, 0.5, 0.0};
  if (kind == "hamming") return {25.0 / 46.0, 21.0 / 46.0, 0.0};
  return {0.42, 0.5, 0.08};  // blackman
}

// The value of Size as an int64, checked to be >= 0; `name` is its
// variable, for errors.
absl::StatusOr<int64_t> WindowLength(const Tensor& size, const std::string& name) {
  SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(size));
  const int64_t n = host.dtype() == kInt32 ? *host.data<int32_t>()
                                           : *host.data<int64_t>();
  SF_CHECK(n >= 0,
           "input \"Size\" (variable \"%s\") = %d: expected a length >= 0",
           name, n);
  return n;
}

absl::Status InferWindow(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "Size", kSizeDtypes));
  SF_RETURN_IF_ERROR(
      CheckScalarInput(context, "Size", context.Input("Size").dtype));
  const DataType out_dtype =
      static_cast<DataType>(context.attrs().Get<int32_t>("out_dtype"));
  int64_t length = -1;
  if (const Tensor* size = context.InputValue("Size"); size != nullptr) {
    SF_ASSIGN_OR_RETURN(length, WindowLength(*size, context.InputName("Size")));
  }
  context.SetOutput("Out", 0, out_dtype, {length});
  return absl::OkStatus();
}

template <typename T>
void FillWindow(const CosineSum& c, int64_t n, bool periodic, T* out) {
  const double m = static_cast<double>(periodic ? n : n - 1);
  constexpr double kTwoPi = 2.0 * M_PI;
  for (int64_t i = 0; i < n; ++i) {
    const double phase = kTwoPi * static_cast<double>(i) / m;
    out[i] = static_cast<T>(c.a0 - c.a1 * std::cos(phase) +
                            c.a2 * std::cos(2.0 * phase));
  }
}

absl::Status WindowKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(
      const int64_t n,
      WindowLength(context.Input("Size"), context.InputName("Size")));
  Tensor* out = context.Output("Out");
  SF_CHECK(out->numel() == n,
           "output \"Out\" (variable \"%s\") has %d elements: expected %d",
           context.OutputName("Out"), out->numel(), n);
  const CosineSum c =
      CoefficientsOf(context.attrs().Get<std::string>("window"));
  const bool periodic = context.attrs().Get<bool>("periodic");
  if (out->dtype() == kFloat64) {
    FillWindow(c, n, periodic, out->data<double>());
  } else {
    FillWindow(c, n, periodic, out->data<float>());
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(window)
    .Input("Size")
    .Output("Out")
    .Attr("window", AttrType::kString, OneOf({"hann", "hamming", "blackman"}))
    .Attr("periodic", AttrType::kBool, AttrValue(true))
    .Attr("out_dtype", AttrType::kInt, AttrValue(static_cast<int32_t>(kFloat32)),
          CheckOutDtype)
    .Infer(InferWindow)
    .Kernel(DeviceType::kCPU, kInt32, &WindowKernel)
    .Kernel(DeviceType::kCPU, kInt64, &WindowKernel);

}  // namespace scopeflow
