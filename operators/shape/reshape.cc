// Ops that change a tensor's dims but not its elements: reshape, flatten,
// squeeze, unsqueeze (their outputs are views of their inputs, no copy),
// and shape (the dims as an int64 tensor). The first four share one
// gradient op, reshape_grad.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/shape/shape_util.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::DescribeInput;
using shape_util::FullyKnown;
using shape_util::ViewKernel;

// "shape": each entry positive, 0 (the input's dim at that index) or -1
// (inferred from the element count, at most once).
absl::Status CheckReshapeShape(const AttrValue& value) {
  const auto& shape = std::get<std::vector<int64_t>>(value);
  int inferred = 0;
  for (int64_t d : shape) {
    SF_CHECK(d >= -1, "must hold dims >= -1, got %d", d);
    if (d == -1) ++inferred;
  }
  SF_CHECK(inferred <= 1, "may hold at most one -1, got [%s]",
           absl::StrJoin(shape, ", "));
  return absl::OkStatus();
}

// The target shape's values, from attribute "shape" or input "Shape": as
// CheckReshapeShape, and with "allowzero" (a 0 is a dim of size 0) no -1
// beside a 0, which would leave the -1 any size.
absl::Status CheckReshapeTarget(const IntValues& target, bool allow_zero) {
  int inferred = 0;
  bool zero = false;
  for (int64_t d : target.values) {
    SF_CHECK(d >= -1, "%s: expected dims >= -1, got %d", target.source(), d);
    if (d == -1) ++inferred;
    zero = zero || d == 0;
  }
  SF_CHECK(inferred <= 1, "%s: expected at most one -1", target.source());
  SF_CHECK(!allow_zero || !zero || inferred == 0,
           "%s holds both a 0 and a -1, but with attribute \"allowzero\" a "
           "0 is a dim of size 0 and the -1 could be any size: expected "
           "either",
           target.source());
  return absl::OkStatus();
}

