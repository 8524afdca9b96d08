// Ops that copy every input element to new places by strides: transpose
// (permuted strides), expand (zero strides on broadcast dims) and tile
// (each dim split into [repeat, size] with a zero stride on the repeat).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/shape/shape_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::CopyStrided;
using shape_util::DescribeInput;

absl::Status InferTranspose(InferContext& context) {
  const VarInfo& x = context.Input("X");
  const auto& perm = context.attrs().Get<std::vector<int32_t>>("perm");
  const int rank = static_cast<int>(perm.size());
  // "perm" gives the output's rank even where X's is unknown.
  SF_CHECK(!x.has_dims || static_cast<int>(x.dims.size()) == rank,
           "attribute \"perm\" = [%s] has %d entries, but %s has rank %d: "
           "expected a permutation of its axes",
           absl::StrJoin(perm, ", "), rank, DescribeInput(context, "X"),
           x.dims.size());
  std::vector<bool> seen(rank, false);
  for (int32_t p : perm) {
    SF_CHECK(p >= 0 && p < rank && !seen[p],
             "attribute \"perm\" = [%s] is not a permutation of 0..%d, for %s",
             absl::StrJoin(perm, ", "), rank - 1, DescribeInput(context, "X"));
    seen[p] = true;
  }
  Dims out(rank, -1);
  if (x.has_dims) {
    for (int i = 0; i < rank; ++i) out[i] = x.dims[perm[i]];
  }
  context.SetOutput("Out", 0, x.dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status TransposeKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const auto& perm = context.attrs().Get<std::vector<int32_t>>("perm");
  const Dims x_strides = StridesOf(x.dims());
  Dims src_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) src_strides[i] = x_strides[perm[i]];
  CopyStrided(out->raw_data(), StridesOf(out->dims()), x.raw_data(),
              src_strides, out->dims(), SizeOf(x.dtype()));
  return absl::OkStatus();
}

// numpy.broadcast_to: X's dims, aligned to the right of "shape", must each
// be 1 or equal to the target dim.
absl::Status InferExpand(InferContext& context) {
  const VarInfo& x = context.Input("X");
  const auto& shape = context.attrs().Get<std::vector<int64_t>>("shape");
  if (x.has_dims) {
    const int rank = static_cast<int>(x.dims.size());
    const int offset = static_cast<int>(shape.size()) - rank;
    SF_CHECK(offset >= 0,
             "cannot expand %s to attribute \"shape\" = [%s]: the target has "
             "fewer dims than the input",
             DescribeInput(context, "X"), absl::StrJoin(shape, ", "));
    for (int i = 0; i < rank; ++i) {
      const int64_t d = x.dims[i];
      SF_CHECK(d < 0 || d == 1 || d == shape[offset + i],
               "cannot expand %s to attribute \"shape\" = [%s]: dim %d is %d, "
               "expected 1 or %d",
               DescribeInput(context, "X"), absl::StrJoin(shape, ", "), i, d,
               shape[offset + i]);
    }
  }
  context.SetOutput("Out", 0, x.dtype, Dims(shape.begin(), shape.end()));
  return absl::OkStatus();
}

absl::Status ExpandKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const int offset = out->rank() - x.rank();
  const Dims x_strides = StridesOf(x.dims());
  Dims src_strides(out->rank(), 0);
  for (int i = 0; i < x.rank(); ++i) {
    if (x.dims()[i] != 1) src_strides[offset + i] = x_strides[i];
  }
  CopyStrided(out->raw_data(), StridesOf(out->dims()), x.raw_data(),
              src_strides, out->dims(), SizeOf(x.dtype()));
  return absl::OkStatus();
}

// numpy.tile: "repeat_times" and X's dims are aligned to the right, the
// shorter padded with leading 1s.
absl::Status InferTile(InferContext& context) {
  const VarInfo& x = context.Input("X");
  const auto& repeats =
      context.attrs().Get<std::vector<int32_t>>("repeat_times");
  if (!x.has_dims) {
    VarInfo out;
    out.dtype = x.dtype;
    context.SetOutput("Out", out);
    return absl::OkStatus();
  }
  const int x_rank = static_cast<int>(x.dims.size());
  const int rep_rank = static_cast<int>(repeats.size());
  const int rank = std::max(x_rank, rep_rank);
  Dims out(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t d = i < rank - x_rank ? 1 : x.dims[i - (rank - x_rank)];
    const int64_t r = i < rank - rep_rank ? 1 : repeats[i - (rank - rep_rank)];
    out[i] = r == 0 ? 0 : (d < 0 ? -1 : d * r);
  }
  context.SetOutput("Out", 0, x.dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status TileKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const auto& repeats =
      context.attrs().Get<std::vector<int32_t>>("repeat_times");
  const int rank = out->rank();
  const int x_offset = rank - x.rank();
  const int rep_offset = rank - static_cast<int>(repeats.size());
  const Dims x_strides = StridesOf(x.dims());
  // Output dim i, of size r * d, read as two dims [r, d]: row-major, the
  // output is then the box [r_0, d_0, r_1, d_1, ...] where the source
  // ignores every r.
  Dims box, src_strides;
  for (int i = 0; i < rank; ++i) {
    const int64_t d = i < x_offset ? 1 : x.dims()[i - x_offset];
    box.push_back(i < rep_offset ? 1 : repeats[i - rep_offset]);
    src_strides.push_back(0);
    box.push_back(d);
    src_strides.push_back(i < x_offset ? 0 : x_strides[i - x_offset]);
  }
  CopyStrided(out->raw_data(), StridesOf(box), x.raw_data(), src_strides, box,
              SizeOf(x.dtype()));
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(transpose)
    .Input("X")
    .Output("Out")
    .Attr("perm", AttrType::kInts)
    .Infer(InferTranspose)
    .Kernel(DeviceType::kCPU, kFloat32, &TransposeKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &TransposeKernel)
    .Kernel(DeviceType::kCPU, kInt32, &TransposeKernel)
    .Kernel(DeviceType::kCPU, kInt64, &TransposeKernel)
    .Kernel(DeviceType::kCPU, kBool, &TransposeKernel);

SF_REGISTER_OP(expand)
    .Input("X")
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, NonNegative())
    .Infer(InferExpand)
    .Kernel(DeviceType::kCPU, kFloat32, &ExpandKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &ExpandKernel)
    .Kernel(DeviceType::kCPU, kInt32, &ExpandKernel)
    .Kernel(DeviceType::kCPU, kInt64, &ExpandKernel)
    .Kernel(DeviceType::kCPU, kBool, &ExpandKernel);

SF_REGISTER_OP(tile)
    .Input("X")
    .Output("Out")
    .Attr("repeat_times", AttrType::kInts, NonNegative())
    .Infer(InferTile)
    .Kernel(DeviceType::kCPU, kFloat32, &TileKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &TileKernel)
    .Kernel(DeviceType::kCPU, kInt32, &TileKernel)
    .Kernel(DeviceType::kCPU, kInt64, &TileKernel)
    .Kernel(DeviceType::kCPU, kBool, &TileKernel);

}  // namespace scopeflow
