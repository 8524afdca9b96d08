// Slice's and pad's parameters, resolved and checked on the host: shared by
// their CPU kernels (slice_pad.cc) and their CUDA kernels' adapters
// (slice_pad_cuda.cc), which must agree on them and on their errors.
#ifndef SCOPEFLOW_OPERATORS_SHAPE_SLICE_PAD_UTIL_H_
#define SCOPEFLOW_OPERATORS_SHAPE_SLICE_PAD_UTIL_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace shape_util {

// --- slice ---

// Where a slice of one dim begins and how many elements it takes.
struct Range {
  int64_t start;
  int64_t size;
};

// numpy's rules for a[start:end:step] along a dim of size `dim`: negative
// start and end count from the end, then both are clamped into the dim
// ([0, dim] going forward, [-1, dim - 1] going backward). The counts round
// up as (n - 1) / step + 1, not (n + step - 1) / step, which overflows for
// a dim near the int64 limit.
Range SliceRange(int64_t start, int64_t end, int64_t step, int64_t dim);

// Slice's parameters, each from its input when bound, else from its
// attribute; nullopt where inference cannot see an input's values yet.
// Empty axes are the first len(starts) axes, empty steps all 1 (as in
// ONNX).
struct SliceParams {
  std::optional<IntValues> starts, ends, axes, steps;

  bool known() const {
    return starts.has_value() && ends.has_value() && axes.has_value() &&
           steps.has_value();
  }
};

template <typename Context>
absl::StatusOr<SliceParams> SliceParamsOf(const Context& context) {
  SliceParams params;
  SF_ASSIGN_OR_RETURN(params.starts, IntListOf(context, "Starts", "starts"));
  SF_ASSIGN_OR_RETURN(params.ends, IntListOf(context, "Ends", "ends"));
  SF_ASSIGN_OR_RETURN(params.axes, IntListOf(context, "Axes", "axes"));
  SF_ASSIGN_OR_RETURN(params.steps, IntListOf(context, "Steps", "steps"));
  return params;
}

// A slice resolved for an input of a known rank: per sliced axis, the axis
// (non-negative), start, end and step (non-zero).
struct Slice {
  std::vector<int> axes;
  std::vector<int64_t> starts, ends, steps;
};

// Checks known `params` (lengths, steps) and resolves them for `rank`.
// Errors end with ", for " `input`, which describes the input.
absl::StatusOr<Slice> ResolveSlice(const SliceParams& params, int rank,
                                   absl::string_view input);

// Where the slice of a tensor of `dims` starts (in elements) and the
// strides that walk it: the box the forward kernel reads and the gradient
// kernel writes.
struct SliceBox {
  int64_t offset = 0;
  Dims strides;
};

// The box of the slice a kernel's inputs describe, for X of `dims`. The
// box's extent is `box_dims` (Out's, or Out@GRAD's), which must be what the
// slice makes of `dims`: inference checks that, but a gradient op whose
// shapes Prepare fully knew runs without it.
absl::StatusOr<SliceBox> SliceBoxOf(const KernelContext& context,
                                    absl::Span<const int64_t> dims,
                                    absl::Span<const int64_t> box_dims,
                                    absl::string_view box_slot);

// --- pad ---

// How pad fills the border: with the pad value (constant), or from X's
// elements along each padded dim: the nearest one (edge), the mirror image
// without repeating the end one (reflect, as numpy's), or cyclically from
// the other end (wrap).
enum class PadMode { kConstant, kEdge, kReflect, kWrap };

PadMode PadModeOf(const Attributes& attrs);

// OK if `paddings` (from input "Paddings" or attribute "paddings") pads a
// tensor of rank `rank` (-1: unknown) by non-negative amounts. `x`
// describes that tensor.
absl::Status CheckPaddings(const IntValues& paddings, int64_t rank,
                           absl::string_view x);

// "pad_value" as T: integers truncate toward zero, bool is value != 0. A
// value no T can hold (NaN, beyond the range) is an error.
template <typename T>
absl::StatusOr<T> PadValueAs(float value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const double low = static_cast<double>(std::numeric_limits<T>::min());
    // max + 1, a power of two that a double holds exactly.
    const double past_high =
        static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
    SF_CHECK(value >= low && value < past_high,
             "attribute \"pad_value\" = %g does not fit the dtype %s", value,
             DataTypeName(DataTypeOf<T>()));
  }
  return static_cast<T>(value);
}

// The paddings a pad kernel reads, checked against X's dims and the
// output's (`x` and `out`, Out or Out@GRAD as `out_slot` says): inference
// checked them, but a gradient op whose shapes Prepare knew runs without.
absl::StatusOr<IntValues> KernelPaddings(const KernelContext& context,
                                         absl::Span<const int64_t> x,
                                         absl::Span<const int64_t> out,
                                         absl::string_view out_slot);

// What a pad_grad kernel reads besides Out@GRAD: the paddings, checked
// against Out@GRAD (of `grad_dims`, described by `grad_text`), and X's dims
// they leave once taken off.
struct PadGradParams {
  IntValues paddings;
  std::string grad_text;
  Dims x_dims;
};

absl::StatusOr<PadGradParams> KernelPadGradParams(
    const KernelContext& context, absl::Span<const int64_t> grad_dims);

// OK if output "X@GRAD" has the dims `params` unpad Out@GRAD to.
absl::Status CheckUnpaddedDims(const PadGradParams& params,
                               absl::Span<const int64_t> x_grad_dims);

// The offset (in elements) of the interior of a padded tensor of
// `strides`, where the unpadded tensor goes.
int64_t InteriorOffset(const std::vector<int64_t>& paddings,
                       absl::Span<const int64_t> strides);

}  // namespace shape_util
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SHAPE_SLICE_PAD_UTIL_H_
