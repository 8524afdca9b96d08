// depth_to_space and space_to_depth (ONNX DepthToSpace, SpaceToDepth) on
// NCHW images. depth_to_space moves blocks of blocksize^2 channels into
// blocksize x blocksize patches of the image: [N, C, H, W] -> [N, C / b^2,
// H b, W b]; space_to_depth undoes it. "mode" says how a channel of the
// deep side splits: "DCR" (depth, column, row: channel (i b + j) C' + c,
// ONNX's default and SpaceToDepth's only order) or "CRD" (channel
// c b^2 + i b + j), for the pixel (i, j) of the patch of output channel c
// of C' = C / b^2. Each op's gradient is the other with the same mode.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kDtypes[] = {kFloat32, kFloat64, kInt32, kInt64, kBool};

absl::Status InferDepthToSpace(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kDtypes));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 4, 4));
  const VarInfo& x = context.Input("X");
  const int64_t b = context.attrs().Get<int32_t>("blocksize");
  if (!x.has_dims) {
    context.SetOutput("Out", x);
    return absl::OkStatus();
  }
  const int64_t c = x.dims[1];
  SF_CHECK(c < 0 || c % (b * b) == 0,
           "attribute \"blocksize\" = %d: expected blocksize^2 = %d to divide "
           "the %d channels of %s",
           b, b * b, c, DescribeInputShape(context, "X"));
  auto times = [b](int64_t d) { return d < 0 ? d : d * b; };
  context.SetOutput("Out", 0, x.dtype,
                    {x.dims[0], c < 0 ? c : c / (b * b), times(x.dims[2]),
                     times(x.dims[3])});
  return absl::OkStatus();
}

absl::Status InferSpaceToDepth(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kDtypes));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 4, 4));
  const VarInfo& x = context.Input("X");
  const int64_t b = context.attrs().Get<int32_t>("blocksize");
  if (!x.has_dims) {
    context.SetOutput("Out", x);
    return absl::OkStatus();
  }
  for (int axis : {2, 3}) {
    SF_CHECK(x.dims[axis] < 0 || x.dims[axis] % b == 0,
             "attribute \"blocksize\" = %d: expected it to divide the %s (%d) "
             "of %s",
             b, axis == 2 ? "height" : "width", x.dims[axis],
             DescribeInputShape(context, "X"));
  }
  auto over = [b](int64_t d) { return d < 0 ? d : d / b; };
  context.SetOutput("Out", 0, x.dtype,
                    {x.dims[0], x.dims[1] < 0 ? -1 : x.dims[1] * b * b,
                     over(x.dims[2]), over(x.dims[3])});
  return absl::OkStatus();
}

// Copies between the deep tensor `depth` [N, C' b^2, H, W] and the image
// `space` [N, C', H b, W b], in the direction `to_space` says.
template <typename T>
void Shuffle(const Dims& space_dims, int64_t b, bool crd, bool to_space,
             const T* from, T* to) {
  const int64_t n = space_dims[0], channels = space_dims[1];
  const int64_t height = space_dims[2] / b, width = space_dims[3] / b;
  const int64_t plane = height * width;
  for (int64_t s = 0; s < n; ++s) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < b; ++i) {
        for (int64_t j = 0; j < b; ++j) {
          const int64_t dc =
              crd ? (c * b + i) * b + j : (i * b + j) * channels + c;
          const int64_t deep = (s * channels * b * b + dc) * plane;
          for (int64_t h = 0; h < height; ++h) {
            const int64_t wide =
                ((s * channels + c) * height * b + h * b + i) * width * b + j;
            for (int64_t w = 0; w < width; ++w) {
              if (to_space) {
                to[wide + w * b] = from[deep + h * width + w];
              } else {
                to[deep + h * width + w] = from[wide + w * b];
              }
            }
          }
        }
      }
    }
  }
}

bool IsCrd(const Attributes& attrs) {
  return attrs.Get<std::string>("mode") == "CRD";
}

// depth_to_space: Out is the image side.
template <typename T>
absl::Status DepthToSpaceKernel(KernelContext& context) {
  Tensor* out = context.Output("Out");
  Shuffle(out->dims(), context.attrs().Get<int32_t>("blocksize"),
          IsCrd(context.attrs()), /*to_space=*/true,
          context.Input("X").data<T>(), out->data<T>());
  return absl::OkStatus();
}

// space_to_depth: X is the image side.
template <typename T>
absl::Status SpaceToDepthKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Shuffle(x.dims(), context.attrs().Get<int32_t>("blocksize"),
          IsCrd(context.attrs()), /*to_space=*/false, x.data<T>(),
          context.Output("Out")->data<T>());
  return absl::OkStatus();
}

// The gradient of either op is the other, same blocksize and mode.
template <const char* kInverse>
absl::Status MakeInverseGrad(GradOpContext& grad) {
  const std::vector<std::string> x_grad = grad.InputGrad("X");
  if (x_grad.empty() || x_grad[0].empty()) return absl::OkStatus();
  OpDef& op = grad.AddOp(kInverse);
  GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "Out", x_grad);
  grad.CopyAttrs(op);
  return absl::OkStatus();
}

constexpr char kDepthToSpace[] = "depth_to_space";
constexpr char kSpaceToDepth[] = "space_to_depth";

}  // namespace

SF_REGISTER_OP(depth_to_space)
    .Input("X")
    .Output("Out")
    .Attr("blocksize", AttrType::kInt, Positive())
    .Attr("mode", AttrType::kString, AttrValue(std::string("DCR")),
          OneOf({"DCR", "CRD"}))
    .Infer(InferDepthToSpace)
    .Grad(GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
        MakeInverseGrad<kSpaceToDepth>))
    .Kernel(DeviceType::kCPU, kFloat32, &DepthToSpaceKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DepthToSpaceKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &DepthToSpaceKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &DepthToSpaceKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &DepthToSpaceKernel<bool>);

SF_REGISTER_OP(space_to_depth)
    .Input("X")
    .Output("Out")
    .Attr("blocksize", AttrType::kInt, Positive())
    .Attr("mode", AttrType::kString, AttrValue(std::string("DCR")),
          OneOf({"DCR", "CRD"}))
    .Infer(InferSpaceToDepth)
    .Grad(GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
        MakeInverseGrad<kDepthToSpace>))
    .Kernel(DeviceType::kCPU, kFloat32, &SpaceToDepthKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &SpaceToDepthKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &SpaceToDepthKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &SpaceToDepthKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &SpaceToDepthKernel<bool>);

}  // namespace scopeflow
