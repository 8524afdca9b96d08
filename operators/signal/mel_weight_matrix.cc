// mel_weight_matrix: the matrix that maps a one-sided spectrum's bins to mel
// bands (triangular filters), as ONNX's MelWeightMatrix (17) computes it.
// Inputs: "NumMelBins", "DftLength" and "SampleRate", int32/int64
// scalars, and "LowerEdgeHertz" and "UpperEdgeHertz", float32/float64
// scalars. Out is [DftLength / 2 + 1, NumMelBins] of dtype "out_dtype"
// (float32 or float64).
//
// As ONNX's reference: NumMelBins + 2 points equally spaced in mels
// (mel(f) = 2595 log10(1 + f / 700)) from the lower edge in steps of
// (mel(upper) - mel(lower)) / (NumMelBins + 2), each back to hertz and to
// the spectrum bin floor((DftLength + 1) f / SampleRate). Band i rises
// linearly from 0 at point i to 1 at point i + 1 and falls to 0 at point
// i + 2 (a band whose rise is empty is 1 at its centre).
//
// The shape follows the inputs' values, so Prepare leaves it unknown
// unless they are constants. No gradient: Out depends on the edges only
// through the bins' floor, piecewise constant.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/signal/int_scalar.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace signal {
namespace {

constexpr DataType kHertzDtypes[] = {kFloat32, kFloat64};

absl::Status CheckOutDtype(const AttrValue& value) {
  const DataType dtype = static_cast<DataType>(std::get<int32_t>(value));
  SF_CHECK(dtype == kFloat32 || dtype == kFloat64,
           "must be float32 (%d) or float64 (%d); got %d",
           static_cast<int>(kFloat32), static_cast<int>(kFloat64),
           static_cast<int>(dtype));
  return absl::OkStatus();
}

struct MelInputs {
  int64_t mel_bins = 0;
  int64_t dft_length = 0;
  int64_t sample_rate = 0;
  double lower_hertz = 0;
  double upper_hertz = 0;
};

double HertzToMel(double hertz) {
  return 2595.0 * std::log10(1.0 + hertz / 700.0);
}

double MelToHertz(double mel) {
  return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
}

absl::Status CheckMelInputs(const MelInputs& in) {
  SF_CHECK(in.mel_bins >= 1, "num_mel_bins = %d: expected 1 or more",
           in.mel_bins);
  SF_CHECK(in.dft_length >= 1, "dft_length = %d: expected 1 or more",
           in.dft_length);
  SF_CHECK(in.sample_rate >= 1, "sample_rate = %d: expected 1 or more",
           in.sample_rate);
  SF_CHECK(in.lower_hertz >= 0 && in.lower_hertz <= in.upper_hertz,
           "edges [%g, %g] Hz: expected 0 <= lower_edge_hertz <= "
           "upper_edge_hertz",
           in.lower_hertz, in.upper_hertz);
  return absl::OkStatus();
}

// The spectrum bin of each of the NumMelBins + 2 points.
absl::StatusOr<std::vector<int64_t>> PointBins(const MelInputs& in) {
  const int64_t points = in.mel_bins + 2;
  const int64_t spectrum_bins = in.dft_length / 2 + 1;
  const double low_mel = HertzToMel(in.lower_hertz);
  const double step =
      (HertzToMel(in.upper_hertz) - low_mel) / static_cast<double>(points);
  std::vector<int64_t> bins(points);
  for (int64_t p = 0; p < points; ++p) {
    const double hertz = MelToHertz(static_cast<double>(p) * step + low_mel);
    bins[p] = static_cast<int64_t>(
        std::floor(static_cast<double>(in.dft_length + 1) * hertz /
                   static_cast<double>(in.sample_rate)));
    SF_CHECK(bins[p] >= 0 && bins[p] < spectrum_bins,
             "mel point %d (%g Hz) falls in spectrum bin %d, outside the %d "
             "bins of dft_length %d at sample_rate %d: expected "
             "upper_edge_hertz <= sample_rate / 2",
             p, hertz, bins[p], spectrum_bins, in.dft_length, in.sample_rate);
  }
  return bins;
}

absl::StatusOr<double> FloatScalar(const Tensor& tensor,
                                   const std::string& slot,
                                   const std::string& var) {
  SF_CHECK((tensor.dtype() == kFloat32 || tensor.dtype() == kFloat64) &&
               tensor.numel() == 1 && tensor.rank() <= 1,
           "input \"%s\" (variable \"%s\") is %s: expected one float32 or "
           "float64 element",
           slot, var, tensor.DebugString());
  SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(tensor));
  return host.dtype() == kFloat32 ? *host.data<float>() : *host.data<double>();
}

