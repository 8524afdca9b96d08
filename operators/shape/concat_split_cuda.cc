// CUDA kernels of the ops of concat_split.cc. Each input (or output) is an
// [outer, row] box placed at a column offset of the joined tensor's
// [outer, joined_row] rows, as the CPU kernels place it; one strided copy
// per piece.
#include <cstdint>
#include <vector>

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/shape/shape_util.h"
#include "operators/shape/strided_cuda.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The joined tensor of `dims` split at `axis`: rows of `inner` elements
// below the axis, `outer` of them above it.
struct Rows {
  int axis;
  int64_t outer, inner, joined_row;
};

Rows RowsOf(const KernelContext& context, const Dims& dims) {
  const int32_t attr_axis = context.attrs().Get<int32_t>("axis");
  const int rank = static_cast<int>(dims.size());
  Rows rows;
  rows.axis = attr_axis < 0 ? attr_axis + rank : attr_axis;
  const absl::Span<const int64_t> d(dims);
  rows.outer = NumElements(d.subspan(0, rows.axis));
  rows.inner = NumElements(d.subspan(rows.axis + 1));
  rows.joined_row = d[rows.axis] * rows.inner;
  return rows;
}

// The piece of `row` elements per outer row at column `offset` of the
// joined tensor: copied into it, or out of it.
void CopyIntoJoined(const CudaContext& cuda, const Rows& rows, char* joined,
                    const void* piece, int64_t row, int64_t offset,
                    size_t size) {
  CopyStridedOnCuda(cuda, joined + offset * static_cast<int64_t>(size),
                    {rows.joined_row, 1}, piece, {row, 1}, {rows.outer, row},
                    size);
}

void CopyOutOfJoined(const CudaContext& cuda, const Rows& rows,
                     const char* joined, void* piece, int64_t row,
                     int64_t offset, size_t size) {
  CopyStridedOnCuda(cuda, piece, {row, 1},
                    joined + offset * static_cast<int64_t>(size),
                    {rows.joined_row, 1}, {rows.outer, row}, size);
}

absl::Status ConcatCuda(KernelContext& context) {
  Tensor* out = context.Output("Out");
  // A zero-byte tensor has no buffer to offset into.
  if (out->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Rows rows = RowsOf(context, out->dims());
  const size_t size = SizeOf(out->dtype());
  char* joined = static_cast<char*>(out->raw_data());
  int64_t offset = 0;
  for (int i = 0; i < context.InputCount("X"); ++i) {
    const Tensor& x = context.Input("X", i);
    const int64_t row = x.dims()[rows.axis] * rows.inner;
    CopyIntoJoined(*cuda, rows, joined, x.raw_data(), row, offset, size);
    offset += row;
  }
  return CudaLaunchCheck("concat");
}

absl::Status SplitCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  // Then every output is empty too, and there is no buffer to offset into.
  if (x.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Rows rows = RowsOf(context, x.dims());
  const size_t size = SizeOf(x.dtype());
  const char* joined = static_cast<const char*>(x.raw_data());
  int64_t offset = 0;
  for (int i = 0; i < context.OutputCount("Out"); ++i) {
    Tensor* out = context.Output("Out", i);
    const int64_t row = out->dims()[rows.axis] * rows.inner;
    CopyOutOfJoined(*cuda, rows, joined, out->raw_data(), row, offset, size);
    offset += row;
  }
  return CudaLaunchCheck("split");
}

absl::Status ConcatGradCuda(KernelContext& context) {
  const Tensor& grad = context.Input("Out@GRAD");
  // Then every input is empty too, and there is no buffer to offset into.
  if (grad.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Rows rows = RowsOf(context, grad.dims());
  const size_t size = SizeOf(grad.dtype());
  std::vector<int64_t> offsets(context.InputCount("X") + 1, 0);
  for (int i = 0; i < context.InputCount("X"); ++i) {
    offsets[i + 1] =
        offsets[i] + context.Input("X", i).dims()[rows.axis] * rows.inner;
  }
  const char* joined = static_cast<const char*>(grad.raw_data());
  for (int j = 0; j < context.OutputCount("X@GRAD"); ++j) {
    const int i = shape_util::ConcatGradInputIndex(context.attrs(), j);
    CopyOutOfJoined(*cuda, rows, joined,
                    context.Output("X@GRAD", j)->raw_data(),
                    offsets[i + 1] - offsets[i], offsets[i], size);
  }
  return CudaLaunchCheck("concat_grad");
}

}  // namespace

#define SF_REGISTER_CONCAT_CUDA(op, fn)                     \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32, &fn); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64, &fn); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt32, &fn);   \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt64, &fn)

SF_REGISTER_CONCAT_CUDA(concat, ConcatCuda);
SF_REGISTER_KERNEL(concat, DeviceType::kCUDA, kBool, &ConcatCuda);
SF_REGISTER_CONCAT_CUDA(split, SplitCuda);
SF_REGISTER_KERNEL(split, DeviceType::kCUDA, kBool, &SplitCuda);
SF_REGISTER_CONCAT_CUDA(concat_grad, ConcatGradCuda);
#undef SF_REGISTER_CONCAT_CUDA

}  // namespace scopeflow
