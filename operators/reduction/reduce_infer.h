// Shape inference and gradient specs shared by the reduce_* ops: what a
// reduction over input "Axes" or attribute "axes" (with "keep_dim" and
// "noop_with_empty_axes") makes of input "X". Stateless functions.
#ifndef SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_INFER_H_
#define SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_INFER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "framework/grad_spec.h"
#include "framework/op_context.h"
#include "framework/op_spec.h"

namespace scopeflow {
namespace reduction {

// The output's dtype and shape (the rank unknown if X's is, unless every
// axis goes, or none; the dims unknown while Prepare cannot see the values
// of "Axes"). With `needs_elements` (reduce_max), a reduction
// of no elements into a non-empty output is an error.
absl::Status ReducedInfo(const InferContext& context, bool needs_elements,
                         VarInfo* out);

// Inference of a reduce_* op of X of one of `dtypes`.
InferFn InferReduce(std::vector<DataType> dtypes, bool needs_elements);

// OK if input `slot` has the dtype and a shape compatible with `expected`
// (unknown dimensions or rank match anything).
absl::Status CheckLikeOutput(const InferContext& context,
                             absl::string_view slot, const VarInfo& expected);

// Inference of the reduce_*_grad ops: X float32 or float64, Out@GRAD (and
// Out, if `reads_out`) like the forward's output, X@GRAD like X.
InferFn InferReduceGrad(bool reads_out);

// The gradient of a reduction: reads X and "Axes" (and Out with
// `reads_out`) and the output's gradient, writes X's.
GradSpec ReduceGradSpec(std::string grad_type, bool reads_out = false);

}  // namespace reduction
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_INFER_H_
