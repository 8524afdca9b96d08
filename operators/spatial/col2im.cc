// col2im: sums sliding blocks back into an image, as ONNX Col2Im (18) and
// PyTorch's fold define it. X is (N, C * prod(block), L): column l holds
// the C blocks at the l-th block position (row-major over the positions),
// each block's cells channel-major then row-major. Out is (N, C, image...)
// for any number of spatial axes; "ImageShape" and "BlockShape" (inputs,
// or attributes "image_shape" and "block_shape") give the image's and the
// block's spatial sizes, "dilations", "strides" and "pads" ([begin...,
// end...]) the sliding; L must be the number of block positions, prod of
// (image + begin + end - dilation * (block - 1) - 1) / stride + 1. Cells of
// a block in the padding are dropped; overlapping cells add up.
//
// col2im_grad: X@GRAD is im2col of Out@GRAD, each block cell the image
// cell it was added to (0 in the padding).
#include <algorithm>
#include <cstdint>
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

// The sliding of blocks over the image's spatial axes.
struct Folding {
  std::vector<int64_t> image;
  std::vector<int64_t> block;
  std::vector<int64_t> positions;  // block positions per axis
  std::vector<int64_t> dilations;
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;  // begin..., end...
  int64_t block_cells = 1;
  int64_t columns = 1;  // L
};

// `values` of attribute `name`, or `fill` repeated for each of `axes` when
// it is empty; an error unless it holds `count` values >= `least`.
absl::StatusOr<std::vector<int64_t>> AxisAttr(const Attributes& attrs,
                                              const char* name, size_t axes,
                                              size_t count, int64_t fill,
                                              int64_t least) {
  std::vector<int64_t> values = attrs.Get<std::vector<int64_t>>(name);
  if (values.empty()) values.assign(count, fill);
  SF_CHECK(values.size() == count,
           "attribute \"%s\" = [%s]: expected %d values for %d spatial axes",
           name, absl::StrJoin(values, ", "), count, axes);
  for (int64_t v : values) {
    SF_CHECK(v >= least, "attribute \"%s\" = [%s]: expected values >= %d", name,
             absl::StrJoin(values, ", "), least);
  }
  return values;
}

absl::StatusOr<Folding> FoldingOf(const Attributes& attrs,
                                  const IntValues& image,
                                  const IntValues& block) {
  Folding f;
  f.image = image.values;
  f.block = block.values;
  const size_t axes = f.image.size();
  SF_CHECK(axes >= 1 && f.block.size() == axes,
           "%s and %s: expected one image and one block size per spatial "
           "axis (at least one)",
           image.source(), block.source());
  for (size_t a = 0; a < axes; ++a) {
    SF_CHECK(f.image[a] >= 0, "%s: expected sizes >= 0", image.source());
    SF_CHECK(f.block[a] >= 1, "%s: expected sizes >= 1", block.source());
  }
  SF_ASSIGN_OR_RETURN(f.dilations,
                      AxisAttr(attrs, "dilations", axes, axes, 1, 1));
  SF_ASSIGN_OR_RETURN(f.strides, AxisAttr(attrs, "strides", axes, axes, 1, 1));
  SF_ASSIGN_OR_RETURN(f.pads, AxisAttr(attrs, "pads", axes, 2 * axes, 0, 0));
  for (size_t a = 0; a < axes; ++a) {
    const int64_t span = f.dilations[a] * (f.block[a] - 1) + 1;
    const int64_t padded = f.image[a] + f.pads[a] + f.pads[axes + a];
    SF_CHECK(padded >= span,
             "%s, %s: a block spans %d cells on axis %d, more than the %d of "
             "the padded image",
             image.source(), block.source(), span, a, padded);
    f.positions.push_back((padded - span) / f.strides[a] + 1);
    f.block_cells *= f.block[a];
    f.columns *= f.positions.back();
  }
  return f;
}

absl::StatusOr<VarInfo> InferOutput(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 3, 3));
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> image,
                      IntListOf(context, "ImageShape", "image_shape"));
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> block,
                      IntListOf(context, "BlockShape", "block_shape"));
  if (!image.has_value() || !block.has_value()) {
    const int64_t axes = image.has_value() ? image->values.size()
                         : block.has_value()
                             ? block->values.size()
                             : IntListInputLength(context, "ImageShape");
    if (axes < 0) return VarInfo{x.dtype, Dims(), false};
    Dims out(axes + 2, -1);
    if (x.has_dims) out[0] = x.dims[0];
    return VarInfo{x.dtype, out, true};
  }
  SF_ASSIGN_OR_RETURN(const Folding f,
                      FoldingOf(context.attrs(), *image, *block));
  Dims out = {-1, -1};
  if (x.has_dims) {
    out[0] = x.dims[0];
    SF_CHECK(x.dims[1] < 0 || x.dims[1] % f.block_cells == 0,
             "%s: expected axis 1 to hold C blocks of %d cells (%s)",
             DescribeInputShape(context, "X"), f.block_cells, block->source());
    if (x.dims[1] >= 0) out[1] = x.dims[1] / f.block_cells;
    SF_CHECK(x.dims[2] < 0 || x.dims[2] == f.columns,
             "%s: expected axis 2 to hold the %d block positions of %s",
             DescribeInputShape(context, "X"), f.columns, image->source());
  }
  out.insert(out.end(), f.image.begin(), f.image.end());
  return VarInfo{x.dtype, out, true};
}