absl::StatusOr<MelInputs> KernelInputs(const KernelContext& context) {
  MelInputs in;
  SF_ASSIGN_OR_RETURN(in.mel_bins, IntScalarInput(context, "NumMelBins"));
  SF_ASSIGN_OR_RETURN(in.dft_length, IntScalarInput(context, "DftLength"));
  SF_ASSIGN_OR_RETURN(in.sample_rate, IntScalarInput(context, "SampleRate"));
  SF_ASSIGN_OR_RETURN(
      in.lower_hertz,
      FloatScalar(context.Input("LowerEdgeHertz"), "LowerEdgeHertz",
                  context.InputName("LowerEdgeHertz")));
  SF_ASSIGN_OR_RETURN(
      in.upper_hertz,
      FloatScalar(context.Input("UpperEdgeHertz"), "UpperEdgeHertz",
                  context.InputName("UpperEdgeHertz")));
  SF_RETURN_IF_ERROR(CheckMelInputs(in));
  return in;
}

absl::Status InferMelWeightMatrix(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const std::optional<int64_t> mel_bins,
                      IntScalarAtInference(context, "NumMelBins"));
  SF_ASSIGN_OR_RETURN(const std::optional<int64_t> dft_length,
                      IntScalarAtInference(context, "DftLength"));
  SF_RETURN_IF_ERROR(CheckIntScalarInput(context, "SampleRate"));
  for (const char* slot : {"LowerEdgeHertz", "UpperEdgeHertz"}) {
    SF_RETURN_IF_ERROR(CheckDtypeIn(context, slot, kHertzDtypes));
    SF_RETURN_IF_ERROR(
        CheckScalarInput(context, slot, context.Input(slot).dtype));
  }
  const DataType out_dtype =
      static_cast<DataType>(context.attrs().Get<int32_t>("out_dtype"));
  context.SetOutput("Out", 0, out_dtype,
                    {dft_length.has_value() ? *dft_length / 2 + 1 : -1,
                     mel_bins.value_or(-1)});
  return absl::OkStatus();
}

template <typename T>
void FillBands(const std::vector<int64_t>& bins, int64_t mel_bins, T* out) {
  auto at = [&](int64_t row, int64_t band) -> T& {
    return out[row * mel_bins + band];
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t low = bins[i];
    const int64_t center = bins[i + 1];
    const int64_t high = bins[i + 2];
    if (center == low) {
      at(center, i) = T(1);
    } else {
      for (int64_t j = low; j <= center; ++j) {
        at(j, i) = static_cast<T>(static_cast<double>(j - low) /
                                  static_cast<double>(center - low));
      }
    }
    for (int64_t j = center; j < high; ++j) {
      at(j, i) = static_cast<T>(static_cast<double>(high - j) /
                                static_cast<double>(high - center));
    }
  }
}

absl::Status MelWeightMatrixKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const MelInputs in, KernelInputs(context));
  Tensor* out = context.Output("Out");
  const Dims expected = {in.dft_length / 2 + 1, in.mel_bins};
  SF_CHECK(out->dims() == expected,
           "output \"Out\" (variable \"%s\") has shape %s: expected %s",
           context.OutputName("Out"), DimsToString(out->dims()),
           DimsToString(expected));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> bins, PointBins(in));
  if (out->dtype() == kFloat64) {
    double* dst = out->data<double>();
    std::fill(dst, dst + out->numel(), 0.0);
    FillBands(bins, in.mel_bins, dst);
  } else {
    float* dst = out->data<float>();
    std::fill(dst, dst + out->numel(), 0.0f);
    FillBands(bins, in.mel_bins, dst);
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(mel_weight_matrix)
    .Input("NumMelBins")
    .Input("DftLength")
    .Input("SampleRate")
    .Input("LowerEdgeHertz")
    .Input("UpperEdgeHertz")
    .Output("Out")
    .Attr("out_dtype", AttrType::kInt,
          AttrValue(static_cast<int32_t>(kFloat32)), CheckOutDtype)
    .Infer(InferMelWeightMatrix)
    .KernelDtypeFromInput("NumMelBins")
    .Kernel(DeviceType::kCPU, kInt32, &MelWeightMatrixKernel)
    .Kernel(DeviceType::kCPU, kInt64, &MelWeightMatrixKernel);

}  // namespace signal
}  // namespace scopeflow
