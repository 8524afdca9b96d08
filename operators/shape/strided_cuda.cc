#include "operators/shape/strided_cuda.h"

#include <optional>

#include "operators/shape/shape_kernels_cuda.h"
#include "operators/strided_copy.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using Dims8 = absl::InlinedVector<int64_t, 8>;

// Copies a merged box, one launch per index of its outer dims while it has
// more than the kernel walks (rare: merging leaves few dims).
void CopyMerged(cudaStream_t stream, char* dst, const Dims8& dims,
                const Dims8& dst_strides, const char* src,
                const Dims8& src_strides, int first, size_t size) {
  const int rank = static_cast<int>(dims.size()) - first;
  if (rank > cuda::kMaxBoxRank) {
    const int64_t bytes = static_cast<int64_t>(size);
    for (int64_t i = 0; i < dims[first]; ++i) {
      CopyMerged(stream, dst + i * dst_strides[first] * bytes, dims,
                 dst_strides, src + i * src_strides[first] * bytes, src_strides,
                 first + 1, size);
    }
    return;
  }
  cuda::StridedBox box;
  box.rank = rank;
  for (int k = 0; k < rank; ++k) {
    box.dims[k] = dims[first + k];
    box.dst_strides[k] = dst_strides[first + k];
    box.src_strides[k] = src_strides[first + k];
  }
  cuda::LaunchStridedCopy(dst, src, box, static_cast<int>(size), stream);
}

// The dims of a merged sum box: kept (destination stride > 0) and summed.
struct SumDims {
  Dims8 kept, kept_dst, kept_src, reduced, reduced_src;
};

template <typename T>
absl::Status SumSplit(CudaContext& cuda, T* dst, const T* src, const SumDims& d,
                      bool accumulate) {
  // Too many dims of one kind: one sum per index of the outermost (the
  // summed ones accumulating after the first).
  if (d.kept.size() > cuda::kMaxBoxRank) {
    SumDims inner = d;
    inner.kept.erase(inner.kept.begin());
    inner.kept_dst.erase(inner.kept_dst.begin());
    inner.kept_src.erase(inner.kept_src.begin());
    for (int64_t i = 0; i < d.kept[0]; ++i) {
      SF_RETURN_IF_ERROR(SumSplit(cuda, dst + i * d.kept_dst[0],
                                  src + i * d.kept_src[0], inner, accumulate));
    }
    return absl::OkStatus();
  }
  if (d.reduced.size() > cuda::kMaxBoxRank) {
    SumDims inner = d;
    inner.reduced.erase(inner.reduced.begin());
    inner.reduced_src.erase(inner.reduced_src.begin());
    for (int64_t i = 0; i < d.reduced[0]; ++i) {
      SF_RETURN_IF_ERROR(SumSplit(cuda, dst, src + i * d.reduced_src[0], inner,
                                  accumulate || i > 0));
    }
    return absl::OkStatus();
  }
  cuda::SumBox box;
  box.kept_rank = static_cast<int>(d.kept.size());
  for (int k = 0; k < box.kept_rank; ++k) {
    box.kept_dims[k] = d.kept[k];
    box.kept_out_strides[k] = d.kept_dst[k];
    box.kept_src_strides[k] = d.kept_src[k];
  }
  box.reduced_rank = static_cast<int>(d.reduced.size());
  for (int k = 0; k < box.reduced_rank; ++k) {
    box.reduced_dims[k] = d.reduced[k];
    box.reduced_src_strides[k] = d.reduced_src[k];
  }
  const cuda::SumPlan plan = cuda::PlanStridedSum<T>(box);
  SF_ASSIGN_OR_RETURN(void* workspace, cuda.Workspace(plan.workspace_bytes));
  cuda::LaunchStridedSum<T>(plan, box, dst, src, accumulate, workspace,
                            cuda.stream());
  return CudaLaunchCheck("strided sum");
}

}  // namespace

void CopyStridedOnCuda(const CudaContext& cuda, void* dst,
                       absl::Span<const int64_t> dst_strides, const void* src,
                       absl::Span<const int64_t> src_strides,
                       absl::Span<const int64_t> dims, size_t element_size) {
  const std::optional<MergedBox> box = MergeBox(dims, dst_strides, src_strides);
  if (!box.has_value()) return;
  CopyMerged(cuda.stream(), static_cast<char*>(dst), box->dims,
             box->dst_strides, static_cast<const char*>(src), box->src_strides,
             0, element_size);
}

template <typename T>
absl::Status SumStridedOnCuda(CudaContext& cuda, T* dst,
                              absl::Span<const int64_t> dst_strides,
                              const T* src,
                              absl::Span<const int64_t> src_strides,
                              absl::Span<const int64_t> dims, bool accumulate) {
  const std::optional<MergedBox> box = MergeBox(dims, dst_strides, src_strides);
  if (!box.has_value()) return absl::OkStatus();
  SumDims d;
  for (size_t k = 0; k < box->dims.size(); ++k) {
    if (box->dst_strides[k] == 0) {
      d.reduced.push_back(box->dims[k]);
      d.reduced_src.push_back(box->src_strides[k]);
    } else {
      d.kept.push_back(box->dims[k]);
      d.kept_dst.push_back(box->dst_strides[k]);
      d.kept_src.push_back(box->src_strides[k]);
    }
  }
  return SumSplit(cuda, dst, src, d, accumulate);
}

template absl::Status SumStridedOnCuda<float>(CudaContext&, float*,
                                              absl::Span<const int64_t>,
                                              const float*,
                                              absl::Span<const int64_t>,
                                              absl::Span<const int64_t>, bool);
template absl::Status SumStridedOnCuda<double>(CudaContext&, double*,
                                               absl::Span<const int64_t>,
                                               const double*,
                                               absl::Span<const int64_t>,
                                               absl::Span<const int64_t>, bool);
template absl::Status SumStridedOnCuda<int32_t>(
    CudaContext&, int32_t*, absl::Span<const int64_t>, const int32_t*,
    absl::Span<const int64_t>, absl::Span<const int64_t>, bool);
template absl::Status SumStridedOnCuda<int64_t>(
    CudaContext&, int64_t*, absl::Span<const int64_t>, const int64_t*,
    absl::Span<const int64_t>, absl::Span<const int64_t>, bool);

}  // namespace scopeflow
