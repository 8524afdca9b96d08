// reverse_sequence: ONNX's ReverseSequence. X (rank >= 2, any dtype) holds
// a batch of sequences along "time_axis" and "batch_axis" (0 and 1, one
// each); input "SequenceLens" (int64, [batch]) says how many leading steps
// of each batch entry are reversed, the rest copied as they are. The
// reversal is its own inverse, so the gradient op is reverse_sequence of
// Out@GRAD with the same lengths.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status CheckAxes(const Attributes& attrs) {
  const int64_t batch_axis = attrs.Get<int64_t>("batch_axis");
  const int64_t time_axis = attrs.Get<int64_t>("time_axis");
  SF_CHECK((batch_axis == 0 && time_axis == 1) ||
               (batch_axis == 1 && time_axis == 0),
           "batch_axis = %d and time_axis = %d: expected 0 and 1, one each",
           batch_axis, time_axis);
  return absl::OkStatus();
}

absl::Status InferReverseSequence(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckAxes(context.attrs()));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 2, 64));
  SF_RETURN_IF_ERROR(CheckDtype(context, "SequenceLens", kInt64));
  SF_RETURN_IF_ERROR(CheckRank(context, "SequenceLens", 1, 1));
  const VarInfo& x = context.Input("X");
  const VarInfo& lens = context.Input("SequenceLens");
  if (x.has_dims && lens.has_dims) {
    const int64_t batch = x.dims[context.attrs().Get<int64_t>("batch_axis")];
    SF_CHECK(batch < 0 || lens.dims[0] < 0 || lens.dims[0] == batch,
             "input \"SequenceLens\" (variable \"%s\") has %d lengths, but "
             "%s has a batch of %d",
             context.InputName("SequenceLens"), lens.dims[0],
             DescribeInputShape(context, "X"), batch);
  }
  context.SetOutput("Out", x);
  return absl::OkStatus();
}

// Moves whole blocks of the dims after the first two, so one kernel serves
// every dtype.
absl::Status ReverseSequenceKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& lens_tensor = context.Input("SequenceLens");
  const int64_t batch_axis = context.attrs().Get<int64_t>("batch_axis");
  const int64_t time_axis = context.attrs().Get<int64_t>("time_axis");
  const int64_t batch = x.dim(batch_axis);
  const int64_t steps = x.dim(time_axis);
  SF_CHECK(lens_tensor.numel() == batch,
           "input \"SequenceLens\" (variable \"%s\") has %d lengths, but "
           "input \"X\" (variable \"%s\", shape %s) has a batch of %d",
           context.InputName("SequenceLens"), lens_tensor.numel(),
           context.InputName("X"), DimsToString(x.dims()), batch);
  const int64_t* lens = lens_tensor.data<int64_t>();
  for (int64_t b = 0; b < batch; ++b) {
    SF_CHECK(lens[b] >= 0 && lens[b] <= steps,
             "input \"SequenceLens\" (variable \"%s\") = %d at batch entry "
             "%d: expected 0 to %d, the steps of input \"X\" (variable "
             "\"%s\", shape %s)",
             context.InputName("SequenceLens"), lens[b], b, steps,
             context.InputName("X"), DimsToString(x.dims()), steps);
  }
  if (x.numel() == 0) return absl::OkStatus();
  const size_t block = x.nbytes() / (x.dim(0) * x.dim(1));
  const char* in = static_cast<const char*>(x.raw_data());
  char* out = static_cast<char*>(context.Output("Out")->raw_data());
  for (int64_t i0 = 0; i0 < x.dim(0); ++i0) {
    for (int64_t i1 = 0; i1 < x.dim(1); ++i1) {
      const int64_t b = batch_axis == 0 ? i0 : i1;
      const int64_t t = time_axis == 0 ? i0 : i1;
      const int64_t to = t < lens[b] ? lens[b] - 1 - t : t;
      const int64_t from_index = i0 * x.dim(1) + i1;
      const int64_t to_index =
          time_axis == 0 ? to * x.dim(1) + i1 : i0 * x.dim(1) + to;
      std::memcpy(out + to_index * block, in + from_index * block, block);
    }
  }
  return absl::OkStatus();
}

absl::Status MakeReverseSequenceGrad(GradOpContext& grad) {
  const std::vector<std::string> x_grad = grad.InputGrad("X");
  if (x_grad.empty() || x_grad[0].empty()) return absl::OkStatus();
  OpDef& op = grad.AddOp("reverse_sequence");
  GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
  GradOpContext::SetInput(op, "SequenceLens", grad.Input("SequenceLens"));
  GradOpContext::SetOutput(op, "Out", x_grad);
  grad.CopyAttrs(op);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(reverse_sequence)
    .Input("X")
    .Input("SequenceLens")
    .Output("Out")
    .Attr("batch_axis", AttrType::kInt64, AttrValue(int64_t{1}))
    .Attr("time_axis", AttrType::kInt64, AttrValue(int64_t{0}))
    .Infer(InferReverseSequence)
    .Grad(GradSpec()
              .ReadInput("SequenceLens")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .Maker(MakeReverseSequenceGrad))
    .KernelDtypeFromInput("X")
    .Kernels(DeviceType::kCPU, AllTypes(),
             [](auto) { return &ReverseSequenceKernel; });

}  // namespace scopeflow
