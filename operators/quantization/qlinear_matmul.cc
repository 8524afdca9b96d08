// matmul_integer and qlinear_matmul: ONNX's MatMulInteger and QLinearMatMul
// over uint8 and int8 with numpy's matmul shapes, accumulated exactly in
// int32 (integer_matmul.h).
//
//   matmul_integer: Y = (A - AZeroPoint) x (B - BZeroPoint), int32
//   qlinear_matmul: Y = saturate(round_half_even(acc * AScale * BScale /
//                   YScale) + YZeroPoint), of YZeroPoint's dtype
//
// Zero points and scales of A are per tensor or per row (1-D of M), those
// of B per tensor or per column (1-D of N). No gradients: the outputs are
// integers (matmul_integer's exact, qlinear_matmul's rounded), and backward
// does not differentiate integer tensors; training differentiates the float
// matmul these stand for.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/quantization/integer_matmul.h"
#include "operators/quantization/quant_params.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The output dims, after checking A's and B's dtypes and their zero points'
// (and scales', with `scales`) dtypes and shapes.
absl::StatusOr<VarInfo> InferProduct(InferContext& context, const char* a_scale,
                                     const char* b_scale) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "A", kQuantizedDtypes));
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "B", kQuantizedDtypes));
  SF_RETURN_IF_ERROR(CheckZeroPointDtype(context, "AZeroPoint", "A"));
  SF_RETURN_IF_ERROR(CheckZeroPointDtype(context, "BZeroPoint", "B"));
  const VarInfo& a = context.Input("A");
  const VarInfo& b = context.Input("B");
  if (!a.has_dims || !b.has_dims) return VarInfo{kInt32, {}, false};
  SF_ASSIGN_OR_RETURN(
      Dims out,
      IntegerMatmulDims(a.dims, b.dims, DescribeInputShape(context, "A"),
                        DescribeInputShape(context, "B")));
  const int64_t m = a.dims.size() == 1 ? 1 : a.dims[a.dims.size() - 2];
  const int64_t n = b.dims.size() == 1 ? 1 : b.dims.back();
  SF_RETURN_IF_ERROR(CheckOneOrVector(context, "AZeroPoint", m, "row of A"));
  SF_RETURN_IF_ERROR(CheckOneOrVector(context, "BZeroPoint", n, "column of B"));
  if (a_scale != nullptr) {
    SF_RETURN_IF_ERROR(CheckOneOrVector(context, a_scale, m, "row of A"));
    SF_RETURN_IF_ERROR(CheckOneOrVector(context, b_scale, n, "column of B"));
  }
  return VarInfo{kInt32, std::move(out), true};
}

absl::Status InferMatmulInteger(InferContext& context) {
  SF_ASSIGN_OR_RETURN(VarInfo out, InferProduct(context, nullptr, nullptr));
  context.SetOutput("Y", out);
  return absl::OkStatus();
}

// The int32 products of the kernel's A and B with their zero points.
absl::StatusOr<std::vector<int32_t>> Products(const KernelContext& context,
                                              const Dims& out,
                                              IntegerMatmulSizes& sizes) {
  const Tensor& a = context.Input("A");
  const Tensor& b = context.Input("B");
  sizes = IntegerMatmulSizesOf(a.dims(), b.dims(), out);
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> a_zero,
                      IntsPer(context, "AZeroPoint", sizes.m));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> b_zero,
                      IntsPer(context, "BZeroPoint", sizes.n));
  std::vector<int32_t> acc(sizes.batches * sizes.m * sizes.n);
  IntegerMatmul(a, b, a_zero, b_zero, sizes, acc.data());
  return acc;
}

absl::Status MatmulIntegerKernel(KernelContext& context) {
  Tensor* y = context.Output("Y");
  IntegerMatmulSizes sizes;
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> acc,
                      Products(context, y->dims(), sizes));
  std::copy(acc.begin(), acc.end(), y->data<int32_t>());
  return absl::OkStatus();
}

