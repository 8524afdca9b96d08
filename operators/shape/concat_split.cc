// Joining tensors along an axis and cutting one apart: concat and split,
// each the other's gradient in spirit (concat_grad cuts, split's gradient
// is a concat).
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/shape/shape_util.h"
#include "operators/strided_copy.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::DescribeInput;
using shape_util::NormalizeAxisOf;

absl::StatusOr<VarInfo> ConcatOutInfo(const InferContext& context) {
  const int n = context.InputCount("X");
  const VarInfo& first = context.Input("X", 0);
  // The first input of known rank sets the rank the others must have.
  int ranked = -1;
  for (int i = 0; i < n; ++i) {
    const VarInfo& x = context.Input("X", i);
    SF_CHECK(x.dtype == first.dtype,
             "%s has dtype %s: expected %s, the dtype of %s",
             DescribeInput(context, "X", i), DataTypeName(x.dtype),
             DataTypeName(first.dtype), DescribeInput(context, "X", 0));
    if (ranked < 0 && x.has_dims) ranked = i;
  }
  if (ranked < 0) return shape_util::UnknownRank(first.dtype);
  const int rank = static_cast<int>(context.Input("X", ranked).dims.size());
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxisOf(context, "X", context.attrs().Get<int32_t>("axis"), rank,
                      "axis"));
  Dims out(rank, -1);
  out[axis] = 0;
  for (int i = 0; i < n; ++i) {
    const VarInfo& x = context.Input("X", i);
    if (!x.has_dims) {
      out[axis] = -1;
      continue;
    }
    SF_CHECK(static_cast<int>(x.dims.size()) == rank,
             "%s has rank %d: expected rank %d, that of %s",
             DescribeInput(context, "X", i), x.dims.size(), rank,
             DescribeInput(context, "X", ranked));
    for (int k = 0; k < rank; ++k) {
      const int64_t d = x.dims[k];
      if (k == axis) {
        if (d < 0 || out[axis] < 0) {
          out[axis] = -1;
          continue;
        }
        const std::optional<int64_t> size = CheckedAdd(out[axis], d);
        SF_CHECK(size.has_value(),
                 "%s makes the inputs' sizes along attribute \"axis\" = %d "
                 "add up to more than int64 holds",
                 DescribeInput(context, "X", i), axis);
        out[axis] = *size;
      } else if (d >= 0) {
        SF_CHECK(out[k] < 0 || out[k] == d,
                 "%s has dim %d = %d: expected %d like the other inputs (only "
                 "axis %d may differ)",
                 DescribeInput(context, "X", i), k, d, out[k], axis);
        out[k] = d;
      }
    }
  }
  return VarInfo{first.dtype, std::move(out), true};
}

