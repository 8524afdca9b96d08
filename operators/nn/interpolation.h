// The arithmetic of resizing (the resize op, ONNX Resize): along one axis,
// each output cell is a fixed weighted sum of input cells, so resizing a
// tensor is one linear map per resized axis applied in turn, and its
// gradient is the transposed maps applied in reverse. This file computes
// those per-axis maps for every interpolation mode and coordinate
// transformation, and applies them and their transposes.
#ifndef SCOPEFLOW_OPERATORS_NN_INTERPOLATION_H_
#define SCOPEFLOW_OPERATORS_NN_INTERPOLATION_H_

#include <cstdint>
#include <vector>

#include "framework/tensor.h"

namespace scopeflow {
namespace interpolation {

enum class Mode { kNearest, kLinear, kCubic };

// How an output coordinate maps to an input coordinate, as ONNX Resize's
// coordinate_transformation_mode.
enum class CoordinateMode {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};

// Which neighbour the nearest mode picks, as ONNX Resize's nearest_mode;
// kFloorUpCeilDown is floor on an axis scaled up (or kept) and ceil on one
// scaled down: ONNX Upsample and Resize before opset 11, which define no
// rounding, as ONNX Runtime rounds them and ONNX's opset-10 cases expect.
enum class NearestMode {
  kRoundPreferFloor,
  kRoundPreferCeil,
  kFloor,
  kCeil,
  kFloorUpCeilDown,
};

struct Method {
  Mode mode = Mode::kNearest;
  CoordinateMode coordinate_mode = CoordinateMode::kHalfPixel;
  NearestMode nearest_mode = NearestMode::kRoundPreferFloor;
  double cubic_coeff_a = -0.75;
  // Linear and cubic: weights of cells outside the input are dropped and
  // the rest renormalised (instead of repeating the edge cells).
  bool exclude_outside = false;
  // Linear and cubic: when downsampling, stretch the kernel by 1 / scale so
  // that every input cell contributes (a low-pass filter).
  bool antialias = false;
};

// One axis to resize from `in` to `out` cells. `scale` is the scale the
// coordinate transformation divides by (the given scale, or out / in when
// sizes were given); `roi_start` and `roi_end` are the region of interest
// of tf_crop_and_resize, as fractions of the axis.
struct AxisResize {
  int64_t in = 0;
  int64_t out = 0;
  double scale = 1.0;
  double roi_start = 0.0;
  double roi_end = 1.0;
};

// The linear map of one axis: output cell o is the sum over k in
// [begin[o], begin[o + 1]) of weight[k] * input cell index[k]. An output
// cell the map marks `outside` (tf_crop_and_resize beyond the input) reads
// nothing: the op writes its extrapolation value there.
struct AxisMap {
  std::vector<int64_t> begin;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<bool> outside;

  // Whether the map copies its input unchanged (each cell reads itself
  // with weight 1), so that it can be skipped.
  bool IsIdentity() const;
  bool AnyOutside() const;
};

AxisMap MapOf(const Method& method, const AxisResize& axis);

// Applies `map` along `axis` of the row-major tensor `in` of `dims`: the
// result has dims[axis] = map.begin.size() - 1.
std::vector<double> Apply(const AxisMap& map, const std::vector<double>& in,
                          const Dims& dims, int axis);

// The transpose: `in` has the map's output size along `axis` (dims[axis]
// is that size), the result `input_size` cells, each the sum of the
// weighted output cells that read it.
std::vector<double> ApplyTransposed(const AxisMap& map,
                                    const std::vector<double>& in,
                                    const Dims& dims, int axis,
                                    int64_t input_size);

}  // namespace interpolation
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_INTERPOLATION_H_
