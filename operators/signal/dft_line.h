// The discrete Fourier transform of one line of complex values: the one
// computation the dft and stft ops and their gradients share, in double
// precision whatever the tensors' dtype.
//
// A direct O(n^2) sum, for any length n. Debian's maintained FFT libraries
// do not fit: FFTW is GPL, which would bind every program linking
// scopeflow, and kissfft is packaged for float only (no double build),
// where these sums are computed in double; pocketfft is not packaged. The
// lengths these ops meet in models (STFT frames of tens to a few thousand
// samples) keep the direct sum affordable, and it is exact in its roots of
// unity for every n, prime or not.
//
// Not thread-safe to share while being built; a built Twiddles is read-only
// and may be read from any number of threads.
#ifndef SCOPEFLOW_OPERATORS_SIGNAL_DFT_LINE_H_
#define SCOPEFLOW_OPERATORS_SIGNAL_DFT_LINE_H_

#include <complex>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace scopeflow {
namespace signal {

using Complex = std::complex<double>;

// exp(sign * 2 pi i j / n) for j in [0, n): the roots of unity of a
// transform of length n, each from its own angle (repeated multiplication
// would accumulate rounding along n).
class Twiddles {
 public:
  // n >= 1; sign -1 (forward transform) or +1 (inverse).
  Twiddles(int64_t n, int sign);

  int64_t n() const { return static_cast<int64_t>(roots_.size()); }
  const Complex& root(int64_t j) const { return roots_[j]; }

 private:
  std::vector<Complex> roots_;
};

// out[k] = sum over t < in.size() of in[t] * exp(sign 2 pi i k t / n), for
// every k < out.size(); n and sign are those of `roots`. in.size() and
// out.size() may be anything up to n: a shorter input is the line padded
// with zeros, a shorter output its first bins.
void TransformLine(absl::Span<const Complex> in, const Twiddles& roots,
                   absl::Span<Complex> out);

// How much bin k of a one-sided spectrum of a length-n real signal counts
// in that signal: 1 for bin 0 and (n even) bin n / 2, which stand for
// themselves alone, 2 for the others, which also stand for their
// conjugates at n - k.
inline double OneSidedWeight(int64_t k, int64_t n) {
  return (k == 0 || 2 * k == n) ? 1.0 : 2.0;
}

}  // namespace signal
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SIGNAL_DFT_LINE_H_