absl::Status InferReshape(InferContext& context) {
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> target,
                      IntListOf(context, "Shape", "shape"));
  if (!target.has_value()) {
    // The shape is fed and not known yet: its length, if known, is the
    // output's rank.
    const int64_t rank = IntListInputLength(context, "Shape");
    if (rank < 0) {
      context.SetOutput("Out", shape_util::UnknownRank(x.dtype));
    } else {
      context.SetOutput("Out", 0, x.dtype, Dims(rank, -1));
    }
    return absl::OkStatus();
  }
  const bool allow_zero = context.attrs().Get<bool>("allowzero");
  SF_RETURN_IF_ERROR(CheckReshapeTarget(*target, allow_zero));
  const std::vector<int64_t>& shape = target->values;
  Dims out(shape.begin(), shape.end());
  int inferred_axis = -1;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    if (shape[i] == -1) {
      inferred_axis = i;
    } else if (shape[i] == 0 && !allow_zero) {
      if (!x.has_dims) {
        out[i] = -1;
        continue;
      }
      SF_CHECK(i < static_cast<int>(x.dims.size()),
               "%s copies dim %d (a 0) from %s, which "
               "has no such dim",
               target->source(), i, DescribeInput(context, "X"));
      out[i] = x.dims[i];
    }
  }
  SF_ASSIGN_OR_RETURN(const int64_t in_count, InputNumElements(context, "X"));
  int64_t known = 1;
  bool all_known = true;
  for (int i = 0; i < static_cast<int>(out.size()); ++i) {
    if (i == inferred_axis) continue;
    if (out[i] < 0) {
      all_known = false;
    } else {
      const std::optional<int64_t> product = CheckedMul(known, out[i]);
      SF_CHECK(product.has_value(),
               "%s makes a shape %s of more elements "
               "than int64 holds, for %s",
               target->source(), DimsToString(out),
               DescribeInput(context, "X"));
      known = *product;
    }
  }
  if (inferred_axis >= 0) {
    if (all_known) {
      SF_CHECK(known > 0,
               "%s cannot infer its -1: the other "
               "dims hold 0 elements, for %s",
               target->source(), DescribeInput(context, "X"));
    }
    if (all_known && in_count >= 0) {
      SF_CHECK(in_count % known == 0,
               "cannot reshape %s (%d elements) to %s: %d is not a "
               "multiple of %d",
               DescribeInput(context, "X"), in_count, target->source(),
               in_count, known);
      out[inferred_axis] = in_count / known;
    }
  } else if (all_known && in_count >= 0) {
    SF_CHECK(in_count == known,
             "cannot reshape %s (%d elements) to %s (%d elements): the "
             "element counts differ",
             DescribeInput(context, "X"), in_count, DimsToString(out), known);
  }
  context.SetOutput("Out", 0, x.dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status InferFlatten(InferContext& context) {
  const VarInfo& x = context.Input("X");
  const int64_t axis = context.attrs().Get<int32_t>("axis");
  if (!x.has_dims) {
    context.SetOutput("Out", 0, x.dtype, {-1, -1});
    return absl::OkStatus();
  }
  const int rank = static_cast<int>(x.dims.size());
  SF_CHECK(-rank <= axis && axis <= rank,
           "attribute \"axis\" = %d is out of range for %s (expected [%d, %d])",
           axis, DescribeInput(context, "X"), -rank, rank);
  const int split = static_cast<int>(axis < 0 ? axis + rank : axis);
  const absl::Span<const int64_t> dims(x.dims);
  const std::optional<int64_t> outer = CheckedNumElements(dims.first(split));
  const std::optional<int64_t> inner = CheckedNumElements(dims.subspan(split));
  SF_CHECK(outer.has_value() && inner.has_value(),
           "%s has more elements than int64 holds: it cannot flatten at "
           "attribute \"axis\" = %d",
           DescribeInput(context, "X"), axis);
  context.SetOutput("Out", 0, x.dtype, {*outer, *inner});
  return absl::OkStatus();
}

// The output of squeeze or unsqueeze whose axes (input "Axes") Prepare does
// not know yet: `added` (-1 or 1) dims per axis, dims unknown.
VarInfo UnknownAxesInfo(const InferContext& context, int added) {
  const VarInfo& x = context.Input("X");
  const int64_t n = IntListInputLength(context, "Axes");
  if (!x.has_dims || n < 0) return shape_util::UnknownRank(x.dtype);
  const int64_t rank = static_cast<int64_t>(x.dims.size()) + added * n;
  return VarInfo{x.dtype, Dims(std::max<int64_t>(rank, 0), -1), true};
}

absl::Status InferSqueeze(InferContext& context) {
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> axes,
                      IntListOf(context, "Axes", "axes"));
  if (!axes.has_value()) {
    context.SetOutput("Out", UnknownAxesInfo(context, -1));
    return absl::OkStatus();
  }
  if (!x.has_dims) {
    VarInfo out;
    out.dtype = x.dtype;
    context.SetOutput("Out", out);
    return absl::OkStatus();
  }
  const int rank = static_cast<int>(x.dims.size());
  std::vector<bool> drop(rank, false);
  if (axes->values.empty()) {
    // Which dims are 1 decides the output's rank: unknown while any dim is.
    if (!FullyKnown(x)) {
      VarInfo out;
      out.dtype = x.dtype;
      context.SetOutput("Out", out);
      return absl::OkStatus();
    }
    for (int i = 0; i < rank; ++i) drop[i] = x.dims[i] == 1;
  } else {
    SF_ASSIGN_OR_RETURN(
        std::vector<int> normalized,
        NormalizeAxisList(*axes, rank, DescribeInput(context, "X")));
    for (int a : normalized) {
      // An unknown dim is taken to be 1 here and checked at run time.
      SF_CHECK(x.dims[a] == 1 || x.dims[a] < 0,
               "cannot squeeze axis %d of %s: its size is %d, expected 1", a,
               DescribeInput(context, "X"), x.dims[a]);
      drop[a] = true;
    }
  }
  Dims out;
  for (int i = 0; i < rank; ++i) {
    if (!drop[i]) out.push_back(x.dims[i]);
  }
  context.SetOutput("Out", 0, x.dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status InferUnsqueeze(InferContext& context) {
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> axes,
                      IntListOf(context, "Axes", "axes"));
  if (!axes.has_value()) {
    context.SetOutput("Out", UnknownAxesInfo(context, 1));
    return absl::OkStatus();
  }
  if (!x.has_dims) {
    VarInfo out;
    out.dtype = x.dtype;
    context.SetOutput("Out", out);
    return absl::OkStatus();
  }
  SF_CHECK(!axes->values.empty(),
           "no axes to insert: expected attribute \"axes\" or input "
           "\"Axes\", for %s",
           DescribeInput(context, "X"));
  // Axes index the output, as in numpy.expand_dims and ONNX.
  const int out_rank = static_cast<int>(x.dims.size() + axes->values.size());
  SF_ASSIGN_OR_RETURN(
      std::vector<int> normalized,
      NormalizeAxisList(*axes, out_rank, DescribeInput(context, "X")));
  std::vector<bool> inserted(out_rank, false);
  for (int a : normalized) inserted[a] = true;
  Dims out;
  int next = 0;
  for (int i = 0; i < out_rank; ++i) {
    out.push_back(inserted[i] ? 1 : x.dims[next++]);
  }
  context.SetOutput("Out", 0, x.dtype, std::move(out));
  return absl::OkStatus();
}

absl::Status InferShape(InferContext& context) {
  const VarInfo& x = context.Input("X");
  context.SetOutput("Out", 0, kInt64,
                    {x.has_dims ? static_cast<int64_t>(x.dims.size()) : -1});
  return absl::OkStatus();
}

absl::Status ShapeKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  int64_t* out = context.Output("Out")->data<int64_t>();
  for (int i = 0; i < x.rank(); ++i) out[i] = x.dims()[i];
  return absl::OkStatus();
}

