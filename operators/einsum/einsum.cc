// einsum: ONNX's Einsum (numpy's einsum) over any number of operands: an
// equation such as "bij,bjk->bik", with implicit outputs ("ij,jk"),
// ellipses ("...ij->...ji", broadcasting as numpy does), diagonals
// ("ii->i") and sums ("ij->"). Operands are folded in from left to right,
// each pair contracted as one batched matrix product (batched_gemm for
// float32 and float64).
// einsum_grad: the gradient of one operand (attribute "operand"): the
// einsum of Out@GRAD with the other operands, written back onto the
// diagonals and broadcast dimensions of that operand.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/einsum/einsum_equation.h"
#include "operators/einsum/einsum_math.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kEinsumDtypes[] = {kFloat32, kFloat64, kInt32, kInt64};

// `status` with the equation attribute and the operands' shapes, so that
// an error says what it applies to.
absl::Status InContext(const absl::Status& status, const std::string& equation,
                       const std::vector<Dims>& dims) {
  if (status.ok()) return status;
  std::string shapes;
  for (const Dims& d : dims) {
    absl::StrAppend(&shapes, shapes.empty() ? "" : ", ", DimsToString(d));
  }
  return absl::Status(status.code(),
                      absl::StrFormat("attribute \"equation\" = \"%s\" for "
                                      "input \"Operands\" of shapes %s: %s",
                                      equation, shapes, status.message()));
}

struct Bound {
  einsum::Equation equation;
  std::vector<int64_t> sizes;
};

absl::StatusOr<Bound> Bind(const std::string& equation,
                           const std::vector<Dims>& dims) {
  std::vector<int> ranks;
  for (const Dims& d : dims) ranks.push_back(static_cast<int>(d.size()));
  Bound bound;
  absl::StatusOr<einsum::Equation> parsed = einsum::Parse(equation, ranks);
  SF_RETURN_IF_ERROR(InContext(parsed.status(), equation, dims));
  bound.equation = *std::move(parsed);
  absl::StatusOr<std::vector<int64_t>> sizes =
      einsum::LabelSizes(bound.equation, dims);
  SF_RETURN_IF_ERROR(InContext(sizes.status(), equation, dims));
  bound.sizes = *std::move(sizes);
  return bound;
}

// OK if the operands share one of the einsum dtypes.
absl::Status CheckOperands(const InferContext& context) {
  SF_CHECK(context.InputCount("Operands") > 0,
           "input \"Operands\" is empty: expected at least one operand");
  for (int i = 0; i < context.InputCount("Operands"); ++i) {
    const VarInfo& info = context.Input("Operands", i);
    const VarInfo& first = context.Input("Operands", 0);
    bool allowed = false;
    for (DataType dtype : kEinsumDtypes) allowed |= info.dtype == dtype;
    SF_CHECK(allowed && info.dtype == first.dtype,
             "operand %d of input \"Operands\" (variable \"%s\") has dtype "
             "%s: expected %s",
             i, context.InputName("Operands", i), DataTypeName(info.dtype),
             i == 0 ? "float32, float64, int32 or int64"
                    : absl::StrCat(DataTypeName(first.dtype),
                                   ", the dtype of operand 0"));
  }
  return absl::OkStatus();
}

// The operands' dims, or nullopt if any rank is unknown.
std::optional<std::vector<Dims>> OperandDims(const InferContext& context) {
  std::vector<Dims> dims;
  for (int i = 0; i < context.InputCount("Operands"); ++i) {
    const VarInfo& info = context.Input("Operands", i);
    if (!info.has_dims) return std::nullopt;
    dims.push_back(info.dims);
  }
  return dims;
}

absl::Status InferEinsum(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckOperands(context));
  const DataType dtype = context.Input("Operands", 0).dtype;
  const std::optional<std::vector<Dims>> dims = OperandDims(context);
  if (!dims.has_value()) {
    context.SetOutput("Out", VarInfo{dtype, {}, false});
    return absl::OkStatus();
  }
  SF_ASSIGN_OR_RETURN(
      const Bound bound,
      Bind(context.attrs().Get<std::string>("equation"), *dims));
  Dims out;
  for (int label : bound.equation.output) out.push_back(bound.sizes[label]);
  context.SetOutput("Out", 0, dtype, std::move(out));
  return absl::OkStatus();
}

std::vector<Dims> KernelOperandDims(const KernelContext& context) {
  std::vector<Dims> dims;
  for (int i = 0; i < context.InputCount("Operands"); ++i) {
    dims.push_back(context.Input("Operands", i).dims());
  }
  return dims;
}

