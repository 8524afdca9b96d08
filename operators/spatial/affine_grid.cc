// affine_grid: the sampling grid of an affine transform, as ONNX AffineGrid
// (20) and PyTorch's affine_grid define it. Theta is (N, 2, 3) for 2-D or
// (N, 3, 4) for 3-D images; the size (input "Size" or attribute "size") is
// the image's (N, C, H, W) or (N, C, D, H, W). Out is (N, H, W, 2) or
// (N, D, H, W, 3): at each cell, theta[n] times the cell's normalized
// coordinates (x, y[, z], 1), x along W. A cell's coordinate along an axis
// of L cells is -1 + 2i / (L - 1) with align_corners (corner centres at
// +-1), -1 + (2i + 1) / L without (corner edges at +-1); an axis of one cell
// sits at 0 either way (PyTorch's choice; ONNX divides by zero there).
//
// affine_grid_grad: Theta@GRAD, sum over cells of Out@GRAD's coordinates
// times the cell's (x, y[, z], 1). The size is an integer: no gradient.
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

// The checked size: N, then the spatial dims (C dropped), as Out lays
// them out.
absl::StatusOr<std::vector<int64_t>> GridDims(const IntValues& size, int axes) {
  SF_CHECK(static_cast<int>(size.values.size()) == axes + 2,
           "%s: expected %d values (N, C and %d spatial sizes) for a theta "
           "of %d-D transforms",
           size.source(), axes + 2, axes, axes);
  std::vector<int64_t> dims = {size.values[0]};
  for (int a = 2; a < axes + 2; ++a) dims.push_back(size.values[a]);
  for (int64_t d : size.values) {
    SF_CHECK(d >= 0, "%s: expected sizes >= 0", size.source());
  }
  return dims;
}

absl::StatusOr<VarInfo> InferOutput(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Theta"));
  SF_RETURN_IF_ERROR(CheckRank(context, "Theta", 3, 3));
  const VarInfo& theta = context.Input("Theta");
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> size,
                      IntListOf(context, "Size", "size"));
  if (!theta.has_dims || theta.dims[1] < 0 || theta.dims[2] < 0) {
    return VarInfo{theta.dtype, Dims(), false};
  }
  const int64_t axes = theta.dims[1];
  SF_CHECK((axes == 2 || axes == 3) && theta.dims[2] == axes + 1,
           "%s: expected (N, 2, 3) for 2-D or (N, 3, 4) for 3-D transforms",
           DescribeInputShape(context, "Theta"));
  Dims out(axes + 2, -1);
  out[axes + 1] = axes;
  if (!size.has_value()) {
    out[0] = theta.dims[0];
    return VarInfo{theta.dtype, out, true};
  }
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> dims,
                      GridDims(*size, static_cast<int>(axes)));
  SF_CHECK(theta.dims[0] < 0 || theta.dims[0] == dims[0],
           "%s: expected the batch of %s", DescribeInputShape(context, "Theta"),
           size->source());
  for (int a = 0; a <= axes; ++a) out[a] = dims[a];
  return VarInfo{theta.dtype, out, true};
}

absl::Status InferAffineGrid(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status InferAffineGridGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  SF_RETURN_IF_ERROR(nn::CheckGradInput(context, "Out@GRAD", out, "Out"));
  return GradsLikeInputs({"Theta"})(context);
}

// The normalized coordinates of the cells of an axis of `cells`.
std::vector<double> AxisCoordinates(int64_t cells, bool align_corners) {
  std::vector<double> coords(cells, 0.0);
  if (cells == 1) return coords;
  const double n = static_cast<double>(cells);
  for (int64_t i = 0; i < cells; ++i) {
    coords[i] = align_corners ? -1 + 2.0 * i / (n - 1) : -1 + (2.0 * i + 1) / n;
  }
  return coords;
}

// The cells of the grid in Out's order with their homogeneous coordinates
// (x, y[, z], 1): `axes` + 1 values per cell.
struct BaseGrid {
  int axes = 0;
  int64_t batch = 0;
  int64_t cells = 0;
  std::vector<double> coords;
};

