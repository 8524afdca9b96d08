// The arithmetic of einsum on labelled tensors: diagonals, sums over
// labels, and contractions of two operands as one batched matrix product
// (operators/batched_gemm.h for float32 and float64). Used by the einsum
// op and its gradient op. Stateless functions over values the caller owns.
#ifndef SCOPEFLOW_OPERATORS_EINSUM_EINSUM_MATH_H_
#define SCOPEFLOW_OPERATORS_EINSUM_EINSUM_MATH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace einsum {

// A row-major tensor whose axes carry labels (see einsum_equation.h).
template <typename T>
struct Labeled {
  Dims dims;
  std::vector<int> labels;
  std::vector<T> data;
};

// A copy of `tensor` (on the CPU, of dtype T) with a label per axis.
template <typename T>
Labeled<T> FromTensor(const Tensor& tensor, std::vector<int> labels);

// The einsum of `operands` (labels may repeat within one: its diagonal),
// with the output's axes labelled `output` (each label once, each in some
// operand). `label_sizes` gives each label's broadcast size. Ellipsis
// labels of size 1 broadcast against larger ones.
template <typename T>
absl::StatusOr<Labeled<T>> Evaluate(std::vector<Labeled<T>> operands,
                                    const std::vector<int>& output,
                                    absl::Span<const int64_t> label_sizes);

// The gradient of the einsum with respect to operand `which`, given the
// gradient `out_grad` of its output (labelled as the output): dims and
// values of operand `which` as it was given (zero off the diagonals it
// reads, summed over the dimensions it was broadcast along).
template <typename T>
absl::StatusOr<std::vector<T>> OperandGradient(
    const std::vector<Labeled<T>>& operands, int which,
    const Labeled<T>& out_grad, absl::Span<const int64_t> label_sizes);

}  // namespace einsum
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_EINSUM_EINSUM_MATH_H_
