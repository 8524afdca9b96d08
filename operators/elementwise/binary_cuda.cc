// CUDA kernels of the broadcast ops and their gradients: add, sub, mul, div,
// pow, max, min (binary.cc), the comparisons and where (compare.cc), which
// declare the ops with their CPU kernels.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "operators/elementwise/broadcast.h"
#include "operators/elementwise/elementwise_cuda.h"
#include "platform/cuda_context.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// `"X" (variable "x", shape [2, 3]), "Y" (...)` for the inputs of `slots`.
std::string DescribeInputs(const KernelContext& context,
                           std::initializer_list<absl::string_view> slots) {
  std::vector<std::string> inputs;
  for (absl::string_view slot : slots) {
    inputs.push_back(absl::StrFormat("\"%s\" (variable \"%s\", shape %s)", slot,
                                     context.InputName(slot),
                                     DimsToString(context.Input(slot).dims())));
  }
  return absl::StrJoin(inputs, ", ");
}

// `plan` as the kernels take it: an error if it keeps more dimensions than
// they index (`describe` names the inputs for it).
absl::StatusOr<cuda::BroadcastShape> ToCudaShape(
    const elementwise::BroadcastPlan& plan, int num_operands,
    absl::FunctionRef<std::string()> describe) {
  const int rank = static_cast<int>(plan.dims.size());
  SF_CHECK_CODE(rank <= cuda::kMaxBroadcastRank,
                absl::StatusCode::kUnimplemented,
                "inputs %s broadcast over %d dimensions that do not merge: "
                "the CUDA kernels take at most %d",
                describe(), rank, cuda::kMaxBroadcastRank);
  cuda::BroadcastShape shape;
  shape.rank = rank;
  for (int d = 0; d < rank; ++d) {
    shape.dims[d] = plan.dims[d];
    for (int k = 0; k < num_operands; ++k) {
      shape.strides[k][d] = plan.strides[k][d];
    }
  }
  return shape;
}

// The iteration over `out` (n > 0 elements) with the inputs of `slots`
// (two or three) as operands. Operands each as large as the output or a
// single element need no plan: the kernels take them as flat arrays.
absl::StatusOr<cuda::BroadcastShape> ShapeOf(
    const KernelContext& context, const Tensor& out,
    std::initializer_list<absl::string_view> slots) {
  const int64_t n = out.numel();
  bool flat = true;
  for (absl::string_view slot : slots) {
    const int64_t numel = context.Input(slot).numel();
    flat = flat && (numel == n || numel == 1);
  }
  if (flat) {
    cuda::BroadcastShape shape;
    shape.rank = 1;
    shape.dims[0] = n;
    int k = 0;
    for (absl::string_view slot : slots) {
      shape.strides[k++][0] = context.Input(slot).numel() == n ? 1 : 0;
    }
    return shape;
  }
  const auto describe = [&] { return DescribeInputs(context, slots); };
  const auto dims = [&](int k) -> const Dims& {
    return context.Input(*(slots.begin() + k)).dims();
  };
  if (slots.size() == 2) {
    return ToCudaShape(
        elementwise::MakeBroadcastPlan(out.dims(), {dims(0), dims(1)}), 2,
        describe);
  }
  return ToCudaShape(
      elementwise::MakeBroadcastPlan(out.dims(), {dims(0), dims(1), dims(2)}),
      3, describe);
}

