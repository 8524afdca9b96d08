// tensor_scatter: ONNX's TensorScatter (24), the update of a key/value
// cache. PastCache is [batch, ..., max_sequence_length (at "axis"), ...];
// Update has its shape but for sequence_length <= max_sequence_length at
// the axis. Out is PastCache with Update written, for each batch entry b,
// at the positions WriteIndices[b] + s (s < sequence_length) of the axis;
// in mode "circular" they wrap around modulo max_sequence_length. The
// optional WriteIndices (int64, [batch]) are 0 when absent. Linear writes
// must fit (0 <= index <= max - sequence_length), circular ones start in
// [0, max). Any dtype: whole rows of the dims after the axis are copied.
//
// tensor_scatter_grad (float32, float64) reads WriteIndices, Update (for
// its shape) and Out@GRAD, and writes PastCache@GRAD (Out@GRAD with the
// written positions zeroed) and Update@GRAD (Out@GRAD at them).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The axis, normalized; it may not be the batch axis 0.
absl::StatusOr<int> SequenceAxis(const Attributes& attrs, int rank) {
  const int64_t axis = attrs.Get<int64_t>("axis");
  SF_ASSIGN_OR_RETURN(const int a, NormalizeAxis(axis, rank));
  SF_CHECK(a != 0, "axis = %d is the batch axis: expected a sequence axis "
                   "after it", axis);
  return a;
}

absl::Status InferTensorScatter(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckRank(context, "PastCache", 2, 64));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "PastCache", "Update"));
  const VarInfo& past = context.Input("PastCache");
  const VarInfo& update = context.Input("Update");
  if (context.HasInput("WriteIndices")) {
    SF_RETURN_IF_ERROR(CheckDtype(context, "WriteIndices", kInt64));
    SF_RETURN_IF_ERROR(CheckRank(context, "WriteIndices", 1, 1));
  }
  if (past.has_dims && update.has_dims) {
    const int rank = static_cast<int>(past.dims.size());
    SF_ASSIGN_OR_RETURN(const int axis,
                        SequenceAxis(context.attrs(), rank));
    bool fits = update.dims.size() == past.dims.size();
    for (int i = 0; fits && i < rank; ++i) {
      const int64_t u = update.dims[i];
      const int64_t p = past.dims[i];
      if (u < 0 || p < 0) continue;
      fits = i == axis ? u <= p : u == p;
    }
    SF_CHECK(fits,
             "%s: expected %s's shape but for at most its %d steps at axis %d",
             DescribeInputShape(context, "Update"),
             DescribeInputShape(context, "PastCache"), past.dims[axis], axis);
  }
  context.SetOutput("Out", past);
  return absl::OkStatus();
}

// Where Update's rows go: Update is [outer, steps, inner bytes], the cache
// [outer, max_steps, inner bytes]; outer rows per_batch at a time belong to
// one batch entry.
struct ScatterLayout {
  int64_t outer = 1;
  int64_t per_batch = 1;
  int64_t steps = 0;
  int64_t max_steps = 0;
  size_t row_bytes = 0;
  std::vector<int64_t> start;  // Per batch entry.
  bool circular = false;

  // The cache row of Update's row s for outer row o.
  int64_t To(int64_t o, int64_t s) const {
    const int64_t at = start[o / per_batch] + s;
    return circular ? at % max_steps : at;
  }
};

absl::StatusOr<ScatterLayout> LayoutOf(const KernelContext& context,
                                       const Tensor& cache,
                                       const Tensor& update) {
  ScatterLayout layout;
  SF_ASSIGN_OR_RETURN(const int axis,
                      SequenceAxis(context.attrs(), cache.rank()));
  // Inference checks this where the shapes are known before the run.
  bool fits = update.rank() == cache.rank();
  for (int i = 0; fits && i < cache.rank(); ++i) {
    fits = i == axis ? update.dim(i) <= cache.dim(i)
                     : update.dim(i) == cache.dim(i);
  }
  SF_CHECK(fits,
           "input \"Update\" (variable \"%s\", shape %s) does not fit a "
           "cache of shape %s at axis %d",
           context.InputName("Update"), DimsToString(update.dims()),
           DimsToString(cache.dims()), axis);
  for (int i = 0; i < axis; ++i) layout.outer *= cache.dim(i);
  layout.per_batch = cache.dim(0) == 0 ? 1 : layout.outer / cache.dim(0);
  layout.steps = update.dim(axis);
  layout.max_steps = cache.dim(axis);
  layout.row_bytes = SizeOf(cache.dtype());
  for (int i = axis + 1; i < cache.rank(); ++i) {
    layout.row_bytes *= cache.dim(i);
  }
  layout.circular = context.attrs().Get<std::string>("mode") == "circular";
  layout.start.assign(cache.dim(0), 0);
  if (!context.HasInput("WriteIndices")) return layout;
  const Tensor& indices = context.Input("WriteIndices");
  SF_CHECK(indices.numel() == cache.dim(0),
           "input \"WriteIndices\" (variable \"%s\") has %d indices: "
           "expected one per batch entry, %d",
           context.InputName("WriteIndices"), indices.numel(), cache.dim(0));
  const int64_t last =
      layout.circular ? layout.max_steps - 1 : layout.max_steps - layout.steps;
  for (int64_t b = 0; b < cache.dim(0); ++b) {
    const int64_t at = indices.data<int64_t>()[b];
    SF_CHECK(at >= 0 && at <= last,
             "input \"WriteIndices\" (variable \"%s\") = %d at batch entry "
             "%d: expected 0 to %d (%s writes of %d steps into %d)",
             context.InputName("WriteIndices"), at, b, last,
             layout.circular ? "circular" : "linear", layout.steps,
             layout.max_steps);
    layout.start[b] = at;
  }
  return layout;
}