absl::Status InferConcat(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, ConcatOutInfo(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status ConcatKernel(KernelContext& context) {
  Tensor* out = context.Output("Out");
  // A zero-byte tensor has no buffer to offset into.
  if (out->numel() == 0) return absl::OkStatus();
  const int32_t attr_axis = context.attrs().Get<int32_t>("axis");
  const int axis = attr_axis < 0 ? attr_axis + out->rank() : attr_axis;
  const absl::Span<const int64_t> dims(out->dims());
  const int64_t outer = NumElements(dims.subspan(0, axis));
  const int64_t inner = NumElements(dims.subspan(axis + 1));
  const int64_t out_row = dims[axis] * inner;
  const size_t size = SizeOf(out->dtype());
  char* dst = static_cast<char*>(out->raw_data());
  // Each input is an [outer, rows] box placed at column `offset` of the
  // output's [outer, out_row] rows.
  int64_t offset = 0;
  for (int i = 0; i < context.InputCount("X"); ++i) {
    const Tensor& x = context.Input("X", i);
    const int64_t row = x.dims()[axis] * inner;
    CopyStrided(dst + offset * size, {out_row, 1}, x.raw_data(), {row, 1},
                {outer, row}, size);
    offset += row;
  }
  return absl::OkStatus();
}

// "sections": sizes, at most one -1 (the rest of the dim).
absl::Status CheckSections(const AttrValue& value) {
  const auto& sections = std::get<std::vector<int32_t>>(value);
  int inferred = 0;
  for (int32_t s : sections) {
    SF_CHECK(s >= -1, "must hold sizes >= -1, got %d", s);
    if (s == -1) ++inferred;
  }
  SF_CHECK(inferred <= 1, "may hold at most one -1, got [%s]",
           absl::StrJoin(sections, ", "));
  return absl::OkStatus();
}

// The size of each output along the axis, from input "Sections" (when
// bound), attribute "sections" or attribute "num", and the input's dim
// `dim` (-1 if unknown: then so are the sizes that depend on it, as are all
// of them while Prepare cannot see the values of "Sections").
absl::StatusOr<std::vector<int64_t>> SplitSizes(const InferContext& context,
                                                int64_t dim) {
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> sections,
                      IntListOf(context, "Sections", "sections"));
  const int num = context.attrs().Get<int32_t>("num");
  const int outputs = context.OutputCount("Out");
  if (context.HasInput("Sections")) {
    SF_CHECK(num == 0,
             "input \"Sections\" (variable \"%s\") and attribute \"num\" = %d "
             "both say how to split %s: expected one of them",
             context.InputName("Sections"), num, DescribeInput(context, "X"));
    const int64_t length = IntListInputLength(context, "Sections");
    SF_CHECK(length < 0 || length == outputs,
             "input \"Sections\" (variable \"%s\") holds %d sizes, but output "
             "\"Out\" has %d variables, to split %s",
             context.InputName("Sections"), length, outputs,
             DescribeInput(context, "X"));
    if (!sections.has_value()) return std::vector<int64_t>(outputs, -1);
  } else {
    SF_CHECK(sections->values.empty() != (num == 0),
             "expected exactly one of attributes \"sections\" (sizes) and "
             "\"num\" (equal parts), got %s, to split %s",
             sections->values.empty() ? "neither" : "both",
             DescribeInput(context, "X"));
  }
  if (num > 0) {
    SF_CHECK(num == outputs,
             "attribute \"num\" = %d, but output \"Out\" has %d variables, "
             "to split %s",
             num, outputs, DescribeInput(context, "X"));
    SF_CHECK(dim < 0 || dim % num == 0,
             "attribute \"num\" = %d does not divide %s into equal parts "
             "along the axis (size %d)",
             num, DescribeInput(context, "X"), dim);
    return std::vector<int64_t>(num, dim < 0 ? -1 : dim / num);
  }
  SF_CHECK(static_cast<int>(sections->values.size()) == outputs,
           "%s has %d sizes, but output \"Out\" has %d variables, to split %s",
           sections->source(), sections->values.size(), outputs,
           DescribeInput(context, "X"));
  std::vector<int64_t> sizes = sections->values;
  int64_t known = 0;
  int inferred = -1;
  for (int i = 0; i < static_cast<int>(sizes.size()); ++i) {
    SF_CHECK(sizes[i] >= -1 && (sizes[i] >= 0 || inferred < 0),
             "%s: expected sizes >= 0 and at most one -1 (the rest), to "
             "split %s",
             sections->source(), DescribeInput(context, "X"));
    if (sizes[i] < 0) {
      inferred = i;
      continue;
    }
    const std::optional<int64_t> sum = CheckedAdd(known, sizes[i]);
    SF_CHECK(sum.has_value(), "%s sums to more than int64 holds, to split %s",
             sections->source(), DescribeInput(context, "X"));
    known = *sum;
  }
  if (dim < 0) return sizes;
  if (inferred >= 0) {
    SF_CHECK(known <= dim,
             "%s sums to %d, more than the size %d of the axis of %s",
             sections->source(), known, dim, DescribeInput(context, "X"));
    sizes[inferred] = dim - known;
  } else {
    SF_CHECK(known == dim, "%s sums to %d, but the axis of %s has size %d",
             sections->source(), known, DescribeInput(context, "X"), dim);
  }
  return sizes;
}

absl::Status InferSplit(InferContext& context) {
  const VarInfo& x = context.Input("X");
  if (!x.has_dims) {
    SF_RETURN_IF_ERROR(SplitSizes(context, -1).status());
    // Every part has X's dtype and an unknown rank: ops reading any of
    // them check their dtype at Prepare (an imported detector splits boxes
    // of unknown rank into coordinates that are then multiplied).
    VarInfo out;
    out.dtype = x.dtype;
    for (int i = 0; i < context.OutputCount("Out"); ++i) {
      context.SetOutput("Out", i, out);
    }
    return absl::OkStatus();
  }
  const int rank = static_cast<int>(x.dims.size());
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxisOf(context, "X", context.attrs().Get<int32_t>("axis"), rank,
                      "axis"));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> sizes,
                      SplitSizes(context, x.dims[axis]));
  for (int i = 0; i < static_cast<int>(sizes.size()); ++i) {
    Dims out = x.dims;
    out[axis] = sizes[i];
    context.SetOutput("Out", i, x.dtype, std::move(out));
  }
  return absl::OkStatus();
}