// Integer div and pow find the inputs they reject on the device: the
// lowest such index goes to a flag in device memory, and from there to a
// device check slot the run reads once it waited for its kernels anyway
// (platform/cuda_runtime.h), with the CPU kernel's words.
template <typename T>
absl::Status BinaryCuda(KernelContext& context, cuda::BinaryOp op) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  Tensor* out = context.Output("Out");
  const int64_t n = out->numel();
  if (n == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const cuda::BroadcastShape shape,
                      ShapeOf(context, *out, {"X", "Y"}));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const bool checked = std::is_integral_v<T> && (op == cuda::BinaryOp::kDiv ||
                                                 op == cuda::BinaryOp::kPow);
  unsigned long long* error = nullptr;
  if (checked) {
    SF_ASSIGN_OR_RETURN(void* flag, cuda->Workspace(sizeof(*error)));
    error = static_cast<unsigned long long*>(flag);
    SF_RETURN_IF_ERROR(
        CudaCheck(cudaMemsetAsync(error, 0xff, sizeof(*error), cuda->stream()),
                  "cudaMemsetAsync"));
  }
  cuda::LaunchBinary<T>(op, x.data<T>(), y.data<T>(), out->data<T>(), n, shape,
                        error, cuda->stream());
  SF_RETURN_IF_ERROR(CudaLaunchCheck(context.op_type().c_str()));
  if (!checked) return absl::OkStatus();
  const std::string op_prefix =
      absl::StrFormat("op %d (%s): ", context.op_index(), context.op_type());
  std::string what;
  if (op == cuda::BinaryOp::kDiv) {
    what = absl::StrFormat(
        "%sinput \"Y\" (variable \"%s\", shape %s) holds 0 at element $0: "
        "integer division by zero",
        op_prefix, context.InputName("Y"), DimsToString(y.dims()));
  } else {
    what = absl::StrFormat(
        "%sinput \"X\" (variable \"%s\") holds 0 where input \"Y\" "
        "(variable \"%s\") holds a negative exponent: integer 0 has no "
        "negative power",
        op_prefix, context.InputName("X"), context.InputName("Y"));
  }
  // Div names the element (the lowest found, as the CPU's loop finds it);
  // pow's message, as the CPU's, names none.
  SF_ASSIGN_OR_RETURN(
      int64_t * report,
      DeviceCheckSlot(cuda->device(), std::move(what),
                      /*with_value=*/op == cuda::BinaryOp::kDiv));
  cuda::LaunchReportRejected(error, report, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T>
absl::Status CompareCuda(KernelContext& context, cuda::CompareOp op) {
  Tensor* out = context.Output("Out");
  const int64_t n = out->numel();
  if (n == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const cuda::BroadcastShape shape,
                      ShapeOf(context, *out, {"X", "Y"}));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchCompare<T>(op, context.Input("X").data<T>(),
                         context.Input("Y").data<T>(), out->data<bool>(), n,
                         shape, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T>
absl::Status WhereCuda(KernelContext& context) {
  Tensor* out = context.Output("Out");
  const int64_t n = out->numel();
  if (n == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const cuda::BroadcastShape shape,
                      ShapeOf(context, *out, {"Condition", "X", "Y"}));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchWhere<T>(
      context.Input("Condition").data<bool>(), context.Input("X").data<T>(),
      context.Input("Y").data<T>(), out->data<T>(), n, shape, cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

// The gradient of operand A (slot `a_slot`, gradient `grad`) summed over
// the broadcast of A and the operand B its terms read, as
// elementwise::ReduceBroadcastGrad: an empty Out@GRAD leaves it 0.
template <typename T>
absl::Status ReduceGradCuda(const KernelContext& context, CudaContext& cuda,
                            const cuda::GradInputs<T>& in, bool for_y,
                            absl::string_view a_slot, absl::string_view b_slot,
                            Tensor* grad) {
  const Tensor& dout = context.Input("Out@GRAD");
  if (dout.numel() == 0) {
    if (grad->numel() == 0) return absl::OkStatus();
    return CudaCheck(
        cudaMemsetAsync(grad->data<T>(), 0, grad->nbytes(), cuda.stream()),
        "cudaMemsetAsync");
  }
  SF_ASSIGN_OR_RETURN(
      const cuda::BroadcastShape shape,
      ToCudaShape(
          elementwise::MakeBroadcastPlan(
              dout.dims(),
              {context.Input(a_slot).dims(), context.Input(b_slot).dims()}),
          2, [&] {
            return DescribeInputs(context, {a_slot, b_slot, "Out@GRAD"});
          }));
  void* workspace = nullptr;
  const size_t bytes = cuda::GradWorkspaceBytes(shape, sizeof(T));
  if (bytes > 0) {
    SF_ASSIGN_OR_RETURN(workspace, cuda.Workspace(bytes));
  }
  cuda::LaunchBroadcastGrad<T>(in, for_y, grad->data<T>(), shape, workspace,
                               cuda.stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

// Writes the bound outputs X@GRAD and Y@GRAD. The term of X's gradient
// reads `x_other` besides X, Y's `y_other` (the other operand, or
// Condition); `all_full`: no input is broadcast, so both come from one
// pass.
template <typename T>
absl::Status GradsCuda(KernelContext& context, const cuda::GradInputs<T>& in,
                       absl::string_view x_other, absl::string_view y_other,
                       bool all_full) {
  Tensor* dx = context.HasOutput("X@GRAD") ? context.Output("X@GRAD") : nullptr;
  Tensor* dy = context.HasOutput("Y@GRAD") ? context.Output("Y@GRAD") : nullptr;
  if (dx == nullptr && dy == nullptr) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  if (dx != nullptr && dy != nullptr && all_full) {
    cuda::LaunchGradSameShape<T>(in, dx->data<T>(), dy->data<T>(),
                                 context.Input("Out@GRAD").numel(),
                                 cuda->stream());
    return CudaLaunchCheck(context.op_type().c_str());
  }
  if (dx != nullptr) {
    SF_RETURN_IF_ERROR(ReduceGradCuda<T>(context, *cuda, in, /*for_y=*/false,
                                         "X", x_other, dx));
  }
  if (dy != nullptr) {
    SF_RETURN_IF_ERROR(ReduceGradCuda<T>(context, *cuda, in, /*for_y=*/true,
                                         "Y", y_other, dy));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status BinaryGradCuda(KernelContext& context, cuda::GradOp op) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  const Tensor& dout = context.Input("Out@GRAD");
  cuda::GradInputs<T> in;
  in.op = op;
  in.x = x.data<T>();
  in.y = y.data<T>();
  in.dout = dout.data<T>();
  const int64_t n = dout.numel();
  return GradsCuda<T>(context, in, "Y", "X", x.numel() == n && y.numel() == n);
}

template <typename T>
absl::Status WhereGradCuda(KernelContext& context) {
  const Tensor& condition = context.Input("Condition");
  const Tensor& dout = context.Input("Out@GRAD");
  cuda::GradInputs<T> in;
  in.op = cuda::GradOp::kWhere;
  in.condition = condition.data<bool>();
  in.dout = dout.data<T>();
  const int64_t n = dout.numel();
  return GradsCuda<T>(context, in, "Condition", "Condition",
                      condition.numel() == n &&
                          context.Input("X").numel() == n &&
                          context.Input("Y").numel() == n);
}

template <typename T, cuda::BinaryOp kOp>
absl::Status BinaryKernel(KernelContext& context) {
  return BinaryCuda<T>(context, kOp);
}

template <typename T, cuda::CompareOp kOp>
absl::Status CompareKernel(KernelContext& context) {
  return CompareCuda<T>(context, kOp);
}

template <typename T, cuda::GradOp kOp>
absl::Status BinaryGradKernel(KernelContext& context) {
  return BinaryGradCuda<T>(context, kOp);
}

}  // namespace

// Registers fn<T, kind> as the CUDA kernel of `op` for float32, float64
// and, with _INT, int32 and int64.
#define SF_REGISTER_CUDA_FLOAT(op, fn, kind)                               \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat32, (&fn<float, kind>)); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kFloat64, (&fn<double, kind>))
#define SF_REGISTER_CUDA_INT(op, fn, kind)                                 \
  SF_REGISTER_CUDA_FLOAT(op, fn, kind);                                    \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt32, (&fn<int32_t, kind>)); \
  SF_REGISTER_KERNEL(op, DeviceType::kCUDA, kInt64, (&fn<int64_t, kind>))

SF_REGISTER_CUDA_INT(add, BinaryKernel, cuda::BinaryOp::kAdd);
SF_REGISTER_CUDA_INT(sub, BinaryKernel, cuda::BinaryOp::kSub);
SF_REGISTER_CUDA_INT(mul, BinaryKernel, cuda::BinaryOp::kMul);
SF_REGISTER_CUDA_INT(div, BinaryKernel, cuda::BinaryOp::kDiv);
SF_REGISTER_CUDA_INT(pow, BinaryKernel, cuda::BinaryOp::kPow);
SF_REGISTER_CUDA_INT(max, BinaryKernel, cuda::BinaryOp::kMax);
SF_REGISTER_CUDA_INT(min, BinaryKernel, cuda::BinaryOp::kMin);

SF_REGISTER_CUDA_FLOAT(add_grad, BinaryGradKernel, cuda::GradOp::kAdd);
SF_REGISTER_CUDA_FLOAT(sub_grad, BinaryGradKernel, cuda::GradOp::kSub);
SF_REGISTER_CUDA_FLOAT(mul_grad, BinaryGradKernel, cuda::GradOp::kMul);
SF_REGISTER_CUDA_FLOAT(div_grad, BinaryGradKernel, cuda::GradOp::kDiv);
SF_REGISTER_CUDA_FLOAT(pow_grad, BinaryGradKernel, cuda::GradOp::kPow);
SF_REGISTER_CUDA_FLOAT(max_grad, BinaryGradKernel, cuda::GradOp::kMax);
SF_REGISTER_CUDA_FLOAT(min_grad, BinaryGradKernel, cuda::GradOp::kMin);

SF_REGISTER_CUDA_INT(equal, CompareKernel, cuda::CompareOp::kEqual);
SF_REGISTER_KERNEL(equal, DeviceType::kCUDA, kBool,
                   (&CompareKernel<bool, cuda::CompareOp::kEqual>));
SF_REGISTER_CUDA_INT(less, CompareKernel, cuda::CompareOp::kLess);
SF_REGISTER_CUDA_INT(greater, CompareKernel, cuda::CompareOp::kGreater);
SF_REGISTER_CUDA_INT(less_equal, CompareKernel, cuda::CompareOp::kLessEqual);
SF_REGISTER_CUDA_INT(greater_equal, CompareKernel,
                     cuda::CompareOp::kGreaterEqual);

SF_REGISTER_KERNEL(where, DeviceType::kCUDA, kFloat32, &WhereCuda<float>);
SF_REGISTER_KERNEL(where, DeviceType::kCUDA, kFloat64, &WhereCuda<double>);
SF_REGISTER_KERNEL(where, DeviceType::kCUDA, kInt32, &WhereCuda<int32_t>);
SF_REGISTER_KERNEL(where, DeviceType::kCUDA, kInt64, &WhereCuda<int64_t>);
SF_REGISTER_KERNEL(where, DeviceType::kCUDA, kBool, &WhereCuda<bool>);
SF_REGISTER_KERNEL(where_grad, DeviceType::kCUDA, kFloat32,
                   &WhereGradCuda<float>);
SF_REGISTER_KERNEL(where_grad, DeviceType::kCUDA, kFloat64,
                   &WhereGradCuda<double>);

#undef SF_REGISTER_CUDA_INT
#undef SF_REGISTER_CUDA_FLOAT

}  // namespace scopeflow
