// Ops that copy every input element to new places by strides: transpose
// (permuted strides), expand (zero strides on broadcast dims) and tile
// (each dim split into [repeat, size] with a zero stride on the repeat).
// Their gradients add Out@GRAD back along the same strides.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/shape/relayout_util.h"
#include "operators/shape/shape_util.h"
#include "operators/strided_copy.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::AddStrided;
using shape_util::CheckRepeats;
using shape_util::DescribeInput;
using shape_util::KernelRepeats;
using shape_util::TileBox;
using shape_util::TileBoxOf;
using shape_util::TiledDims;

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
  const Dims src_strides = shape_util::TransposedStrides(
      x.dims(), context.attrs().Get<std::vector<int32_t>>("perm"));
  CopyStrided(out->raw_data(), StridesOf(out->dims()), x.raw_data(),
              src_strides, out->dims(), SizeOf(x.dtype()));
  return absl::OkStatus();
}

// The target shape of expand, from input "Shape" or attribute "shape";
// nullopt while inference cannot see the input's values. Dims must be
// non-negative (the attribute's check says so for the attribute).
absl::StatusOr<std::optional<IntValues>> ExpandShape(
    const InferContext& context) {
  SF_ASSIGN_OR_RETURN(std::optional<IntValues> shape,
                      IntListOf(context, "Shape", "shape"));
  if (shape.has_value()) {
    for (int64_t s : shape->values) {
      SF_CHECK(s >= 0, "%s: expected dims >= 0, got %d, to expand %s",
               shape->source(), s, DescribeInput(context, "X"));
    }
  }
  return shape;
}

// numpy broadcasting of X's dims and the target shape, as ONNX Expand: both
// are aligned to the right, a 1 on either side takes the other side's dim,
// and the shape may have fewer dims than X.
absl::StatusOr<VarInfo> ExpandOutInfo(const InferContext& context) {
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> shape,
                      ExpandShape(context));
  const int64_t shape_rank = shape.has_value()
                                 ? static_cast<int64_t>(shape->values.size())
                                 : IntListInputLength(context, "Shape");
  if (!x.has_dims || shape_rank < 0) {
    return shape_util::UnknownRank(x.dtype);
  }
  const int x_rank = static_cast<int>(x.dims.size());
  const int rank = std::max<int>(x_rank, static_cast<int>(shape_rank));
  Dims out(rank, -1);
  for (int i = 0; i < rank; ++i) {
    const int xi = i - (rank - x_rank);
    const int si = i - (rank - static_cast<int>(shape_rank));
    const int64_t d = xi >= 0 ? x.dims[xi] : 1;
    if (!shape.has_value()) {
      // A known dim of X other than 1 stays: the shape must have 1 or it
      // there. (Prepare then checks expand_grad's Out@GRAD against every
      // dim the kernel indexes by.)
      if (si < 0 || (d >= 0 && d != 1)) out[i] = d;
      continue;
    }
    const int64_t s = si >= 0 ? shape->values[si] : 1;
    if (s == 1) {
      out[i] = d;
    } else {
      SF_CHECK(d < 0 || d == 1 || d == s,
               "cannot expand %s to %s: dim %d is %d, expected 1 or %d",
               DescribeInput(context, "X"), shape->source(), xi, d, s);
      out[i] = s;
    }
  }
  if (shape.has_value()) {
    SF_CHECK(CheckedNumElements(out).has_value(),
             "cannot expand %s to %s: more elements than int64 holds",
             DescribeInput(context, "X"), shape->source());
  }
  return VarInfo{x.dtype, std::move(out), true};
}

