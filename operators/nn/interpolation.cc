#include "operators/nn/interpolation.h"

#include <algorithm>
#include <cmath>

namespace scopeflow {
namespace interpolation {
namespace {

// The input coordinate output cell `x` samples. The resized length before
// rounding, scale * in, is what ONNX's reference divides by for
// align_corners and tf_crop_and_resize, so a scale that does not divide the
// output evenly moves the samples as it does there.
double InputCoordinate(const Method& method, const AxisResize& axis,
                       int64_t x) {
  const double in = static_cast<double>(axis.in);
  const double length = axis.scale * in;
  const double centre = (x + 0.5) / axis.scale;
  switch (method.coordinate_mode) {
    case CoordinateMode::kHalfPixel:
      return centre - 0.5;
    case CoordinateMode::kHalfPixelSymmetric: {
      // Keeps the centre of the input on the centre of the output when
      // the output length was rounded down.
      const double adjustment = static_cast<double>(axis.out) / length;
      return in / 2 * (1 - adjustment) + centre - 0.5;
    }
    case CoordinateMode::kPytorchHalfPixel:
      return axis.out > 1 ? centre - 0.5 : 0.0;
    case CoordinateMode::kAlignCorners:
      return length == 1 ? 0.0 : x * (in - 1) / (length - 1);
    case CoordinateMode::kAsymmetric:
      return x / axis.scale;
    case CoordinateMode::kTfHalfPixelForNn:
      return centre;
    case CoordinateMode::kTfCropAndResize: {
      const double span = axis.roi_end - axis.roi_start;
      const double offset = length == 1 ? span * (in - 1) / 2
                                        : x * span * (in - 1) / (length - 1);
      return offset + axis.roi_start * (in - 1);
    }
  }
  return 0.0;
}

double LinearKernel(double x) { return std::max(0.0, 1.0 - std::abs(x)); }

// Keys' cubic convolution kernel with parameter a.
double CubicKernel(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Nearest: whether to take the neighbour to the right of the coordinate,
// given its distance `ratio` in (0, 1] from the left one (1: the
// coordinate is a cell, which the right neighbour then is), on an axis
// resized by `scale`.
bool TakeRight(NearestMode mode, double ratio, double scale) {
  switch (mode) {
    case NearestMode::kRoundPreferFloor:
      return ratio > 0.5;
    case NearestMode::kRoundPreferCeil:
      return ratio >= 0.5;
    case NearestMode::kFloor:
      return ratio == 1.0;
    case NearestMode::kCeil:
      return true;
    case NearestMode::kFloorUpCeilDown:
      return scale < 1.0 || ratio == 1.0;
  }
  return true;
}

// Appends the taps of one output cell whose input coordinate lies `ratio`
// in (0, 1] to the right of cell `left`.
void AddTaps(const Method& method, const AxisResize& axis, int64_t left,
             double ratio, AxisMap& map) {
  const int64_t last = axis.in - 1;
  if (method.mode == Mode::kNearest) {
    map.index.push_back(std::clamp<int64_t>(
        left + (TakeRight(method.nearest_mode, ratio, axis.scale) ? 1 : 0), 0, last));
    map.weight.push_back(1.0);
    return;
  }
  // Cells left + i for i in [start, 1 - start], weighted by the kernel at
  // their distance. Antialiasing downsamples with the kernel stretched by
  // 1 / scale, which widens the window and needs renormalising.
  const bool linear = method.mode == Mode::kLinear;
  const double stretch = method.antialias ? std::min(axis.scale, 1.0) : 1.0;
  const double support = linear ? 1.0 : 2.0;
  const int64_t start =
      static_cast<int64_t>(std::floor(-support / stretch)) + 1;
  std::vector<double> weights;
  double sum = 0;
  for (int64_t i = start; i <= 1 - start; ++i) {
    const double at = stretch * (static_cast<double>(i) - ratio);
    const double w =
        linear ? LinearKernel(at) : CubicKernel(at, method.cubic_coeff_a);
    weights.push_back(w);
    sum += w;
  }
  if (method.antialias && sum != 0) {
    for (double& w : weights) w /= sum;
  }
  if (method.exclude_outside) {
    sum = 0;
    for (int64_t i = start; i <= 1 - start; ++i) {
      const int64_t cell = left + i;
      double& w = weights[i - start];
      if (cell < 0 || cell > last) w = 0;
      sum += w;
    }
    if (sum != 0) {
      for (double& w : weights) w /= sum;
    }
  }
  // Cells beyond the edges repeat the edge cells.
  for (int64_t i = start; i <= 1 - start; ++i) {
    const double w = weights[i - start];
    if (w == 0) continue;
    map.index.push_back(std::clamp<int64_t>(left + i, 0, last));
    map.weight.push_back(w);
  }
}

// [outer, size, inner] around `axis`.
struct Split {
  int64_t outer = 1;
  int64_t inner = 1;
};

Split SplitAround(const Dims& dims, int axis) {
  Split split;
  for (int i = 0; i < axis; ++i) split.outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) split.inner *= dims[i];
  return split;
}

}  // namespace

bool AxisMap::IsIdentity() const {
  const int64_t out = static_cast<int64_t>(begin.size()) - 1;
  if (static_cast<int64_t>(index.size()) != out) return false;
  for (int64_t o = 0; o < out; ++o) {
    if (outside[o] || begin[o] != o || index[o] != o || weight[o] != 1.0) {
      return false;
    }
  }
  return true;
}

bool AxisMap::AnyOutside() const {
  return std::find(outside.begin(), outside.end(), true) != outside.end();
}

AxisMap MapOf(const Method& method, const AxisResize& axis) {
  AxisMap map;
  map.begin.reserve(axis.out + 1);
  map.outside.assign(axis.out, false);
  for (int64_t o = 0; o < axis.out; ++o) {
    map.begin.push_back(static_cast<int64_t>(map.index.size()));
    if (axis.in == 0) continue;
    const double x = InputCoordinate(method, axis, o);
    if (method.coordinate_mode == CoordinateMode::kTfCropAndResize &&
        (x < 0 || x > static_cast<double>(axis.in - 1))) {
      map.outside[o] = true;
      continue;
    }
    // The left neighbour at distance (0, 1]: a coordinate on a cell is
    // taken as 1 to the right of the cell before it.
    const double below = std::floor(x);
    const bool on_cell = x == below;
    const int64_t left = static_cast<int64_t>(below) - (on_cell ? 1 : 0);
    AddTaps(method, axis, left, on_cell ? 1.0 : x - below, map);
  }
  map.begin.push_back(static_cast<int64_t>(map.index.size()));
  return map;
}

std::vector<double> Apply(const AxisMap& map, const std::vector<double>& in,
                          const Dims& dims, int axis) {
  const Split split = SplitAround(dims, axis);
  const int64_t in_size = dims[axis];
  const int64_t out_size = static_cast<int64_t>(map.begin.size()) - 1;
  const int64_t inner = split.inner;
  std::vector<double> out(split.outer * out_size * inner, 0.0);
  for (int64_t b = 0; b < split.outer; ++b) {
    for (int64_t o = 0; o < out_size; ++o) {
      double* dst = out.data() + (b * out_size + o) * inner;
      for (int64_t k = map.begin[o]; k < map.begin[o + 1]; ++k) {
        const double* src = in.data() + (b * in_size + map.index[k]) * inner;
        const double w = map.weight[k];
        for (int64_t j = 0; j < inner; ++j) dst[j] += w * src[j];
      }
    }
  }
  return out;
}

std::vector<double> ApplyTransposed(const AxisMap& map,
                                    const std::vector<double>& in,
                                    const Dims& dims, int axis,
                                    int64_t input_size) {
  const Split split = SplitAround(dims, axis);
  const int64_t out_size = dims[axis];
  const int64_t inner = split.inner;
  std::vector<double> result(split.outer * input_size * inner, 0.0);
  for (int64_t b = 0; b < split.outer; ++b) {
    for (int64_t o = 0; o < out_size; ++o) {
      const double* src = in.data() + (b * out_size + o) * inner;
      for (int64_t k = map.begin[o]; k < map.begin[o + 1]; ++k) {
        double* dst = result.data() + (b * input_size + map.index[k]) * inner;
        const double w = map.weight[k];
        for (int64_t j = 0; j < inner; ++j) dst[j] += w * src[j];
      }
    }
  }
  return result;
}

}  // namespace interpolation
}  // namespace scopeflow
