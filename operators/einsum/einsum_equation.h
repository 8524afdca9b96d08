// Parsing ONNX / numpy einsum equations ("bij,bjk->bik", "ii->i",
// "...ij->...ji", implicit "ij,jk") against the ranks of their operands.
#ifndef SCOPEFLOW_OPERATORS_EINSUM_EINSUM_EQUATION_H_
#define SCOPEFLOW_OPERATORS_EINSUM_EINSUM_EQUATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace einsum {

// Labels are the letters' character codes ('A'..'Z', 'a'..'z'), so that
// sorting them gives numpy's order for an implicit output; the dimensions
// an ellipsis stands for are kEllipsisLabel + k for the k-th of the
// broadcast ellipsis dimensions (aligned from the right, as numpy
// broadcasts).
constexpr int kEllipsisLabel = 128;

struct Equation {
  // One label per axis of each operand (repeats: a diagonal).
  std::vector<std::vector<int>> inputs;
  // One label per axis of the output, each once.
  std::vector<int> output;
};

// The equation for operands of `ranks`. An error names what is wrong with
// the equation (bad characters, a term per operand, an ellipsis twice in a
// term, a term's labels against its operand's rank, output labels that
// are repeated or in no input).
absl::StatusOr<Equation> Parse(absl::string_view equation,
                               absl::Span<const int> ranks);

// The size of each label (indexed by label) given the operands' dims (-1:
// unknown), checking that a letter has one size everywhere and that the
// ellipsis dimensions broadcast. Entries of absent labels are 0.
absl::StatusOr<std::vector<int64_t>> LabelSizes(
    const Equation& equation, absl::Span<const Dims> operand_dims);

// "b, i, j" or "..., j" style name of a label, for errors.
std::string LabelName(int label);

}  // namespace einsum
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_EINSUM_EINSUM_EQUATION_H_