absl::Status InferCol2Im(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status InferCol2ImGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  SF_RETURN_IF_ERROR(nn::CheckGradInput(context, "Out@GRAD", out, "Out"));
  return GradsLikeInputs({"X"})(context);
}

absl::StatusOr<Folding> FoldingAtRun(const KernelContext& context,
                                     const Dims& x, const Dims& image) {
  SF_ASSIGN_OR_RETURN(const IntValues image_shape,
                      IntListOf(context, "ImageShape", "image_shape"));
  SF_ASSIGN_OR_RETURN(const IntValues block_shape,
                      IntListOf(context, "BlockShape", "block_shape"));
  SF_ASSIGN_OR_RETURN(const Folding f,
                      FoldingOf(context.attrs(), image_shape, block_shape));
  Dims expected = {x[0], x[1] / f.block_cells};
  expected.insert(expected.end(), f.image.begin(), f.image.end());
  SF_CHECK(x[1] % f.block_cells == 0 && x[2] == f.columns && image == expected,
           "input \"X\" (variable \"%s\") is %s and the image %s: expected "
           "(N, C * %d, %d) and (N, C, %s), as %s and %s make",
           context.InputName("X"), DimsToString(x), DimsToString(image),
           f.block_cells, f.columns, absl::StrJoin(f.image, ", "),
           image_shape.source(), block_shape.source());
  return f;
}

// Calls visit(column_offset, image_offset) for every block cell inside the
// image, offsets within one channel: column_offset into its
// (block_cells, L) slab of X, image_offset into its image.
template <typename Visit>
void ForEachCell(const Folding& f, Visit visit) {
  const size_t axes = f.image.size();
  std::vector<int64_t> cell(axes, 0);
  for (int64_t k = 0; k < f.block_cells; ++k) {
    std::vector<int64_t> at(axes, 0);
    for (int64_t l = 0; l < f.columns; ++l) {
      int64_t image_offset = 0;
      bool inside = true;
      for (size_t a = 0; a < axes && inside; ++a) {
        const int64_t i =
            at[a] * f.strides[a] - f.pads[a] + cell[a] * f.dilations[a];
        inside = i >= 0 && i < f.image[a];
        image_offset = image_offset * f.image[a] + i;
      }
      if (inside) visit(k * f.columns + l, image_offset);
      for (size_t a = axes; a-- > 0 && ++at[a] == f.positions[a];) at[a] = 0;
    }
    for (size_t a = axes; a-- > 0 && ++cell[a] == f.block[a];) cell[a] = 0;
  }
}

template <typename T>
absl::Status Col2ImKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& out = *context.Output("Out");
  SF_ASSIGN_OR_RETURN(const Folding f,
                      FoldingAtRun(context, x.dims(), out.dims()));
  const int64_t planes = out.dims()[0] * out.dims()[1];
  const int64_t image_cells = NumElements(f.image);
  std::vector<double> sums(image_cells);
  for (int64_t p = 0; p < planes; ++p) {
    const T* column = x.data<T>() + p * f.block_cells * f.columns;
    std::fill(sums.begin(), sums.end(), 0.0);
    ForEachCell(f, [&](int64_t c, int64_t i) {
      sums[i] += static_cast<double>(column[c]);
    });
    std::transform(sums.begin(), sums.end(), out.data<T>() + p * image_cells,
                   [](double v) { return static_cast<T>(v); });
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Col2ImGradKernel(KernelContext& context) {
  const Tensor& d_out = context.Input("Out@GRAD");
  // Not bound where no gradient of the input is wanted.
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  Tensor& d_x = *context.Output("X@GRAD");
  SF_ASSIGN_OR_RETURN(const Folding f,
                      FoldingAtRun(context, d_x.dims(), d_out.dims()));
  std::fill(d_x.data<T>(), d_x.data<T>() + d_x.numel(), T(0));
  const int64_t planes = d_out.dims()[0] * d_out.dims()[1];
  const int64_t image_cells = NumElements(f.image);
  for (int64_t p = 0; p < planes; ++p) {
    T* column = d_x.data<T>() + p * f.block_cells * f.columns;
    const T* image = d_out.data<T>() + p * image_cells;
    ForEachCell(f, [&](int64_t c, int64_t i) { column[c] = image[i]; });
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(col2im)
    .Input("X")
    .Input("ImageShape", /*optional=*/true)
    .Input("BlockShape", /*optional=*/true)
    .Output("Out")
    .Attr("image_shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("block_shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("dilations", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("strides", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("pads", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Infer(InferCol2Im)
    .Grad(GradSpec("col2im_grad")
              .ReadInput("X")
              .ReadInput("ImageShape")
              .ReadInput("BlockShape")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &Col2ImKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Col2ImKernel<double>);

// Reads X for its shape only.
SF_REGISTER_OP(col2im_grad)
    .Input("X")
    .Input("ImageShape", /*optional=*/true)
    .Input("BlockShape", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("image_shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("block_shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("dilations", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("strides", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("pads", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Infer(InferCol2ImGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &Col2ImGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Col2ImGradKernel<double>);

}  // namespace scopeflow
