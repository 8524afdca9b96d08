// max_unpool: the partial inverse of max pooling, as ONNX MaxUnpool (11,
// 22) defines it. X (N, C, D1..Dr) holds the maxima and Indices (int64, X's
// shape) where each came from: a flat offset into the whole output, as
// max pooling's Indices give them. Out is zero but at those offsets (an
// offset given twice keeps the later value). Its shape is "OutputShape"
// (input or attribute "output_shape"; the whole shape, N and C too) when
// given, else (Di - 1) * stride - pad_begin - pad_end + kernel per spatial
// axis.
//
// max_unpool_grad: X@GRAD is Out@GRAD at each element's offset (0 for an
// element a later one overwrote). Indices are integers: no gradient.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// `attr` of `axes` values (or `fill` each where empty).
absl::StatusOr<std::vector<int64_t>> AxisAttr(const Attributes& attrs,
                                              const char* attr, size_t count,
                                              int64_t fill, int64_t least) {
  std::vector<int64_t> values = attrs.Get<std::vector<int64_t>>(attr);
  if (values.empty()) values.assign(count, fill);
  SF_CHECK(values.size() == count,
           "attribute \"%s\" = [%s]: expected %d values", attr,
           absl::StrJoin(values, ", "), count);
  for (int64_t v : values) {
    SF_CHECK(v >= least, "attribute \"%s\" = [%s]: expected values >= %d", attr,
             absl::StrJoin(values, ", "), least);
  }
  return values;
}

// Out's dims for X of `x` (-1 where unknown): the output shape when given
// (nullopt: given but not yet known), else the inferred one.
absl::StatusOr<Dims> UnpooledDims(const Attributes& attrs, const Dims& x,
                                  bool given,
                                  const std::optional<IntValues>& shape) {
  const size_t axes = x.size() - 2;
  if (given) {
    if (!shape.has_value()) return Dims(x.size(), -1);
    SF_CHECK(shape->values.size() == x.size(),
             "%s: expected the %d dims of the output, as X has",
             shape->source(), x.size());
    for (int64_t d : shape->values) {
      SF_CHECK(d >= 0, "%s: expected dims >= 0", shape->source());
    }
    return Dims(shape->values.begin(), shape->values.end());
  }
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel,
                      AxisAttr(attrs, "kernel_shape", axes, 0, 1));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> strides,
                      AxisAttr(attrs, "strides", axes, 1, 1));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> pads,
                      AxisAttr(attrs, "pads", 2 * axes, 0, 0));
  Dims out = {x[0], x[1]};
  for (size_t a = 0; a < axes; ++a) {
    if (x[a + 2] < 0) {
      out.push_back(-1);
      continue;
    }
    const int64_t d =
        (x[a + 2] - 1) * strides[a] - pads[a] - pads[axes + a] + kernel[a];
    SF_CHECK(d >= 0,
             "X has %d cells on spatial axis %d: the kernel, strides and "
             "pads give %d cells unpooled",
             x[a + 2], a, d);
    out.push_back(d);
  }
  return out;
}

constexpr DataType kIndexDtypes[] = {kInt64};

// Whether `a` and `b` may have one shape (unknown dims match anything).
bool SameShape(const VarInfo& a, const VarInfo& b) {
  if (!a.has_dims || !b.has_dims) return true;
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] >= 0 && b.dims[i] >= 0 && a.dims[i] != b.dims[i])
      return false;
  }
  return true;
}

absl::StatusOr<VarInfo> InferOutput(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "Indices", kIndexDtypes));
  SF_RETURN_IF_ERROR(
      CheckRank(context, "X", 3, std::numeric_limits<int>::max()));
  const VarInfo& x = context.Input("X");
  const VarInfo& indices = context.Input("Indices");
  SF_CHECK(SameShape(x, indices), "%s: expected the shape of %s",
           DescribeInputShape(context, "Indices"),
           DescribeInputShape(context, "X"));
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> shape,
                      IntListOf(context, "OutputShape", "output_shape"));
  if (!x.has_dims) return VarInfo{x.dtype, Dims(), false};
  const bool given =
      context.HasInput("OutputShape") ||
      !context.attrs().Get<std::vector<int64_t>>("output_shape").empty();
  SF_ASSIGN_OR_RETURN(const Dims out,
                      UnpooledDims(context.attrs(), x.dims, given, shape));
  return VarInfo{x.dtype, out, true};
}

absl::Status InferMaxUnpool(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status InferMaxUnpoolGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  SF_RETURN_IF_ERROR(nn::CheckGradInput(context, "Out@GRAD", out, "Out"));
  return GradsLikeInputs({"X"})(context);
}

// The checked offsets of Indices into an output of `size` elements.
absl::StatusOr<const int64_t*> Offsets(const KernelContext& context,
                                       int64_t size) {
  const Tensor& indices = context.Input("Indices");
  SF_CHECK(indices.dims() == context.Input("X").dims(),
           "input \"Indices\" (variable \"%s\") is %s: expected the shape of "
           "input \"X\", %s",
           context.InputName("Indices"), indices.DebugString(),
           DimsToString(context.Input("X").dims()));
  const int64_t* offsets = indices.data<int64_t>();
  for (int64_t i = 0; i < indices.numel(); ++i) {
    SF_CHECK(offsets[i] >= 0 && offsets[i] < size,
             "input \"Indices\" (variable \"%s\") holds %d at element %d: "
             "expected an offset into the output's %d elements",
             context.InputName("Indices"), offsets[i], i, size);
  }
  return offsets;
}

template <typename T>
absl::Status MaxUnpoolKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& out = *context.Output("Out");
  SF_ASSIGN_OR_RETURN(const int64_t* offsets, Offsets(context, out.numel()));
  T* y = out.data<T>();
  std::fill(y, y + out.numel(), T(0));
  for (int64_t i = 0; i < x.numel(); ++i) y[offsets[i]] = x.data<T>()[i];
  return absl::OkStatus();
}

template <typename T>
absl::Status MaxUnpoolGradKernel(KernelContext& context) {
  const Tensor& d_out = context.Input("Out@GRAD");
  // Not bound where no gradient of the input is wanted.
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  Tensor& d_x = *context.Output("X@GRAD");
  SF_ASSIGN_OR_RETURN(const int64_t* offsets, Offsets(context, d_out.numel()));
  // The element each output cell last took its value from.
  std::vector<int64_t> writer(d_out.numel(), -1);
  for (int64_t i = 0; i < d_x.numel(); ++i) writer[offsets[i]] = i;
  for (int64_t i = 0; i < d_x.numel(); ++i) {
    d_x.data<T>()[i] =
        writer[offsets[i]] == i ? d_out.data<T>()[offsets[i]] : T(0);
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(max_unpool)
    .Input("X")
    .Input("Indices")
    .Input("OutputShape", /*optional=*/true)
    .Output("Out")
    .Attr("kernel_shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("strides", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("pads", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("output_shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Infer(InferMaxUnpool)
    .Grad(GradSpec("max_unpool_grad")
              .ReadInput("X")
              .ReadInput("Indices")
              .ReadInput("OutputShape")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &MaxUnpoolKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &MaxUnpoolKernel<double>);

// Reads X for its shape only.
SF_REGISTER_OP(max_unpool_grad)
    .Input("X")
    .Input("Indices")
    .Input("OutputShape", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("kernel_shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("strides", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("pads", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("output_shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Infer(InferMaxUnpoolGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &MaxUnpoolGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &MaxUnpoolGradKernel<double>);

}  // namespace scopeflow