absl::Status InferExpand(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, ExpandOutInfo(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status ExpandKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  const Dims src_strides = shape_util::BroadcastStrides(x.dims(), out->rank());
  CopyStrided(out->raw_data(), StridesOf(out->dims()), x.raw_data(),
              src_strides, out->dims(), SizeOf(x.dtype()));
  return absl::OkStatus();
}

absl::StatusOr<VarInfo> TileOutInfo(const InferContext& context) {
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> repeats,
                      IntListOf(context, "RepeatTimes", "repeat_times"));
  if (!repeats.has_value()) {
    // The dims the repeats reach wait for their values.
    const int64_t n = IntListInputLength(context, "RepeatTimes");
    if (!x.has_dims || n < 0) return shape_util::UnknownRank(x.dtype);
    const int x_rank = static_cast<int>(x.dims.size());
    const int rank = std::max<int>(x_rank, static_cast<int>(n));
    Dims out(rank, -1);
    for (int i = 0; i < rank - n; ++i) out[i] = x.dims[i - (rank - x_rank)];
    return VarInfo{x.dtype, std::move(out), true};
  }
  SF_RETURN_IF_ERROR(CheckRepeats(*repeats));
  if (!x.has_dims) return shape_util::UnknownRank(x.dtype);
  const std::optional<Dims> out = TiledDims(x.dims, repeats->values);
  SF_CHECK(out.has_value(),
           "%s repeats %s to more elements in a dim than int64 holds",
           repeats->source(), DescribeInput(context, "X"));
  return VarInfo{x.dtype, *out, true};
}

absl::Status InferTile(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, TileOutInfo(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status TileKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> repeats,
                      KernelRepeats(context, x.dims(), out->dims(), "Out"));
  const TileBox tile = TileBoxOf(x.dims(), out->rank(), repeats);
  CopyStrided(out->raw_data(), StridesOf(tile.box), x.raw_data(),
              tile.x_strides, tile.box, SizeOf(x.dtype()));
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
  SF_ASSIGN_OR_RETURN(const VarInfo out, TileOutInfo(context));
  SF_RETURN_IF_ERROR(shape_util::CheckOutGrad(context, out));
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
  const Dims dst_strides =
      shape_util::BroadcastStrides(x_grad->dims(), grad.rank());
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
  SF_ASSIGN_OR_RETURN(
      const std::vector<int64_t> repeats,
      KernelRepeats(context, x_grad->dims(), grad.dims(), "Out@GRAD"));
  T* dst = x_grad->data<T>();
  std::fill(dst, dst + x_grad->numel(), T(0));
  const TileBox tile = TileBoxOf(x_grad->dims(), grad.rank(), repeats);
  AddStrided(dst, tile.x_strides, grad.data<T>(), StridesOf(tile.box),
             tile.box);
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
    .Kernels(DeviceType::kCPU, AllTypes(),
             [](auto) { return &TransposeKernel; });

// The target shape comes from input "Shape" (int32 or int64, 1-D) when it
// is bound, else from attribute "shape"; the repeats of tile likewise from
// "RepeatTimes" or "repeat_times". The gradient ops read the same inputs.
SF_REGISTER_OP(expand)
    .Input("X")
    .Input("Shape", /*optional=*/true)
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}),
          NonNegative())
    .Infer(InferExpand)
    .Grad(GradSpec("expand_grad")
              .ReadInput("X")
              .ReadInput("Shape")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &ExpandKernel; });

SF_REGISTER_OP(tile)
    .Input("X")
    .Input("RepeatTimes", /*optional=*/true)
    .Output("Out")
    .Attr("repeat_times", AttrType::kInts, AttrValue(std::vector<int32_t>{}),
          NonNegative())
    .Infer(InferTile)
    .Grad(GradSpec("tile_grad")
              .ReadInput("X")
              .ReadInput("RepeatTimes")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &TileKernel; });

SF_REGISTER_OP(expand_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Input("Shape", /*optional=*/true)
    .Output("X@GRAD", /*optional=*/true)
    .Attr("shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}),
          NonNegative())
    .Infer(InferExpandGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &ExpandGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ExpandGradKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ExpandGradKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ExpandGradKernel<int64_t>);

SF_REGISTER_OP(tile_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Input("RepeatTimes", /*optional=*/true)
    .Output("X@GRAD", /*optional=*/true)
    .Attr("repeat_times", AttrType::kInts, AttrValue(std::vector<int32_t>{}),
          NonNegative())
    .Infer(InferTileGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &TileGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &TileGradKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &TileGradKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &TileGradKernel<int64_t>);

}  // namespace scopeflow
