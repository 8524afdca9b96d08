// CUDA kernels of the ops of relayout.cc: transpose, expand and tile copy
// X by strides (the CPU kernels' boxes, walked by the strided kernel), and
// expand_grad and tile_grad sum Out@GRAD back along the same strides.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/common.h"
#include "operators/shape/strided_cuda.h"
#include "operators/value_input.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status TransposeCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const auto& perm = context.attrs().Get<std::vector<int32_t>>("perm");
  const Dims x_strides = StridesOf(x.dims());
  Dims src_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) src_strides[i] = x_strides[perm[i]];
  CopyStridedOnCuda(*cuda, out->raw_data(), StridesOf(out->dims()),
                    x.raw_data(), src_strides, out->dims(), SizeOf(x.dtype()));
  return CudaLaunchCheck("transpose");
}

absl::Status ExpandCuda(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const int offset = out->rank() - x.rank();
  const Dims x_strides = StridesOf(x.dims());
  Dims src_strides(out->rank(), 0);
  for (int i = 0; i < x.rank(); ++i) {
    if (x.dims()[i] != 1) src_strides[offset + i] = x_strides[i];
  }
  CopyStridedOnCuda(*cuda, out->raw_data(), StridesOf(out->dims()),
                    x.raw_data(), src_strides, out->dims(), SizeOf(x.dtype()));
  return CudaLaunchCheck("expand");
}

// As relayout.cc: numpy.tile's output dims, nullopt on int64 overflow.
std::optional<Dims> TiledDims(absl::Span<const int64_t> x,
                              absl::Span<const int64_t> repeats) {
  const int x_rank = static_cast<int>(x.size());
  const int rep_rank = static_cast<int>(repeats.size());
  const int rank = std::max(x_rank, rep_rank);
  Dims out(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t d = i < rank - x_rank ? 1 : x[i - (rank - x_rank)];
    const int64_t r = i < rank - rep_rank ? 1 : repeats[i - (rank - rep_rank)];
    if (r == 0 || d < 0) {
      out[i] = r == 0 ? 0 : -1;
      continue;
    }
    const std::optional<int64_t> size = CheckedMul(d, r);
    if (!size.has_value()) return std::nullopt;
    out[i] = *size;
  }
  return out;
}

// Tile's repeats, checked as the CPU kernels check them: non-negative, and
// tiling `x` by them makes `out` (Out's or Out@GRAD's shape).
absl::StatusOr<std::vector<int64_t>> KernelRepeats(
    const KernelContext& context, absl::Span<const int64_t> x,
    absl::Span<const int64_t> out, absl::string_view out_slot) {
  SF_ASSIGN_OR_RETURN(IntValues repeats,
                      IntListOf(context, "RepeatTimes", "repeat_times"));
  for (int64_t r : repeats.values) {
    SF_CHECK(r >= 0, "%s: expected repeats >= 0, got %d", repeats.source(), r);
  }
  const std::optional<Dims> tiled = TiledDims(x, repeats.values);
  SF_CHECK(tiled.has_value() && absl::Span<const int64_t>(*tiled) == out,
           "%s tiles X's shape %s, but \"%s\" has shape %s", repeats.source(),
           DimsToString(x), out_slot, DimsToString(out));
  return std::move(repeats.values);
}

// Output dim i, of size r * d, read as two dims [r, d]: the output is the
// box [r_0, d_0, r_1, d_1, ...] where X's strides ignore every r.
struct TileBox {
  Dims box, x_strides;
};

TileBox TileBoxOf(absl::Span<const int64_t> x_dims, int rank,
                  const std::vector<int64_t>& repeats) {
  const int x_offset = rank - static_cast<int>(x_dims.size());
  const int rep_offset = rank - static_cast<int>(repeats.size());
  const Dims x_strides = StridesOf(x_dims);
  TileBox tile;
  for (int i = 0; i < rank; ++i) {
    tile.box.push_back(i < rep_offset ? 1 : repeats[i - rep_offset]);
    tile.x_strides.push_back(0);
    tile.box.push_back(i < x_offset ? 1 : x_dims[i - x_offset]);
    tile.x_strides.push_back(i < x_offset ? 0 : x_strides[i - x_offset]);
  }
  return tile;
}

absl::Status TileCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> repeats,
                      KernelRepeats(context, x.dims(), out->dims(), "Out"));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const TileBox tile = TileBoxOf(x.dims(), out->rank(), repeats);
  CopyStridedOnCuda(*cuda, out->raw_data(), StridesOf(tile.box), x.raw_data(),
                    tile.x_strides, tile.box, SizeOf(x.dtype()));
  return CudaLaunchCheck("tile");
}

// Sums Out@GRAD (walked as `box` with `grad_strides`) into X@GRAD through
// `x_strides`, 0 on the dims the forward op broadcast or repeated along.
template <typename T>
absl::Status SumIntoXGrad(KernelContext& context, const Tensor& grad,
                          Tensor* x_grad, absl::Span<const int64_t> x_strides,
                          absl::Span<const int64_t> grad_strides,
                          absl::Span<const int64_t> box) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  if (x_grad->numel() == 0) return absl::OkStatus();
  if (grad.numel() == 0) {
    return CudaCheck(cudaMemsetAsync(x_grad->raw_data(), 0, x_grad->nbytes(),
                                     cuda->stream()),
                     context.op_type().c_str());
  }
  // Every element of X@GRAD has at least one element of Out@GRAD: the
  // sum writes them all.
  return SumStridedOnCuda<T>(*cuda, x_grad->data<T>(), x_strides,
                             grad.data<T>(), grad_strides, box,
                             /*accumulate=*/false);
}

template <typename T>
absl::Status ExpandGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  const int offset = grad.rank() - x_grad->rank();
  const Dims x_strides = StridesOf(x_grad->dims());
  Dims dst_strides(grad.rank(), 0);
  for (int i = 0; i < x_grad->rank(); ++i) {
    if (x_grad->dims()[i] != 1) dst_strides[offset + i] = x_strides[i];
  }
  return SumIntoXGrad<T>(context, grad, x_grad, dst_strides,
                         StridesOf(grad.dims()), grad.dims());
}

template <typename T>
absl::Status TileGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  SF_ASSIGN_OR_RETURN(
      const std::vector<int64_t> repeats,
      KernelRepeats(context, x_grad->dims(), grad.dims(), "Out@GRAD"));
  const TileBox tile = TileBoxOf(x_grad->dims(), grad.rank(), repeats);
  return SumIntoXGrad<T>(context, grad, x_grad, tile.x_strides,
                         StridesOf(tile.box), tile.box);
}

}  // namespace

#define SF_REGISTER_COPY_CUDA(op, fn)                       \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32, &fn); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64, &fn); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt32, &fn);   \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt64, &fn);   \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kBool, &fn)

SF_REGISTER_COPY_CUDA(transpose, TransposeCuda);
SF_REGISTER_COPY_CUDA(expand, ExpandCuda);
SF_REGISTER_COPY_CUDA(tile, TileCuda);
#undef SF_REGISTER_COPY_CUDA

#define SF_REGISTER_SUM_CUDA(op, fn)                                \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32, &fn<float>);  \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64, &fn<double>); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt32, &fn<int32_t>);  \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt64, &fn<int64_t>)

SF_REGISTER_SUM_CUDA(expand_grad, ExpandGradCuda);
SF_REGISTER_SUM_CUDA(tile_grad, TileGradCuda);
#undef SF_REGISTER_SUM_CUDA

}  // namespace scopeflow