template <typename T>
std::vector<einsum::Labeled<T>> LabeledOperands(const KernelContext& context,
                                                const Bound& bound) {
  std::vector<einsum::Labeled<T>> operands;
  for (int i = 0; i < context.InputCount("Operands"); ++i) {
    operands.push_back(einsum::FromTensor<T>(context.Input("Operands", i),
                                             bound.equation.inputs[i]));
  }
  return operands;
}

template <typename T>
absl::Status EinsumKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const Bound bound,
                      Bind(context.attrs().Get<std::string>("equation"),
                           KernelOperandDims(context)));
  SF_ASSIGN_OR_RETURN(
      const einsum::Labeled<T> result,
      einsum::Evaluate(LabeledOperands<T>(context, bound),
                       bound.equation.output, bound.sizes));
  Tensor* out = context.Output("Out");
  SF_CHECK(out->dims() == result.dims,
           "the result has shape %s: expected %s", DimsToString(result.dims),
           DimsToString(out->dims()));
  if (!result.data.empty()) {
    std::memcpy(out->raw_data(), result.data.data(),
                result.data.size() * sizeof(T));
  }
  return absl::OkStatus();
}

// One einsum_grad op per operand whose gradient is wanted.
absl::Status MakeEinsumGrad(GradOpContext& grad) {
  const std::vector<std::string> grads = grad.InputGrad("Operands");
  for (int i = 0; i < static_cast<int>(grads.size()); ++i) {
    if (grads[i].empty()) continue;
    OpDef& op = grad.AddOp("einsum_grad");
    GradOpContext::SetInput(op, "Operands", grad.Input("Operands"));
    GradOpContext::SetInput(op, "Out@GRAD", grad.OutputGrad("Out"));
    GradOpContext::SetOutput(op, "Grad", {grads[i]});
    grad.CopyAttrs(op);
    GradOpContext::SetAttr(op, "operand", AttrValue(i));
  }
  return absl::OkStatus();
}

absl::Status InferEinsumGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckOperands(context));
  const int which = context.attrs().Get<int32_t>("operand");
  SF_CHECK(which >= 0 && which < context.InputCount("Operands"),
           "attribute \"operand\" = %d: expected an index into the %d "
           "operands",
           which, context.InputCount("Operands"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "Out@GRAD", "Operands"));
  if (const auto dims = OperandDims(context); dims.has_value()) {
    SF_ASSIGN_OR_RETURN(
        const Bound bound,
        Bind(context.attrs().Get<std::string>("equation"), *dims));
    const VarInfo& grad = context.Input("Out@GRAD");
    if (grad.has_dims) {
      bool matches = grad.dims.size() == bound.equation.output.size();
      for (size_t k = 0; matches && k < grad.dims.size(); ++k) {
        const int64_t size = bound.sizes[bound.equation.output[k]];
        matches = grad.dims[k] < 0 || size < 0 || grad.dims[k] == size;
      }
      SF_CHECK(matches,
               "input \"Out@GRAD\" (variable \"%s\") has shape %s, which "
               "the output of the einsum cannot have",
               context.InputName("Out@GRAD"), DimsToString(grad.dims));
    }
  }
  context.SetOutput("Grad", context.Input("Operands", which));
  return absl::OkStatus();
}

template <typename T>
absl::Status EinsumGradKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const Bound bound,
                      Bind(context.attrs().Get<std::string>("equation"),
                           KernelOperandDims(context)));
  const Tensor& out_grad = context.Input("Out@GRAD");
  SF_ASSIGN_OR_RETURN(
      const std::vector<T> grad,
      einsum::OperandGradient(
          LabeledOperands<T>(context, bound),
          context.attrs().Get<int32_t>("operand"),
          einsum::FromTensor<T>(out_grad, bound.equation.output),
          bound.sizes));
  Tensor* out = context.Output("Grad");
  if (!grad.empty()) {
    std::memcpy(out->raw_data(), grad.data(), grad.size() * sizeof(T));
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(einsum)
    .Input("Operands", /*optional=*/false, /*variadic=*/true)
    .Output("Out")
    .Attr("equation", AttrType::kString)
    .Infer(InferEinsum)
    .Grad(GradSpec()
              .ReadInput("Operands")
              .ReadOutputGrad("Out")
              .WriteInputGrad("Operands")
              .Maker(MakeEinsumGrad))
    .Kernel(DeviceType::kCPU, kFloat32, &EinsumKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &EinsumKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &EinsumKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &EinsumKernel<int64_t>);

SF_REGISTER_OP(einsum_grad)
    .Input("Operands", /*optional=*/false, /*variadic=*/true)
    .Input("Out@GRAD")
    .Output("Grad")
    .Attr("equation", AttrType::kString)
    .Attr("operand", AttrType::kInt)
    .Infer(InferEinsumGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &EinsumGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &EinsumGradKernel<double>);

}  // namespace scopeflow
