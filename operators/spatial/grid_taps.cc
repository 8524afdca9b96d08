#include "operators/spatial/grid_taps.h"

#include <algorithm>
#include <cmath>

namespace scopeflow {
namespace grid_sample {
namespace {

// Keys's cubic convolution weights for the taps at -1, 0, 1, 2 from the
// floor of a coordinate whose fraction is t, with a = -0.75 (ONNX's, and
// PyTorch's bicubic grid_sample); `dw` gets d weight / d t.
void CubicWeights(double t, double w[4], double dw[4]) {
  constexpr double a = -0.75;
  // |x| in [1, 2): a|x|^3 - 5a|x|^2 + 8a|x| - 4a; |x| < 1:
  // (a+2)|x|^3 - (a+3)|x|^2 + 1.
  auto far = [](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  auto far_slope = [](double x) { return (3 * a * x - 10 * a) * x + 8 * a; };
  auto near = [](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto near_slope = [](double x) {
    return (3 * (a + 2) * x - 2 * (a + 3)) * x;
  };
  w[0] = far(t + 1);
  dw[0] = far_slope(t + 1);
  w[1] = near(t);
  dw[1] = near_slope(t);
  w[2] = near(1 - t);
  dw[2] = -near_slope(1 - t);
  w[3] = far(2 - t);
  dw[3] = -far_slope(2 - t);
}

// Where padding puts tap index `i` of an axis of `size`: -1 for zeros'
// outside, else an index in [0, size).
int64_t PadIndex(int64_t i, int64_t size, Padding padding, double low,
                 double high) {
  if (i >= 0 && i < size) return i;
  switch (padding) {
    case Padding::kZeros:
      return -1;
    case Padding::kBorder:
      return std::clamp<int64_t>(i, 0, size - 1);
    case Padding::kReflection: {
      double slope;
      const double r = Reflect(static_cast<double>(i), low, high, &slope);
      return std::clamp<int64_t>(static_cast<int64_t>(r), 0, size - 1);
    }
  }
  return -1;
}

}  // namespace

Mode ModeOf(const std::string& mode) {
  if (mode == "nearest") return Mode::kNearest;
  if (mode == "cubic") return Mode::kCubic;
  return Mode::kLinear;
}

Padding PaddingOf(const std::string& mode) {
  if (mode == "border") return Padding::kBorder;
  if (mode == "reflection") return Padding::kReflection;
  return Padding::kZeros;
}

double Reflect(double x, double low, double high, double* slope) {
  const double range = high - low;
  if (!(range > 0)) {
    *slope = 0;
    return low;
  }
  if (x >= low && x <= high) {
    *slope = 1;
    return x;
  }
  // The distance past the nearer border, in whole ranges and a rest: an
  // even count of ranges reflects once (slope -1), an odd one twice.
  const bool below = x < low;
  const double past = below ? low - x : x - high;
  const double ranges = std::floor(past / range);
  const double rest = past - ranges * range;
  const bool even = std::fmod(ranges, 2.0) == 0;
  *slope = even ? -1 : 1;
  if (below) return even ? low + rest : high - rest;
  return even ? high - rest : low + rest;
}

AxisTaps TapsOf(double g, int64_t size, Mode mode, Padding padding,
                bool align_corners) {
  const double n = static_cast<double>(size);
  // Unnormalized: -1 and 1 are the centres of the corner cells with
  // align_corners, their outer edges without.
  const double x =
      align_corners ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2;
  const double dx = align_corners ? (n - 1) / 2 : n / 2;
  return PixelTaps(x, dx, size, mode, padding, align_corners);
}

AxisTaps PixelTaps(double x, double dx, int64_t size, Mode mode,
                   Padding padding, bool align_corners) {
  AxisTaps taps;
  taps.count = mode == Mode::kNearest ? 1 : mode == Mode::kLinear ? 2 : 4;
  const double n = static_cast<double>(size);
  // The coordinates inside the image: cell centres with align_corners,
  // cell edges without.
  const double low = align_corners ? 0.0 : -0.5;
  const double high = align_corners ? n - 1 : n - 0.5;
  if (mode == Mode::kNearest) {
    x = std::nearbyint(x);  // half to even, as numpy's rint
    dx = 0;
  }
  if (x < low || x > high) {
    if (padding == Padding::kBorder) {
      x = std::clamp(x, 0.0, n - 1);
      dx = 0;
    } else if (padding == Padding::kReflection) {
      double slope;
      x = Reflect(x, low, high, &slope);
      dx *= slope;
    }
  }
  // Beyond every tap's reach (or NaN): zeros' outside, all taps.
  if (!(x > -4 && x < n + 4)) return taps;
  const double base = std::floor(x);
  const double t = x - base;
  const int64_t first = static_cast<int64_t>(base) - (taps.count == 4 ? 1 : 0);
  if (mode == Mode::kNearest) {
    taps.weight[0] = 1;
  } else if (mode == Mode::kLinear) {
    taps.weight[0] = 1 - t;
    taps.weight[1] = t;
    taps.slope[0] = -dx;
    taps.slope[1] = dx;
  } else {
    double dw[4];
    CubicWeights(t, taps.weight, dw);
    for (int k = 0; k < 4; ++k) taps.slope[k] = dw[k] * dx;
  }
  for (int k = 0; k < taps.count; ++k) {
    taps.index[k] = PadIndex(first + k, size, padding, low, high);
    if (taps.index[k] < 0) taps.slope[k] = 0;
  }
  return taps;
}

}  // namespace grid_sample
}  // namespace scopeflow
