#include "operators/elementwise/broadcast.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace elementwise {

absl::Status InferBroadcast(InferContext& context,
                            std::initializer_list<absl::string_view> slots,
                            DataType dtype, absl::string_view out) {
  VarInfo result;
  result.dtype = dtype;
  // The usual case first: operands of one known shape.
  const VarInfo& first = context.Input(*slots.begin());
  bool all_same = first.has_dims;
  for (absl::string_view slot : slots) {
    const VarInfo& info = context.Input(slot);
    if (!info.has_dims) {
      context.SetOutput(out, result);  // Rank unknown.
      return absl::OkStatus();
    }
    all_same = all_same && info.dims == first.dims;
  }
  if (all_same) {
    context.SetOutput(out, 0, dtype, first.dims);
    return absl::OkStatus();
  }
  Dims dims;
  for (absl::string_view slot : slots) {
    absl::StatusOr<Dims> broadcast =
        BroadcastDims(dims, context.Input(slot).dims);
    if (!broadcast.ok()) {
      std::vector<std::string> operands;
      for (absl::string_view s : slots) {
        operands.push_back(absl::StrFormat(
            "\"%s\" (variable \"%s\", shape %s)", s, context.InputName(s),
            DimsToString(context.Input(s).dims)));
      }
      return absl::InvalidArgumentError(
          absl::StrFormat("inputs %s do not broadcast together",
                          absl::StrJoin(operands, ", ")));
    }
    dims = *std::move(broadcast);
  }
  context.SetOutput(out, 0, dtype, std::move(dims));
  return absl::OkStatus();
}

BroadcastPlan MakeBroadcastPlan(
    absl::Span<const int64_t> out_dims,
    std::initializer_list<absl::Span<const int64_t>> operands) {
  const int rank = static_cast<int>(out_dims.size());
  // Each operand's stride per output dimension, 0 where it is broadcast.
  std::array<Dims, BroadcastPlan::kMaxOperands> full;
  int k = 0;
  for (absl::Span<const int64_t> dims : operands) {
    const int pad = rank - static_cast<int>(dims.size());
    full[k].assign(rank, 0);
    int64_t stride = 1;
    for (int d = rank - 1; d >= pad; --d) {
      const int64_t size = dims[d - pad];
      if (size != 1) full[k][d] = stride;
      stride *= size;
    }
    ++k;
  }
  const int num_operands = k;
  BroadcastPlan plan;
  for (int d = 0; d < rank; ++d) {
    if (out_dims[d] == 1) continue;
    bool merge = !plan.dims.empty();
    for (int i = 0; i < num_operands && merge; ++i) {
      merge = plan.strides[i].back() == full[i][d] * out_dims[d];
    }
    if (merge) {
      plan.dims.back() *= out_dims[d];
      for (int i = 0; i < num_operands; ++i) {
        plan.strides[i].back() = full[i][d];
      }
    } else {
      plan.dims.push_back(out_dims[d]);
      for (int i = 0; i < num_operands; ++i) {
        plan.strides[i].push_back(full[i][d]);
      }
    }
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    for (int i = 0; i < num_operands; ++i) plan.strides[i].push_back(0);
  }
  return plan;
}

absl::Status CheckBroadcastGrad(const InferContext& context,
                                std::initializer_list<absl::string_view> slots,
                                absl::string_view grad) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, *slots.begin(), grad));
  const VarInfo& grad_info = context.Input(grad);
  if (!grad_info.has_dims) return absl::OkStatus();
  auto describe_inputs = [&] {
    std::vector<std::string> operands;
    for (absl::string_view s : slots) {
      operands.push_back(absl::StrFormat("\"%s\" (variable \"%s\", shape %s)",
                                         s, context.InputName(s),
                                         DimsToString(context.Input(s).dims)));
    }
    return absl::StrJoin(operands, ", ");
  };
  Dims expected;
  for (absl::string_view slot : slots) {
    const VarInfo& info = context.Input(slot);
    if (!info.has_dims) return absl::OkStatus();
    absl::StatusOr<Dims> broadcast = BroadcastDims(expected, info.dims);
    SF_CHECK(broadcast.ok(), "inputs %s do not broadcast together",
             describe_inputs());
    expected = *std::move(broadcast);
  }
  bool matches = expected.size() == grad_info.dims.size();
  for (size_t d = 0; matches && d < expected.size(); ++d) {
    matches = expected[d] < 0 || grad_info.dims[d] < 0 ||
              expected[d] == grad_info.dims[d];
  }
  SF_CHECK(matches,
           "input \"%s\" (variable \"%s\", shape %s) must have the "
           "broadcast shape %s of inputs %s",
           grad, context.InputName(grad), DimsToString(grad_info.dims),
           DimsToString(expected), describe_inputs());
  return absl::OkStatus();
}

bool IsTrailingBlock(absl::Span<const int64_t> dims,
                     absl::Span<const int64_t> out_dims) {
  size_t lead = 0;
  while (lead < dims.size() && dims[lead] == 1) ++lead;
  const size_t rank = dims.size() - lead;
  if (rank > out_dims.size()) return false;
  return std::equal(dims.begin() + lead, dims.end(), out_dims.end() - rank);
}

}  // namespace elementwise
}  // namespace scopeflow
