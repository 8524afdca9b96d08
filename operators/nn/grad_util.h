// Helpers shared by the gradient ops of operators/nn: checking the
// gradient flowing in against the forward output it belongs to, and
// reading forward attributes in gradient makers.
#ifndef SCOPEFLOW_OPERATORS_NN_GRAD_UTIL_H_
#define SCOPEFLOW_OPERATORS_NN_GRAD_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "proto/framework.pb.h"

namespace scopeflow {
namespace nn {

// OK if input `grad_slot` (e.g. "Out@GRAD") has the dtype and shape of
// `expected`, what the forward op writes to its output `forward_slot`
// (unknown dimensions, or an unknown rank, match anything). Otherwise an
// InvalidArgument error naming the slot, its variable, what it holds and
// what was expected.
absl::Status CheckGradInput(const InferContext& context,
                            absl::string_view grad_slot,
                            const VarInfo& expected,
                            absl::string_view forward_slot);

// Error unless input `slot` is bound, saying why the op needs it (`why`).
absl::Status RequireInput(const InferContext& context, absl::string_view slot,
                          absl::string_view why);

// The bool attribute `name` of `op` as written in its OpDef, or
// `default_value` where the op does not give it (gradient makers see the
// OpDef, not the defaults an OpSpec fills in).
bool BoolAttrOf(const OpDef& op, absl::string_view name, bool default_value);

}  // namespace nn
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_GRAD_UTIL_H_