absl::Status InferQLinearMatmul(InferContext& context) {
  SF_ASSIGN_OR_RETURN(VarInfo out, InferProduct(context, "AScale", "BScale"));
  for (const char* scale : {"AScale", "BScale", "YScale"}) {
    SF_RETURN_IF_ERROR(CheckDtypeIn(context, scale, kScaleDtypes));
  }
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "AScale", "BScale"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "AScale", "YScale"));
  SF_RETURN_IF_ERROR(CheckPerTensor(context, "YScale"));
  SF_RETURN_IF_ERROR(CheckPerTensor(context, "YZeroPoint"));
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "YZeroPoint", kQuantizedDtypes));
  out.dtype = context.Input("YZeroPoint").dtype;
  context.SetOutput("Y", out);
  return absl::OkStatus();
}

template <typename Q>
void Requantize(const std::vector<int32_t>& acc,
                const IntegerMatmulSizes& sizes,
                const std::vector<float>& multipliers, int32_t y_zero, Q* out) {
  const int64_t n = sizes.n;
  for (int64_t row = 0; row < sizes.batches * sizes.m; ++row) {
    const float* mult = &multipliers[(row % sizes.m) * n];
    for (int64_t j = 0; j < n; ++j) {
      // Rounded before the zero point is added, as QuantizeLinear does
      // (and ONNX Runtime's requantization).
      out[row * n + j] = RoundAndSaturate<Q>(
          std::nearbyint(static_cast<double>(acc[row * n + j]) * mult[j]) +
              y_zero,
          y_zero);
    }
  }
}

absl::Status QLinearMatmulKernel(KernelContext& context) {
  Tensor* y = context.Output("Y");
  IntegerMatmulSizes sizes;
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> acc,
                      Products(context, y->dims(), sizes));
  SF_ASSIGN_OR_RETURN(const std::vector<float> a_scale,
                      FloatsPer(context, "AScale", sizes.m));
  SF_ASSIGN_OR_RETURN(const std::vector<float> b_scale,
                      FloatsPer(context, "BScale", sizes.n));
  SF_ASSIGN_OR_RETURN(const std::vector<float> y_scale,
                      FloatsPer(context, "YScale", 1));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> y_zero,
                      IntsPer(context, "YZeroPoint", 1));
  const DataType scale_dtype = context.Input("AScale").dtype();
  std::vector<float> multipliers(sizes.m * sizes.n);
  for (int64_t i = 0; i < sizes.m; ++i) {
    for (int64_t j = 0; j < sizes.n; ++j) {
      multipliers[i * sizes.n + j] =
          Multiplier(scale_dtype, a_scale[i], b_scale[j], y_scale[0]);
    }
  }
  if (y->dtype() == kInt8) {
    Requantize(acc, sizes, multipliers, y_zero[0], y->data<int8_t>());
  } else {
    Requantize(acc, sizes, multipliers, y_zero[0], y->data<uint8_t>());
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(matmul_integer)
    .Input("A")
    .Input("B")
    .Input("AZeroPoint", /*optional=*/true)
    .Input("BZeroPoint", /*optional=*/true)
    .Output("Y")
    .Infer(InferMatmulInteger)
    .KernelDtypeFromOutput("Y")
    .Kernel(DeviceType::kCPU, kInt32, &MatmulIntegerKernel);

SF_REGISTER_OP(qlinear_matmul)
    .Input("A")
    .Input("AScale")
    .Input("AZeroPoint", /*optional=*/true)
    .Input("B")
    .Input("BScale")
    .Input("BZeroPoint", /*optional=*/true)
    .Input("YScale")
    .Input("YZeroPoint")
    .Output("Y")
    .Infer(InferQLinearMatmul)
    .KernelDtypeFromOutput("Y")
    .Kernel(DeviceType::kCPU, kUInt8, &QLinearMatmulKernel)
    .Kernel(DeviceType::kCPU, kInt8, &QLinearMatmulKernel);

}  // namespace scopeflow
