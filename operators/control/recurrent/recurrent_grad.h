// The gradient of recurrent: recurrent_grad runs the gradient of the step
// block backward through the kept step scopes (back-propagation through
// time).
#ifndef SCOPEFLOW_OPERATORS_CONTROL_RECURRENT_RECURRENT_GRAD_H_
#define SCOPEFLOW_OPERATORS_CONTROL_RECURRENT_RECURRENT_GRAD_H_

#include "absl/status/status.h"
#include "framework/grad_spec.h"

namespace scopeflow {

// The GradSpec maker of recurrent: appends the step block's gradient as a
// new block and a recurrent_grad op running it.
absl::Status MakeRecurrentGrad(GradOpContext& context);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CONTROL_RECURRENT_RECURRENT_GRAD_H_
