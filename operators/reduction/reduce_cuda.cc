// CUDA kernels of reduce_sum, reduce_mean, reduce_max, mean and their
// gradients: the ops are declared, with their CPU kernels, in reduce.cc,
// whose axis checks these kernels repeat.
#include "operators/reduction/reduce_cuda.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "operators/common.h"
#include "operators/reduction/reduce_axes.h"
#include "operators/reduction/reduce_grad_cuda.h"
#include "operators/value_input.h"
#include "platform/cuda_context.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using reduction::KernelReducedAxes;

// The number of elements each output reduces.
int64_t ReducedCount(const Tensor& x, const std::vector<bool>& reduced) {
  int64_t count = 1;
  for (int i = 0; i < x.rank(); ++i) {
    if (reduced[i]) count *= x.dim(i);
  }
  return count;
}

// X's runs for a reduction, as the CPU kernels coalesce them.
cuda::ReduceRuns Coalesce(absl::Span<const int64_t> dims,
                          const std::vector<bool>& reduced) {
  reduction::ReduceShape shape = reduction::Coalesce(dims, reduced);
  return cuda::ReduceRuns{std::move(shape.sizes), std::move(shape.reduced)};
}

// Reduces x as `runs` say into `out` (count elements per output).
template <typename T>
absl::Status RunReduce(const KernelContext& context, cuda::ReduceOp op,
                       const cuda::ReduceRuns& runs, const Tensor& x,
                       Tensor* out, int64_t count) {
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const cuda::ReducePlan plan = cuda::PlanReduce<T>(op, runs);
  void* workspace = nullptr;
  if (plan.workspace_bytes > 0) {
    SF_ASSIGN_OR_RETURN(workspace, cuda->Workspace(plan.workspace_bytes));
  }
  const char* name = context.op_type().c_str();
  SF_RETURN_IF_ERROR(
      CudaCheck(cuda::LaunchReduce<T>(op, plan, x.data<T>(), out->data<T>(),
                                      count, workspace, cuda->stream()),
                name));
  return CudaLaunchCheck(name);
}

template <typename T, cuda::ReduceOp kOp>
absl::Status ReduceCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const std::vector<bool> reduced,
                      KernelReducedAxes(context, x, "Out"));
  if (out->numel() == 0) return absl::OkStatus();
  return RunReduce<T>(context, kOp, Coalesce(x.dims(), reduced), x, out,
                      ReducedCount(x, reduced));
}

// mean: every element, into a scalar.
template <typename T>
absl::Status MeanCuda(KernelContext& context) {
  const Tensor& x = context.Input("X");
  cuda::ReduceRuns runs;
  runs.sizes = {x.numel()};
  runs.reduced = {true};
  return RunReduce<T>(context, cuda::ReduceOp::kMean, runs, x,
                      context.Output("Out"), x.numel());
}

// X's runs for a gradient kernel, which maps elements through at most
// kMaxGradRuns of them.
absl::StatusOr<cuda::ReduceRuns> GradRuns(const KernelContext& context,
                                          const Tensor& x,
                                          const std::vector<bool>& reduced) {
  cuda::ReduceRuns runs = Coalesce(x.dims(), reduced);
  SF_CHECK_CODE(runs.sizes.size() <= cuda::kMaxGradRuns,
                absl::StatusCode::kUnimplemented,
                "%s: input \"X\" (variable \"%s\", shape %s) alternates "
                "reduced and kept axes %d times; the CUDA kernel handles at "
                "most %d",
                context.op_type(), context.InputName("X"),
                DimsToString(x.dims()), runs.sizes.size(), cuda::kMaxGradRuns);
  return runs;
}

