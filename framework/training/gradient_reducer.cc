#include "framework/training/gradient_reducer.h"

#include <algorithm>

#include "platform/status_macros.h"

namespace scopeflow {

absl::Status GradientReducer::Start(
    const std::vector<std::vector<Tensor>>& replica_grads,
    const std::vector<std::string>& names, float scale) {
  SF_CHECK(!replica_grads.empty(), "no replica gradients to sum");
  for (size_t r = 0; r < replica_grads.size(); ++r) {
    SF_CHECK(replica_grads[r].size() == names.size(),
             "replica %d returned %d gradients, expected %d", r,
             replica_grads[r].size(), names.size());
  }
  const std::vector<Tensor>& first = replica_grads[0];
  offsets_.assign(names.size() + 1, 0);
  for (size_t g = 0; g < names.size(); ++g) {
    for (size_t r = 0; r < replica_grads.size(); ++r) {
      const Tensor& grad = replica_grads[r][g];
      SF_CHECK(grad.initialized() && grad.dtype() == kFloat32 &&
                   grad.place().is_cpu(),
               "gradient \"%s\" of replica %d is %s: expected a float32 "
               "tensor on the CPU",
               names[g], r, grad.DebugString());
      SF_CHECK(grad.dims() == first[g].dims(),
               "gradient \"%s\" of replica %d has shape %s, replica 0's %s",
               names[g], r, DimsToString(grad.dims()),
               DimsToString(first[g].dims()));
    }
    offsets_[g + 1] = offsets_[g] + first[g].numel();
  }
  total_ = offsets_.back();
  // The sums are views of one buffer, so that a sum across processes is one
  // call; dropping the old views first lets Allocate reuse the buffer.
  sums_.clear();
  SF_RETURN_IF_ERROR(flat_.Allocate(CPUPlace(), kFloat32, {total_}));
  sums_.resize(names.size());
  for (size_t g = 0; g < names.size(); ++g) {
    SF_ASSIGN_OR_RETURN(sums_[g], flat_.Slice(offsets_[g], offsets_[g + 1]));
    SF_RETURN_IF_ERROR(sums_[g].Reshape(first[g].dims()));
  }
  replica_grads_ = replica_grads;
  scale_ = scale;
  return absl::OkStatus();
}

void GradientReducer::ReducePart(int part, int parts) {
  const int64_t begin = total_ * part / parts;
  const int64_t end = total_ * (part + 1) / parts;
  const size_t replicas = replica_grads_.size();
  std::vector<const float*> in(replicas);
  for (size_t g = 0; g + 1 < offsets_.size(); ++g) {
    const int64_t lo = std::max(begin, offsets_[g]);
    const int64_t hi = std::min(end, offsets_[g + 1]);
    if (lo >= hi) continue;
    for (size_t r = 0; r < replicas; ++r) {
      in[r] = replica_grads_[r][g].data<float>();
    }
    float* out = sums_[g].data<float>();
    for (int64_t i = lo - offsets_[g]; i < hi - offsets_[g]; ++i) {
      float sum = in[0][i];
      for (size_t r = 1; r < replicas; ++r) sum += in[r][i];
      out[i] = sum * scale_;
    }
  }
}

void GradientReducer::ReleaseInputs() { replica_grads_.clear(); }

}  // namespace scopeflow
