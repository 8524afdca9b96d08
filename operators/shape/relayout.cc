// Ops that copy every input element to new places by strides: transpose
// (permuted strides), expand (zero strides on broadcast dims) and tile
// (each dim split into [repeat, size] with a zero stride on the repeat).
// Their gradients add Out@GRAD back along the same strides.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/shape/shape_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::AddStrided;
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
absl::StatusOr<VarInfo> ExpandOutInfo(const InferContext& context) {
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
  return VarInfo{x.dtype, Dims(shape.begin(), shape.end()), true};
}

absl::Status InferExpand(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, ExpandOutInfo(context));
  context.SetOutput("Out", out);
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
VarInfo TileOutInfo(const InferContext& context) {
  const VarInfo& x = context.Input("X");
  const auto& repeats =
      context.attrs().Get<std::vector<int32_t>>("repeat_times");
  if (!x.has_dims) return shape_util::UnknownRank(x.dtype);
  const int x_rank = static_cast<int>(x.dims.size());
  const int rep_rank = static_cast<int>(repeats.size());
  const int rank = std::max(x_rank, rep_rank);
  Dims out(rank);
  for (int i = 0; i < rank; ++i) {
    const int64_t d = i < rank - x_rank ? 1 : x.dims[i - (rank - x_rank)];
    const int64_t r = i < rank - rep_rank ? 1 : repeats[i - (rank - rep_rank)];
    out[i] = r == 0 ? 0 : (d < 0 ? -1 : d * r);
  }
  return VarInfo{x.dtype, std::move(out), true};
}

absl::Status InferTile(InferContext& context) {
  context.SetOutput("Out", TileOutInfo(context));
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

// Transposing back: Out's axis i is X's axis perm[i], so the gradient is
// Out@GRAD transposed by the inverse permutation.
absl::Status MakeTransposeGrad(GradOpContext& grad) {
  const std::vector<std::string> x_grad = grad.InputGrad("X");
  if (x_grad.empty() || x_grad[0].empty()) return absl::OkStatus();
  std::vector<int32_t> perm;
  for (const AttrDef& attr : grad.forward().attrs()) {
    if (attr.name() == "perm") {
      perm.assign(attr.ints().values().begin(), attr.ints().values().end());
    }
  }
  const int rank = static_cast<int>(perm.size());
  std::vector<int32_t> inverse(rank, -1);
  for (int i = 0; i < rank; ++i) {
    SF_CHECK(perm[i] >= 0 && perm[i] < rank && inverse[perm[i]] < 0,
             "attribute \"perm\" = [%s] is not a permutation of 0..%d",
             absl::StrJoin(perm, ", "), rank - 1);
    inverse[perm[i]] = i;
  }
  OpDef& op = grad.AddOp("transpose");
  GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "Out", x_grad);
  AttrDef* attr = op.add_attrs();
  attr->set_name("perm");
  for (int32_t axis : inverse) attr->mutable_ints()->add_values(axis);
  return absl::OkStatus();
}

// expand_grad and tile_grad: X@GRAD gets X's shape once Out@GRAD is checked
// against the output the forward op makes of X.
absl::Status InferExpandGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, ExpandOutInfo(context));
  SF_RETURN_IF_ERROR(shape_util::CheckOutGrad(context, out));
  if (context.HasOutput("X@GRAD")) {
    context.SetOutput("X@GRAD", context.Input("X"));
  }
  return absl::OkStatus();
}

absl::Status InferTileGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(shape_util::CheckOutGrad(context, TileOutInfo(context)));
  if (context.HasOutput("X@GRAD")) {
    context.SetOutput("X@GRAD", context.Input("X"));
  }
  return absl::OkStatus();
}

// Every element of X was copied to each output element of its broadcast
// dims, so its gradient is the sum over them: Out@GRAD added into X@GRAD
// with stride 0 on those dims.
template <typename T>
absl::Status ExpandGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  T* dst = x_grad->data<T>();
  std::fill(dst, dst + x_grad->numel(), T(0));
  const int offset = grad.rank() - x_grad->rank();
  const Dims x_strides = StridesOf(x_grad->dims());
  Dims dst_strides(grad.rank(), 0);
  for (int i = 0; i < x_grad->rank(); ++i) {
    if (x_grad->dims()[i] != 1) dst_strides[offset + i] = x_strides[i];
  }
  AddStrided(dst, dst_strides, grad.data<T>(), StridesOf(grad.dims()),
             grad.dims());
  return absl::OkStatus();
}

// Out@GRAD read as the box [r_0, d_0, r_1, d_1, ...] of the forward kernel,
// summed over every repeat r into X@GRAD.
template <typename T>
absl::Status TileGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  Tensor* x_grad = context.Output("X@GRAD");
  T* dst = x_grad->data<T>();
  std::fill(dst, dst + x_grad->numel(), T(0));
  const auto& repeats =
      context.attrs().Get<std::vector<int32_t>>("repeat_times");
  const int rank = grad.rank();
  const int x_offset = rank - x_grad->rank();
  const int rep_offset = rank - static_cast<int>(repeats.size());
  const Dims x_strides = StridesOf(x_grad->dims());
  Dims box, dst_strides;
  for (int i = 0; i < rank; ++i) {
    box.push_back(i < rep_offset ? 1 : repeats[i - rep_offset]);
    dst_strides.push_back(0);
    box.push_back(i < x_offset ? 1 : x_grad->dims()[i - x_offset]);
    dst_strides.push_back(i < x_offset ? 0 : x_strides[i - x_offset]);
  }
  AddStrided(dst, dst_strides, grad.data<T>(), StridesOf(box), box);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(transpose)
    .Input("X")
    .Output("Out")
    .Attr("perm", AttrType::kInts)
    .Infer(InferTranspose)
    .Grad(GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
        MakeTransposeGrad))
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
    .Grad(GradSpec("expand_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
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
    .Grad(GradSpec("tile_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &TileKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &TileKernel)
    .Kernel(DeviceType::kCPU, kInt32, &TileKernel)
    .Kernel(DeviceType::kCPU, kInt64, &TileKernel)
    .Kernel(DeviceType::kCPU, kBool, &TileKernel);

SF_REGISTER_OP(expand_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("shape", AttrType::kInt64s, NonNegative())
    .Infer(InferExpandGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &ExpandGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ExpandGradKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ExpandGradKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ExpandGradKernel<int64_t>);

SF_REGISTER_OP(tile_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("repeat_times", AttrType::kInts, NonNegative())
    .Infer(InferTileGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &TileGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &TileGradKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &TileGradKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &TileGradKernel<int64_t>);

}  // namespace scopeflow
