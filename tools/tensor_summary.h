// Human-readable summaries of tensors for the scopeflow command.
#ifndef SCOPEFLOW_TOOLS_TENSOR_SUMMARY_H_
#define SCOPEFLOW_TOOLS_TENSOR_SUMMARY_H_

#include <string>

#include "framework/tensor.h"

namespace scopeflow {

// "float32 [1, 10] values [0.1, 0.2, ...] min 0.01 max 0.5 mean 0.1",
// showing at most `max_values` leading values. The tensor must be on the
// CPU.
std::string SummarizeTensor(const Tensor& tensor, int max_values = 6);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_TENSOR_SUMMARY_H_