absl::Status SplitKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  // Then every output is empty too, and there is no buffer to offset into.
  if (x.numel() == 0) return absl::OkStatus();
  const int rank = x.rank();
  const int32_t attr_axis = context.attrs().Get<int32_t>("axis");
  const int axis = attr_axis < 0 ? attr_axis + rank : attr_axis;
  const absl::Span<const int64_t> dims(x.dims());
  const int64_t outer = NumElements(dims.subspan(0, axis));
  const int64_t inner = NumElements(dims.subspan(axis + 1));
  const int64_t x_row = dims[axis] * inner;
  const size_t size = SizeOf(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  int64_t offset = 0;
  for (int i = 0; i < context.OutputCount("Out"); ++i) {
    Tensor* out = context.Output("Out", i);
    const int64_t row = out->dims()[axis] * inner;
    CopyStrided(out->raw_data(), {row, 1}, src + offset * size, {x_row, 1},
                {outer, row}, size);
    offset += row;
  }
  return absl::OkStatus();
}

// concat's gradient cuts Out@GRAD back into the inputs' pieces. It is its
// own op rather than split because split's sizes are attributes, while the
// inputs' sizes along the axis may be known only at run time.
absl::Status MakeConcatGrad(GradOpContext& grad) {
  const std::vector<std::string> x_grads = grad.InputGrad("X");
  std::vector<std::string> wanted;
  std::vector<int32_t> indices;
  for (int i = 0; i < static_cast<int>(x_grads.size()); ++i) {
    if (x_grads[i].empty()) continue;
    wanted.push_back(x_grads[i]);
    indices.push_back(i);
  }
  if (wanted.empty()) return absl::OkStatus();
  OpDef& op = grad.AddOp("concat_grad");
  GradOpContext::SetInput(op, "X", grad.Input("X"));
  GradOpContext::SetInput(op, "Out@GRAD", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "X@GRAD", wanted);
  grad.CopyAttrs(op);
  // The slot drops inputs whose gradient nobody wants, so the attribute
  // says which input each gradient belongs to.
  if (wanted.size() < x_grads.size()) {
    AttrDef* attr = op.add_attrs();
    attr->set_name("grad_inputs");
    for (int32_t i : indices) attr->mutable_ints()->add_values(i);
  }
  return absl::OkStatus();
}

absl::Status InferConcatGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, ConcatOutInfo(context));
  SF_RETURN_IF_ERROR(shape_util::CheckOutGrad(context, out));
  const auto& grad_inputs =
      context.attrs().Get<std::vector<int32_t>>("grad_inputs");
  const int n = context.InputCount("X");
  const int grads = context.OutputCount("X@GRAD");
  if (grad_inputs.empty()) {
    SF_CHECK(grads == 0 || grads == n,
             "output \"X@GRAD\" has %d variables for the %d inputs of \"X\": "
             "name the input of each with attribute \"grad_inputs\"",
             grads, n);
  } else {
    SF_CHECK(static_cast<int>(grad_inputs.size()) == grads,
             "attribute \"grad_inputs\" = [%s] has %d entries, but output "
             "\"X@GRAD\" has %d variables",
             absl::StrJoin(grad_inputs, ", "), grad_inputs.size(), grads);
    for (size_t j = 0; j < grad_inputs.size(); ++j) {
      SF_CHECK(grad_inputs[j] >= 0 && grad_inputs[j] < n &&
                   (j == 0 || grad_inputs[j] > grad_inputs[j - 1]),
               "attribute \"grad_inputs\" = [%s] must hold increasing "
               "indices of the %d inputs of \"X\"",
               absl::StrJoin(grad_inputs, ", "), n);
    }
  }
  for (int j = 0; j < grads; ++j) {
    context.SetOutput("X@GRAD", j,
                      context.Input("X", shape_util::ConcatGradInputIndex(
                                             context.attrs(), j)));
  }
  return absl::OkStatus();
}