absl::Status TensorScatterKernel(KernelContext& context) {
  const Tensor& past = context.Input("PastCache");
  const Tensor& update = context.Input("Update");
  SF_ASSIGN_OR_RETURN(const ScatterLayout layout,
                      LayoutOf(context, past, update));
  Tensor* out = context.Output("Out");
  char* to = static_cast<char*>(out->raw_data());
  const char* rows = static_cast<const char*>(update.raw_data());
  if (past.nbytes() > 0) std::memcpy(to, past.raw_data(), past.nbytes());
  const size_t n = layout.row_bytes;
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t s = 0; s < layout.steps; ++s) {
      std::memcpy(to + (o * layout.max_steps + layout.To(o, s)) * n,
                  rows + (o * layout.steps + s) * n, n);
    }
  }
  return absl::OkStatus();
}

absl::Status InferTensorScatterGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Out@GRAD"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "Out@GRAD", "Update"));
  if (context.HasOutput("PastCache@GRAD")) {
    context.SetOutput("PastCache@GRAD", context.Input("Out@GRAD"));
  }
  if (context.HasOutput("Update@GRAD")) {
    context.SetOutput("Update@GRAD", context.Input("Update"));
  }
  return absl::OkStatus();
}

absl::Status TensorScatterGradKernel(KernelContext& context) {
  const Tensor& g = context.Input("Out@GRAD");
  SF_ASSIGN_OR_RETURN(const ScatterLayout layout,
                      LayoutOf(context, g, context.Input("Update")));
  const size_t n = layout.row_bytes;
  const char* from = static_cast<const char*>(g.raw_data());
  char* past = nullptr;
  if (context.HasOutput("PastCache@GRAD")) {
    past = static_cast<char*>(context.Output("PastCache@GRAD")->raw_data());
    if (g.nbytes() > 0) std::memcpy(past, from, g.nbytes());
  }
  char* update = context.HasOutput("Update@GRAD")
                     ? static_cast<char*>(
                           context.Output("Update@GRAD")->raw_data())
                     : nullptr;
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t s = 0; s < layout.steps; ++s) {
      const int64_t row = o * layout.max_steps + layout.To(o, s);
      if (update != nullptr) {
        std::memcpy(update + (o * layout.steps + s) * n, from + row * n, n);
      }
      // All-zero bytes are 0.0 in float32 and float64.
      if (past != nullptr) std::memset(past + row * n, 0, n);
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(tensor_scatter)
    .Input("PastCache")
    .Input("Update")
    .Input("WriteIndices", /*optional=*/true)
    .Output("Out")
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{-2}))
    .Attr("mode", AttrType::kString, AttrValue(std::string("linear")),
          OneOf({"linear", "circular"}))
    .Infer(InferTensorScatter)
    .Grad(GradSpec("tensor_scatter_grad")
              .ReadInput("WriteIndices")
              .ReadInput("Update")
              .ReadOutputGrad("Out")
              .WriteInputGrad("PastCache")
              .WriteInputGrad("Update"))
    .KernelDtypeFromInput("PastCache")
    .Kernels(DeviceType::kCPU, AllTypes(),
             [](auto) { return &TensorScatterKernel; });

SF_REGISTER_OP(tensor_scatter_grad)
    .Input("WriteIndices", /*optional=*/true)
    .Input("Update")
    .Input("Out@GRAD")
    .Output("PastCache@GRAD", /*optional=*/true)
    .Output("Update@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt64, AttrValue(int64_t{-2}))
    .Attr("mode", AttrType::kString, AttrValue(std::string("linear")),
          OneOf({"linear", "circular"}))
    .Infer(InferTensorScatterGrad)
    .KernelDtypeFromInput("Out@GRAD")
    .Kernel(DeviceType::kCPU, kFloat32, &TensorScatterGradKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &TensorScatterGradKernel);

}  // namespace scopeflow
