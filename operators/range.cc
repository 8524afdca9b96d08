// range: the 1-D sequence start, start + delta, start + 2 delta, ... up to
// (not including) limit, as ONNX's Range and numpy's arange give it. Its
// length depends on the inputs' values, so Prepare leaves it unknown and the
// executor infers it again at every run. No gradient: the output is
// piecewise constant in start and delta and its length in limit.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kRangeDtypes[] = {kFloat32, kFloat64, kInt32, kInt64};

// max(ceil((limit - start) / delta), 0); an error for a zero or non-finite
// delta, non-finite bounds, or a length beyond int64.
template <typename T>
absl::StatusOr<int64_t> RangeLength(T start, T limit, T delta) {
  if constexpr (std::is_floating_point_v<T>) {
    SF_CHECK(std::isfinite(start) && std::isfinite(limit),
             "inputs \"Start\" = %g and \"Limit\" = %g: expected finite "
             "bounds",
             start, limit);
    SF_CHECK(std::isfinite(delta) && delta != 0,
             "input \"Delta\" = %g: expected a finite, nonzero step", delta);
    const double n = std::ceil((static_cast<double>(limit) - start) / delta);
    SF_CHECK(n < 9.2e18, "inputs Start %g, Limit %g, Delta %g give %g "
             "elements: expected fewer than 2^63", start, limit, delta, n);
    return n > 0 ? static_cast<int64_t>(n) : 0;
  } else {
    SF_CHECK(delta != 0, "input \"Delta\" = 0: expected a nonzero step");
    // In 128 bits: limit - start may overflow T.
    const __int128 diff = static_cast<__int128>(limit) - start;
    if ((diff > 0) != (delta > 0) || diff == 0) return 0;
    const __int128 d = delta;
    const __int128 n = diff > 0 ? (diff + d - 1) / d : (diff + d + 1) / d;
    return static_cast<int64_t>(n);
  }
}

// `status` (about the values of Start, Limit and Delta) with the variables
// that hold them.
absl::Status NameVariables(const absl::Status& status, const std::string& start,
                           const std::string& limit, const std::string& delta) {
  return absl::Status(
      status.code(),
      absl::StrFormat("%s (inputs Start, Limit, Delta are variables \"%s\", "
                      "\"%s\", \"%s\")",
                      status.message(), start, limit, delta));
}

// The three scalars, read as T, and the length they give.
template <typename T>
absl::StatusOr<int64_t> LengthOfValues(const Tensor& start, const Tensor& limit,
                                       const Tensor& delta) {
  SF_ASSIGN_OR_RETURN(const Tensor s, OnHost(start));
  SF_ASSIGN_OR_RETURN(const Tensor l, OnHost(limit));
  SF_ASSIGN_OR_RETURN(const Tensor d, OnHost(delta));
  return RangeLength<T>(*s.data<T>(), *l.data<T>(), *d.data<T>());
}

absl::StatusOr<int64_t> LengthOf(DataType dtype, const Tensor& start,
                                 const Tensor& limit, const Tensor& delta) {
  switch (dtype) {
    case kFloat32:
      return LengthOfValues<float>(start, limit, delta);
    case kFloat64:
      return LengthOfValues<double>(start, limit, delta);
    case kInt32:
      return LengthOfValues<int32_t>(start, limit, delta);
    default:
      return LengthOfValues<int64_t>(start, limit, delta);
  }
}

absl::Status InferRange(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "Start", kRangeDtypes));
  const DataType dtype = context.Input("Start").dtype;
  for (const char* slot : {"Start", "Limit", "Delta"}) {
    SF_RETURN_IF_ERROR(CheckScalarInput(context, slot, dtype));
  }
  const Tensor* start = context.InputValue("Start");
  const Tensor* limit = context.InputValue("Limit");
  const Tensor* delta = context.InputValue("Delta");
  int64_t length = -1;
  if (start != nullptr && limit != nullptr && delta != nullptr) {
    absl::StatusOr<int64_t> n = LengthOf(dtype, *start, *limit, *delta);
    if (!n.ok()) {
      return NameVariables(n.status(), context.InputName("Start"),
                           context.InputName("Limit"),
                           context.InputName("Delta"));
    }
    length = *n;
  }
  context.SetOutput("Out", 0, dtype, {length});
  return absl::OkStatus();
}

template <typename T>
absl::Status RangeKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const T start, ScalarInput<T>(context, "Start"));
  SF_ASSIGN_OR_RETURN(const T limit, ScalarInput<T>(context, "Limit"));
  SF_ASSIGN_OR_RETURN(const T delta, ScalarInput<T>(context, "Delta"));
  absl::StatusOr<int64_t> n = RangeLength<T>(start, limit, delta);
  if (!n.ok()) {
    return NameVariables(n.status(), context.InputName("Start"),
                         context.InputName("Limit"),
                         context.InputName("Delta"));
  }
  const int64_t length = *n;
  Tensor* out = context.Output("Out");
  SF_CHECK(out->numel() == length,
           "output \"Out\" (variable \"%s\") has %d elements: expected %d",
           context.OutputName("Out"), out->numel(), length);
  T* data = out->data<T>();
  // start + i * delta, as numpy's arange, rather than a running sum whose
  // rounding errors would grow along the output.
  for (int64_t i = 0; i < length; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      data[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    } else {
      data[i] = static_cast<T>(static_cast<__int128>(start) +
                               static_cast<__int128>(i) * delta);
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(range)
    .Input("Start")
    .Input("Limit")
    .Input("Delta")
    .Output("Out")
    .Infer(InferRange)
    .Kernel(DeviceType::kCPU, kFloat32, &RangeKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &RangeKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &RangeKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &RangeKernel<int64_t>);

}  // namespace scopeflow