// Each wanted input's columns of Out@GRAD's [outer, out_row] rows, as the
// forward kernel placed them.
absl::Status ConcatGradKernel(KernelContext& context) {
  const Tensor& grad = context.Input("Out@GRAD");
  // Then every input is empty too, and there is no buffer to offset into.
  if (grad.numel() == 0) return absl::OkStatus();
  const int32_t attr_axis = context.attrs().Get<int32_t>("axis");
  const int axis = attr_axis < 0 ? attr_axis + grad.rank() : attr_axis;
  const absl::Span<const int64_t> dims(grad.dims());
  const int64_t outer = NumElements(dims.subspan(0, axis));
  const int64_t inner = NumElements(dims.subspan(axis + 1));
  const int64_t out_row = dims[axis] * inner;
  const size_t size = SizeOf(grad.dtype());
  std::vector<int64_t> offsets(context.InputCount("X") + 1, 0);
  for (int i = 0; i < context.InputCount("X"); ++i) {
    offsets[i + 1] = offsets[i] + context.Input("X", i).dims()[axis] * inner;
  }
  const char* src = static_cast<const char*>(grad.raw_data());
  for (int j = 0; j < context.OutputCount("X@GRAD"); ++j) {
    const int i = shape_util::ConcatGradInputIndex(context.attrs(), j);
    const int64_t row = offsets[i + 1] - offsets[i];
    CopyStrided(context.Output("X@GRAD", j)->raw_data(), {row, 1},
                src + offsets[i] * size, {out_row, 1}, {outer, row}, size);
  }
  return absl::OkStatus();
}

// split's gradient joins the outputs' gradients back with concat. An output
// through which no gradient flows (one marked stop_gradient) contributes
// zeros of its shape.
absl::Status MakeSplitGrad(GradOpContext& grad) {
  const std::vector<std::string> x_grad = grad.InputGrad("X");
  if (x_grad.empty() || x_grad[0].empty()) return absl::OkStatus();
  const std::vector<std::string> outs = grad.Output("Out");
  std::vector<std::string> parts = grad.OutputGrad("Out");
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i].empty()) continue;
    parts[i] = absl::StrCat(GradName(outs[i]), "@ZERO");
    OpDef& fill = grad.AddOp("fill_any_like");
    GradOpContext::SetInput(fill, "X", {outs[i]});
    GradOpContext::SetOutput(fill, "Out", {parts[i]});
    AttrDef* value = fill.add_attrs();
    value->set_name("value");
    value->set_f(0.0f);
  }
  OpDef& op = grad.AddOp("concat");
  GradOpContext::SetInput(op, "X", parts);
  GradOpContext::SetOutput(op, "Out", x_grad);
  for (const AttrDef& attr : grad.forward().attrs()) {
    if (attr.name() == "axis") *op.add_attrs() = attr;
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(concat)
    .Input("X", /*optional=*/false, /*variadic=*/true)
    .Output("Out")
    .Attr("axis", AttrType::kInt, AttrValue(0))
    .Infer(InferConcat)
    .Grad(GradSpec()
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .Maker(MakeConcatGrad))
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &ConcatKernel; });

// The sizes come from input "Sections" (int32 or int64, 1-D) when it is
// bound, else from attribute "sections", or "num" gives equal parts.
SF_REGISTER_OP(split)
    .Input("X")
    .Input("Sections", /*optional=*/true)
    .Output("Out", /*optional=*/false, /*variadic=*/true)
    .Attr("axis", AttrType::kInt, AttrValue(0))
    .Attr("sections", AttrType::kInts, AttrValue(std::vector<int32_t>{}),
          CheckSections)
    .Attr("num", AttrType::kInt, AttrValue(0), NonNegative())
    .Infer(InferSplit)
    .Grad(GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
        MakeSplitGrad))
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &SplitKernel; });

SF_REGISTER_OP(concat_grad)
    .Input("X", /*optional=*/false, /*variadic=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true, /*variadic=*/true)
    .Attr("axis", AttrType::kInt, AttrValue(0))
    .Attr("grad_inputs", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Infer(InferConcatGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &ConcatGradKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &ConcatGradKernel)
    .Kernel(DeviceType::kCPU, kInt32, &ConcatGradKernel)
    .Kernel(DeviceType::kCPU, kInt64, &ConcatGradKernel);

}  // namespace scopeflow
