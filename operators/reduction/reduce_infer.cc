// Shape inference and gradient specs shared by the reduce_* ops
// (reduce.cc, reduce_more.cc).
#include "operators/reduction/reduce_infer.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "operators/common.h"
#include "operators/reduction/reduce_axes.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace reduction {

// What the reduce_* ops make of input "X" under the axes (input "Axes" or
// attribute "axes"), "noop_with_empty_axes" and "keep_dim": the output's
// dtype and shape (the rank unknown if X's is, unless every axis goes, or
// none; the dims unknown while Prepare cannot see the values of "Axes").
// With `needs_elements` (reduce_max), a reduction of no elements into a
// non-empty output is an error. Written to `*out` (returning the VarInfo in
// a StatusOr trips GCC's -Wmaybe-uninitialized on its InlinedVector).
absl::Status ReducedInfo(const InferContext& context, bool needs_elements,
                         VarInfo* out) {
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> axes,
                      IntListOf(context, "Axes", "axes"));
  const bool noop = context.attrs().Get<bool>("noop_with_empty_axes");
  const bool keep_dim = context.attrs().Get<bool>("keep_dim");
  out->dtype = x.dtype;
  out->dims.clear();
  if (!axes.has_value()) {
    // The input's values say which axes go; with keep_dim, none leaves.
    const int64_t n = IntListInputLength(context, "Axes");
    const int64_t rank = static_cast<int64_t>(x.dims.size());
    out->has_dims = x.has_dims && (keep_dim || (n >= 0 && n <= rank));
    if (out->has_dims) out->dims.assign(keep_dim ? rank : rank - n, -1);
    return absl::OkStatus();
  }
  if (axes->values.empty() && noop) {
    *out = x;
    return absl::OkStatus();
  }
  if (!x.has_dims) {
    out->has_dims = axes->values.empty() && !keep_dim;
    return absl::OkStatus();
  }
  const int rank = static_cast<int>(x.dims.size());
  absl::StatusOr<std::vector<bool>> reduced = ReducedAxes(*axes, noop, rank);
  if (!reduced.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        DescribeInputShape(context, "X"), ": ", reduced.status().message()));
  }
  bool reduces_nothing = false;  // A reduced axis is known to be empty.
  bool output_empty = false;     // Possibly, if a dimension is unknown.
  for (int i = 0; i < rank; ++i) {
    if ((*reduced)[i]) {
      if (keep_dim) out->dims.push_back(1);
      reduces_nothing = reduces_nothing || x.dims[i] == 0;
    } else {
      out->dims.push_back(x.dims[i]);
      output_empty = output_empty || x.dims[i] <= 0;
    }
  }
  out->has_dims = true;
  SF_CHECK(!needs_elements || !reduces_nothing || output_empty,
           "%s: %s reduces an axis of size 0 (expected at least one element "
           "per output)",
           DescribeInputShape(context, "X"), axes->source());
  return absl::OkStatus();
}

// Inference of the reduce_* ops.
InferFn InferReduce(std::vector<DataType> dtypes, bool needs_elements) {
  return [dtypes, needs_elements](InferContext& context) -> absl::Status {
    SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", dtypes));
    VarInfo out;
    SF_RETURN_IF_ERROR(ReducedInfo(context, needs_elements, &out));
    context.SetOutput("Out", out);
    return absl::OkStatus();
  };
}

// OK if input `slot` has the dtype and a shape compatible with `expected`
// (unknown dimensions or rank match anything): what the forward op makes of
// X. Errors name the slot, its variable and both shapes.
absl::Status CheckLikeOutput(const InferContext& context,
                             absl::string_view slot, const VarInfo& expected) {
  const VarInfo& info = context.Input(slot);
  bool same = info.dtype == expected.dtype;
  if (same && info.has_dims && expected.has_dims) {
    same = info.dims.size() == expected.dims.size();
    for (size_t d = 0; same && d < info.dims.size(); ++d) {
      same = info.dims[d] < 0 || expected.dims[d] < 0 ||
             info.dims[d] == expected.dims[d];
    }
  }
  SF_CHECK(same, "%s is %s: expected %s %s, the output of %s for %s",
           DescribeInputShape(context, slot), DataTypeName(info.dtype),
           DataTypeName(expected.dtype),
           expected.has_dims ? DimsToString(expected.dims) : "[?]",
           absl::StripSuffix(context.op_type(), "_grad"),
           DescribeInputShape(context, "X"));
  return absl::OkStatus();
}

// Inference of the reduce_*_grad ops: X is float32 or float64, Out@GRAD
// (and Out, if `reads_out`) like the forward's output, X@GRAD like X.
InferFn InferReduceGrad(bool reads_out) {
  InferFn grads = GradsLikeInputs({"X"});
  return [reads_out, grads](InferContext& context) -> absl::Status {
    SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
    // A gradient of no elements is empty whatever Out holds (reduce_min's
    // identity, say); reduce_max refuses to make such an Out itself.
    VarInfo out;
    SF_RETURN_IF_ERROR(ReducedInfo(context, /*needs_elements=*/false, &out));
    if (reads_out) SF_RETURN_IF_ERROR(CheckLikeOutput(context, "Out", out));
    SF_RETURN_IF_ERROR(CheckLikeOutput(context, "Out@GRAD", out));
    return grads(context);
  };
}

// The gradient of a reduction: reads X (reduce_max also Out) and the
// output's gradient, writes X's.
GradSpec ReduceGradSpec(std::string grad_type, bool reads_out) {
  GradSpec spec(std::move(grad_type));
  // The axes, when an input, go along (they get no gradient).
  spec.ReadInput("X").ReadInput("Axes");
  if (reads_out) spec.ReadOutput("Out");
  return spec.ReadOutputGrad("Out").WriteInputGrad("X");
}

}  // namespace reduction
}  // namespace scopeflow
