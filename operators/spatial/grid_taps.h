// The taps of one grid_sample sample along one spatial axis, as ONNX
// GridSample (16, 20, 22) defines them: a grid value g in [-1, 1] is
// unnormalized to a pixel coordinate, rounded (nearest), brought inside the
// image by the padding mode, and read through 1 (nearest), 2 (linear) or 4
// (cubic, a = -0.75) taps whose indices the padding mode resolves again.
// Plain values: no ownership, safe to use from any thread.
#ifndef SCOPEFLOW_OPERATORS_SPATIAL_GRID_TAPS_H_
#define SCOPEFLOW_OPERATORS_SPATIAL_GRID_TAPS_H_

#include <cstdint>
#include <string>

namespace scopeflow {
namespace grid_sample {

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

Mode ModeOf(const std::string& mode);        // "nearest", "linear", "cubic"
Padding PaddingOf(const std::string& mode);  // "zeros", "border", "reflection"

struct AxisTaps {
  int count = 0;
  // Input index of each tap; -1 where padding "zeros" reads a zero there.
  int64_t index[4] = {-1, -1, -1, -1};
  double weight[4] = {0, 0, 0, 0};
  // d weight / d g: the slope of each weight in the grid value, through
  // unnormalization and padding (0 where the coordinate was clamped, and
  // for nearest, which is piecewise constant in g).
  double slope[4] = {0, 0, 0, 0};
};

// The taps of grid value `g` along an axis of `size` > 0 cells.
AxisTaps TapsOf(double g, int64_t size, Mode mode, Padding padding,
                bool align_corners);

// The same for a pixel coordinate `x` (0 the centre of the first cell) and
// its slope in whatever it derives from, `dx` (deform_conv samples at
// pixel coordinates, with slope 1 in its offsets).
AxisTaps PixelTaps(double x, double dx, int64_t size, Mode mode,
                   Padding padding, bool align_corners);

// ONNX's reflection of `x` into [low, high] by the nearer border, repeated
// until inside; `*slope` becomes d result / d x (+1 or -1; 0 when the range
// is empty and every x maps to `low`).
double Reflect(double x, double low, double high, double* slope);

}  // namespace grid_sample
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SPATIAL_GRID_TAPS_H_
