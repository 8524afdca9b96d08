#include "operators/signal/dft_plan.h"

#include <algorithm>
#include <string>

#include "platform/status_macros.h"

namespace scopeflow {
namespace signal {

Dims DftPlan::OutDims(const Dims& x_dims) const {
  Dims out = x_dims;
  out[axis] = out_length;
  out.back() = complex_out ? 2 : 1;
  return out;
}

absl::StatusOr<DftPlan> MakeDftPlan(const Dims& x_dims, int64_t axis,
                                    std::optional<int64_t> dft_length,
                                    bool inverse, bool onesided,
                                    const std::string& x) {
  const int rank = static_cast<int>(x_dims.size());
  SF_CHECK(rank >= 2,
           "%s: expected rank 2 or more ([..., signal, ..., 1 or 2])", x);
  const int64_t c = x_dims.back();
  SF_CHECK(c == 1 || c == 2,
           "%s: expected a last dimension of 1 (real) or 2 (complex)", x);
  // The last dimension holds the parts of one value: not an axis.
  SF_CHECK(axis >= -rank && axis <= rank - 2 && axis != -1,
           "axis %d is out of range for %s: expected [%d, -2] or [0, %d]", axis,
           x, -rank, rank - 2);
  DftPlan plan;
  plan.axis = static_cast<int>(axis < 0 ? axis + rank : axis);
  plan.inverse = inverse;
  plan.onesided = onesided;
  plan.complex_in = c == 2;
  plan.in_length = x_dims[plan.axis];
  SF_CHECK(!(onesided && !inverse && plan.complex_in),
           "%s is complex: a one-sided forward transform (RFFT) takes real "
           "values (last dimension 1)",
           x);
  SF_CHECK(!(onesided && inverse && !plan.complex_in),
           "%s is real: a one-sided inverse transform (IRFFT) takes a "
           "complex spectrum (last dimension 2)",
           x);
  if (dft_length.has_value()) {
    plan.n = *dft_length;
    SF_CHECK(plan.n >= 1, "dft_length = %d: expected a length >= 1", plan.n);
  } else {
    // ONNX's default: X's length, or for IRFFT the even signal whose
    // one-sided spectrum X is.
    plan.n = plan.irfft() ? 2 * (plan.in_length - 1) : plan.in_length;
    SF_CHECK(plan.n >= 1,
             "%s has %d values along axis %d: too few for a transform "
             "without dft_length (expected %s)",
             x, plan.in_length, plan.axis,
             plan.irfft() ? "2 or more" : "1 or more");
  }
  plan.complex_out = !plan.irfft();
  const int64_t half = plan.n / 2 + 1;
  plan.read_length = std::min(plan.in_length, plan.irfft() ? half : plan.n);
  plan.out_length = onesided && !inverse ? half : plan.n;
  for (int d = 0; d < plan.axis; ++d) plan.outer *= x_dims[d];
  for (int d = plan.axis + 1; d < rank - 1; ++d) plan.inner *= x_dims[d];
  return plan;
}

}  // namespace signal
}  // namespace scopeflow
