// The geometry of one dft op (ONNX DFT): which axis, what length of
// transform, how many values each line reads and writes. The dft op, its
// gradient and their inference all derive it from the same place.
//
// X is [d_0, ..., d_{r-2}, c]: c = 1 for real values, 2 for complex ones
// (real and imaginary part). The transform runs along axis a of the first
// r - 1 dimensions, with n = dft_length:
//
//   full (onesided 0):      Out[k] = sum_t X[t] e^{-+2 pi i k t / n}, k < n
//                           (the inverse, "+", divided by n), complex out;
//   RFFT (onesided, not inverse): real X, bins k <= n / 2 only;
//   IRFFT (onesided, inverse): the n real values whose one-sided spectrum
//                           is X's first n / 2 + 1 bins.
//
// X's line is padded with zeros or cut to the length the transform reads
// (n; n / 2 + 1 for IRFFT).
#ifndef SCOPEFLOW_OPERATORS_SIGNAL_DFT_PLAN_H_
#define SCOPEFLOW_OPERATORS_SIGNAL_DFT_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace signal {

struct DftPlan {
  int axis = 0;   // of X, non-negative, < rank - 1
  int64_t n = 0;  // the transform's length
  bool inverse = false;
  bool onesided = false;
  bool complex_in = false;   // X's last dimension is 2
  bool complex_out = false;  // Out's last dimension is 2 (not IRFFT)
  int64_t in_length = 0;     // X's dimension `axis`
  int64_t read_length = 0;   // values of X's line the transform reads
  int64_t out_length = 0;    // Out's dimension `axis`
  // X's dimensions around the axis, without the last: outer before it,
  // inner after it.
  int64_t outer = 1;
  int64_t inner = 1;

  bool irfft() const { return onesided && inverse; }
  // Out's dimensions, given X's.
  Dims OutDims(const Dims& x_dims) const;
};

// The plan for X of `x_dims` (all known), the axis (possibly negative),
// dft_length (nullopt: the default) and the attributes. Errors say which
// of them is wrong and what was expected; `x` describes X for them.
absl::StatusOr<DftPlan> MakeDftPlan(const Dims& x_dims, int64_t axis,
                                    std::optional<int64_t> dft_length,
                                    bool inverse, bool onesided,
                                    const std::string& x);

}  // namespace signal
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SIGNAL_DFT_PLAN_H_
