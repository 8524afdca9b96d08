#include "operators/signal/dft_line.h"

#include <cmath>

namespace scopeflow {
namespace signal {

Twiddles::Twiddles(int64_t n, int sign) : roots_(n) {
  const double step = sign * 2.0 * M_PI / static_cast<double>(n);
  for (int64_t j = 0; j < n; ++j) {
    const double angle = step * static_cast<double>(j);
    roots_[j] = Complex(std::cos(angle), std::sin(angle));
  }
}

void TransformLine(absl::Span<const Complex> in, const Twiddles& roots,
                   absl::Span<Complex> out) {
  const int64_t n = roots.n();
  const int64_t in_size = static_cast<int64_t>(in.size());
  for (int64_t k = 0; k < static_cast<int64_t>(out.size()); ++k) {
    // The root of k t, kept as k t mod n without a product that could
    // overflow or a division per term.
    const int64_t k_mod = k % n;
    int64_t j = 0;
    Complex sum = 0.0;
    for (int64_t t = 0; t < in_size; ++t) {
      sum += in[t] * roots.root(j);
      j += k_mod;
      if (j >= n) j -= n;
    }
    out[k] = sum;
  }
}

}  // namespace signal
}  // namespace scopeflow