template <typename T, bool kMean>
absl::Status ReduceSumOrMeanGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  if (x.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const std::vector<bool> reduced,
                      KernelReducedAxes(context, x, "Out@GRAD"));
  SF_ASSIGN_OR_RETURN(const cuda::ReduceRuns runs,
                      GradRuns(context, x, reduced));
  const T scale =
      kMean
          ? static_cast<T>(1.0 / static_cast<double>(ReducedCount(x, reduced)))
          : T(1);
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchReduceSpread<T>(runs, context.Input("Out@GRAD").data<T>(), scale,
                              context.Output("X@GRAD")->data<T>(),
                              cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

template <typename T>
absl::Status ReduceMaxGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  const Tensor& max = context.Input("Out");
  const Tensor& g = context.Input("Out@GRAD");
  SF_CHECK(max.numel() == g.numel(),
           "input \"Out\" holds %d elements, but \"Out@GRAD\" %d: expected "
           "the same count",
           max.numel(), g.numel());
  if (x.numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(const std::vector<bool> reduced,
                      KernelReducedAxes(context, x, "Out@GRAD"));
  SF_ASSIGN_OR_RETURN(const cuda::ReduceRuns runs,
                      GradRuns(context, x, reduced));
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const int64_t outputs = max.numel();
  void* workspace = nullptr;
  if (outputs > 0) {
    SF_ASSIGN_OR_RETURN(
        workspace, cuda->Workspace(cuda::ReduceMaxGradWorkspaceBytes(outputs)));
  }
  const char* name = context.op_type().c_str();
  SF_RETURN_IF_ERROR(CudaCheck(
      cuda::LaunchReduceMaxGrad<T>(runs, x.data<T>(), max.data<T>(),
                                   g.data<T>(),
                                   context.Output("X@GRAD")->data<T>(), outputs,
                                   workspace, cuda->stream()),
      name));
  return CudaLaunchCheck(name);
}

template <typename T>
absl::Status MeanGradCuda(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  Tensor* dx = context.Output("X@GRAD");
  if (dx->numel() == 0) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  cuda::LaunchMeanGrad<T>(context.Input("Out@GRAD").data<T>(), dx->data<T>(),
                          dx->numel(), cuda->stream());
  return CudaLaunchCheck(context.op_type().c_str());
}

using cuda::ReduceOp;

}  // namespace

SF_REGISTER_KERNEL(reduce_sum, DeviceType::kCUDA, kFloat32,
                   (&ReduceCuda<float, ReduceOp::kSum>));
SF_REGISTER_KERNEL(reduce_sum, DeviceType::kCUDA, kFloat64,
                   (&ReduceCuda<double, ReduceOp::kSum>));
SF_REGISTER_KERNEL(reduce_sum, DeviceType::kCUDA, kInt32,
                   (&ReduceCuda<int32_t, ReduceOp::kSum>));
SF_REGISTER_KERNEL(reduce_sum, DeviceType::kCUDA, kInt64,
                   (&ReduceCuda<int64_t, ReduceOp::kSum>));
SF_REGISTER_KERNEL(reduce_mean, DeviceType::kCUDA, kFloat32,
                   (&ReduceCuda<float, ReduceOp::kMean>));
SF_REGISTER_KERNEL(reduce_mean, DeviceType::kCUDA, kFloat64,
                   (&ReduceCuda<double, ReduceOp::kMean>));
SF_REGISTER_KERNEL(reduce_max, DeviceType::kCUDA, kFloat32,
                   (&ReduceCuda<float, ReduceOp::kMax>));
SF_REGISTER_KERNEL(reduce_max, DeviceType::kCUDA, kFloat64,
                   (&ReduceCuda<double, ReduceOp::kMax>));
SF_REGISTER_KERNEL(reduce_max, DeviceType::kCUDA, kInt32,
                   (&ReduceCuda<int32_t, ReduceOp::kMax>));
SF_REGISTER_KERNEL(reduce_max, DeviceType::kCUDA, kInt64,
                   (&ReduceCuda<int64_t, ReduceOp::kMax>));
SF_REGISTER_KERNEL(mean, DeviceType::kCUDA, kFloat32, &MeanCuda<float>);
SF_REGISTER_KERNEL(mean, DeviceType::kCUDA, kFloat64, &MeanCuda<double>);

SF_REGISTER_KERNEL(reduce_sum_grad, DeviceType::kCUDA, kFloat32,
                   (&ReduceSumOrMeanGradCuda<float, false>));
SF_REGISTER_KERNEL(reduce_sum_grad, DeviceType::kCUDA, kFloat64,
                   (&ReduceSumOrMeanGradCuda<double, false>));
SF_REGISTER_KERNEL(reduce_mean_grad, DeviceType::kCUDA, kFloat32,
                   (&ReduceSumOrMeanGradCuda<float, true>));
SF_REGISTER_KERNEL(reduce_mean_grad, DeviceType::kCUDA, kFloat64,
                   (&ReduceSumOrMeanGradCuda<double, true>));
SF_REGISTER_KERNEL(reduce_max_grad, DeviceType::kCUDA, kFloat32,
                   &ReduceMaxGradCuda<float>);
SF_REGISTER_KERNEL(reduce_max_grad, DeviceType::kCUDA, kFloat64,
                   &ReduceMaxGradCuda<double>);
SF_REGISTER_KERNEL(mean_grad, DeviceType::kCUDA, kFloat32,
                   &MeanGradCuda<float>);
SF_REGISTER_KERNEL(mean_grad, DeviceType::kCUDA, kFloat64,
                   &MeanGradCuda<double>);

}  // namespace scopeflow
