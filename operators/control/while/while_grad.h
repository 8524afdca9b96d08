// The gradient of while: while_grad runs the gradient of the (renamed) body
// backward through the iterations' kept scopes.
#ifndef SCOPEFLOW_OPERATORS_CONTROL_WHILE_WHILE_GRAD_H_
#define SCOPEFLOW_OPERATORS_CONTROL_WHILE_WHILE_GRAD_H_

#include "absl/status/status.h"
#include "framework/grad_spec.h"

namespace scopeflow {

// The GradSpec maker of while: appends the body's gradient as a new block
// and a while_grad op running it.
absl::Status MakeWhileGrad(GradOpContext& context);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CONTROL_WHILE_WHILE_GRAD_H_