// `points` is the kernel's grid, Out or Out@GRAD (`what` says which, for
// errors), checked against the size: a gradient op whose output shape
// Prepare knew runs without inference.
absl::StatusOr<BaseGrid> BaseGridOf(const KernelContext& context,
                                    const Tensor& points,
                                    const std::string& what) {
  SF_ASSIGN_OR_RETURN(const IntValues size, IntListOf(context, "Size", "size"));
  BaseGrid grid;
  grid.axes = static_cast<int>(context.Input("Theta").dims()[1]);
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> dims,
                      GridDims(size, grid.axes));
  grid.batch = dims[0];
  const Tensor& theta = context.Input("Theta");
  SF_CHECK(theta.dims()[0] == grid.batch,
           "input \"Theta\" (variable \"%s\") is %s: expected the batch of "
           "%s",
           context.InputName("Theta"), theta.DebugString(), size.source());
  const bool align = context.attrs().Get<bool>("align_corners");
  // Spatial axes outermost first (D, H, W); x runs along the last.
  std::vector<std::vector<double>> axis;
  grid.cells = 1;
  for (int a = 1; a <= grid.axes; ++a) {
    axis.push_back(AxisCoordinates(dims[a], align));
    grid.cells *= dims[a];
  }
  SF_CHECK(points.numel() == grid.batch * grid.cells * grid.axes,
           "%s is %s: expected %d points of %d coordinates, as %s makes", what,
           points.DebugString(), grid.batch * grid.cells, grid.axes,
           size.source());
  grid.coords.reserve(grid.cells * (grid.axes + 1));
  std::vector<int64_t> index(grid.axes, 0);
  for (int64_t cell = 0; cell < grid.cells; ++cell) {
    for (int a = grid.axes - 1; a >= 0; --a)
      grid.coords.push_back(axis[a][index[a]]);
    grid.coords.push_back(1.0);
    for (int a = grid.axes - 1; a >= 0 && ++index[a] == dims[a + 1]; --a) {
      index[a] = 0;
    }
  }
  return grid;
}

template <typename T>
absl::Status AffineGridKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(
      const BaseGrid base,
      BaseGridOf(context, *context.Output("Out"),
                 absl::StrFormat("output \"Out\" (variable \"%s\")",
                                 context.OutputName("Out"))));
  const T* theta = context.Input("Theta").data<T>();
  T* out = context.Output("Out")->data<T>();
  const int k = base.axes + 1;
  for (int64_t n = 0; n < base.batch; ++n) {
    const T* matrix = theta + n * base.axes * k;
    for (int64_t cell = 0; cell < base.cells; ++cell) {
      const double* c = base.coords.data() + cell * k;
      T* point = out + (n * base.cells + cell) * base.axes;
      for (int i = 0; i < base.axes; ++i) {
        double sum = 0;
        for (int j = 0; j < k; ++j)
          sum += static_cast<double>(matrix[i * k + j]) * c[j];
        point[i] = static_cast<T>(sum);
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status AffineGridGradKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(
      const BaseGrid base,
      BaseGridOf(context, context.Input("Out@GRAD"),
                 absl::StrFormat("input \"Out@GRAD\" (variable \"%s\")",
                                 context.InputName("Out@GRAD"))));
  const T* d_out = context.Input("Out@GRAD").data<T>();
  // Not bound where no gradient of the input is wanted.
  if (!context.HasOutput("Theta@GRAD")) return absl::OkStatus();
  T* d_theta = context.Output("Theta@GRAD")->data<T>();
  const int k = base.axes + 1;
  for (int64_t n = 0; n < base.batch; ++n) {
    std::vector<double> sum(base.axes * k, 0.0);
    for (int64_t cell = 0; cell < base.cells; ++cell) {
      const double* c = base.coords.data() + cell * k;
      const T* g = d_out + (n * base.cells + cell) * base.axes;
      for (int i = 0; i < base.axes; ++i) {
        for (int j = 0; j < k; ++j)
          sum[i * k + j] += static_cast<double>(g[i]) * c[j];
      }
    }
    for (int i = 0; i < base.axes * k; ++i) {
      d_theta[n * base.axes * k + i] = static_cast<T>(sum[i]);
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(affine_grid)
    .Input("Theta")
    .Input("Size", /*optional=*/true)
    .Output("Out")
    .Attr("size", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("align_corners", AttrType::kBool, AttrValue(false))
    .Infer(InferAffineGrid)
    .Grad(GradSpec("affine_grid_grad")
              .ReadInput("Theta")
              .ReadInput("Size")
              .ReadOutputGrad("Out")
              .WriteInputGrad("Theta"))
    .Kernel(DeviceType::kCPU, kFloat32, &AffineGridKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &AffineGridKernel<double>);

// Reads Theta for its shape only.
SF_REGISTER_OP(affine_grid_grad)
    .Input("Theta")
    .Input("Size", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("Theta@GRAD", /*optional=*/true)
    .Attr("size", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("align_corners", AttrType::kBool, AttrValue(false))
    .Infer(InferAffineGridGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &AffineGridGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &AffineGridGradKernel<double>);

}  // namespace scopeflow