// The gradient of an op that only changes dims is the output's gradient
// seen with X's dims again. X is read for its dims alone: the forward
// attributes cannot say them where they hold -1 or 0, or for squeeze
// without axes.
absl::Status MakeReshapeGrad(GradOpContext& grad) {
  const std::vector<std::string> x_grad = grad.InputGrad("X");
  if (x_grad.empty() || x_grad[0].empty()) return absl::OkStatus();
  OpDef& op = grad.AddOp("reshape_grad");
  GradOpContext::SetInput(op, "X", grad.Input("X"));
  GradOpContext::SetInput(op, "Out@GRAD", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "X@GRAD", x_grad);
  return absl::OkStatus();
}

GradSpec ReshapeGradSpec() {
  return GradSpec()
      .ReadInput("X")
      .ReadOutputGrad("Out")
      .WriteInputGrad("X")
      .Maker(MakeReshapeGrad);
}

absl::Status InferReshapeGrad(InferContext& context) {
  const VarInfo& x = context.Input("X");
  const VarInfo& grad = context.Input("Out@GRAD");
  SF_CHECK(grad.dtype == x.dtype, "%s has dtype %s: expected %s, that of %s",
           DescribeInput(context, "Out@GRAD"), DataTypeName(grad.dtype),
           DataTypeName(x.dtype), DescribeInput(context, "X"));
  SF_ASSIGN_OR_RETURN(const int64_t x_count, InputNumElements(context, "X"));
  SF_ASSIGN_OR_RETURN(const int64_t grad_count,
                      InputNumElements(context, "Out@GRAD"));
  SF_CHECK(x_count < 0 || grad_count < 0 || x_count == grad_count,
           "%s holds %d elements, but %s holds %d: expected the same count",
           DescribeInput(context, "Out@GRAD"), grad_count,
           DescribeInput(context, "X"), x_count);
  if (context.HasOutput("X@GRAD")) context.SetOutput("X@GRAD", x);
  return absl::OkStatus();
}

// X@GRAD is a view of Out@GRAD, as the forward outputs are of their inputs.
absl::Status ReshapeGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  Tensor* x_grad = context.Output("X@GRAD");
  Dims dims = x_grad->dims();
  x_grad->ShareBufferWith(context.Input("Out@GRAD"));
  return x_grad->Reshape(std::move(dims));
}

}  // namespace

// The target shape comes from input "Shape" (int32 or int64, 1-D) when it
// is bound, else from attribute "shape". A 0 copies X's dim at that index,
// or with "allowzero" (as ONNX) is a dim of size 0.
SF_REGISTER_OP(reshape)
    .Input("X")
    .Input("Shape", /*optional=*/true)
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}),
          CheckReshapeShape)
    .Attr("allowzero", AttrType::kBool, AttrValue(false))
    .Infer(InferReshape)
    .Grad(ReshapeGradSpec())
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &ViewKernel; });

SF_REGISTER_OP(flatten)
    .Input("X")
    .Output("Out")
    .Attr("axis", AttrType::kInt, AttrValue(1))
    .Infer(InferFlatten)
    .Grad(ReshapeGradSpec())
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &ViewKernel; });

// Squeeze and unsqueeze take their axes from input "Axes" (int32 or int64,
// 1-D) when it is bound, else from attribute "axes".
SF_REGISTER_OP(squeeze)
    .Input("X")
    .Input("Axes", /*optional=*/true)
    .Output("Out")
    .Attr("axes", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Infer(InferSqueeze)
    .Grad(ReshapeGradSpec())
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &ViewKernel; });

SF_REGISTER_OP(unsqueeze)
    .Input("X")
    .Input("Axes", /*optional=*/true)
    .Output("Out")
    .Attr("axes", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Infer(InferUnsqueeze)
    .Grad(ReshapeGradSpec())
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &ViewKernel; });

SF_REGISTER_OP(reshape_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(InferReshapeGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &ReshapeGradKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &ReshapeGradKernel)
    .Kernel(DeviceType::kCPU, kInt32, &ReshapeGradKernel)
    .Kernel(DeviceType::kCPU, kInt64, &ReshapeGradKernel);

// The kernel reads only dims, so it serves every dtype. Its output does not
// depend on X's values: it has no gradient.
SF_REGISTER_OP(shape)
    .Input("X")
    .Output("Out")
    .Infer(InferShape)
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &ShapeKernel; });

}  // namespace scopeflow
