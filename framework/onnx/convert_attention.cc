// The converter of ONNX's Attention (23): scaled dot-product attention over
// heads, onto scopeflow's fused attention op (operators/attention) where
// the node asks for nothing that op lacks, and onto matmul, tanh, add,
// softmax and matmul where it asks for a softcap or the qk_matmul_output.
// Around either: 3-D inputs are split into heads (reshape, transpose) and
// the output joined back; past_key / past_value are concatenated before K
// and V (and are the present_key / present_value outputs); grouped-query
// heads repeat each K and V head for its group of Q heads (expand); a
// boolean attn_mask becomes 0 / -inf and is_causal adds a constant -inf
// above the diagonal shifted by the past length (bottom-right alignment).
// Inputs need known dims.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "framework/onnx/onnx_tensor.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// A one-element tensor of `dtype` (float32 or float64) holding `value`.
Tensor Scalar(DataType dtype, double value) {
  Tensor t;
  (void)t.Allocate(CPUPlace(), dtype, Dims{});
  if (dtype == kFloat64) {
    t.data<double>()[0] = value;
  } else {
    t.data<float>()[0] = static_cast<float>(value);
  }
  return t;
}

// Emits `op` with output a fresh variable named after `hint`; returns it.
absl::StatusOr<std::string> EmitTo(NodeContext& context, OpBuilder op,
                                   absl::string_view hint) {
  const std::string out = context.Temp(hint);
  SF_RETURN_IF_ERROR(context.Emit(op.Out("Out", out)));
  return out;
}

// [B, L, H * D] as [B, H, L, D].
absl::StatusOr<std::string> SplitHeads(NodeContext& context,
                                       const std::string& x, const Dims& dims,
                                       int64_t heads, absl::string_view hint) {
  SF_CHECK(heads > 0 && dims[2] % heads == 0,
           "%s's last dim %d does not split into %d heads", hint, dims[2],
           heads);
  SF_ASSIGN_OR_RETURN(
      const std::string split,
      EmitTo(context,
             OpBuilder("reshape").In("X", x).Attr(
                 "shape", std::vector<int64_t>{dims[0], dims[1], heads,
                                               dims[2] / heads}),
             absl::StrCat(hint, "_split")));
  return EmitTo(context,
                OpBuilder("transpose")
                    .In("X", split)
                    .Attr("perm", std::vector<int32_t>{0, 2, 1, 3}),
                absl::StrCat(hint, "_heads"));
}

// [B, Hkv, L, D] with each head repeated `group` times: [B, Hkv * group, L,
// D], head h reading K head h / group.
absl::StatusOr<std::string> RepeatHeads(NodeContext& context,
                                        const std::string& x, const Dims& dims,
                                        int64_t group, absl::string_view hint) {
  if (group == 1) return x;
  SF_ASSIGN_OR_RETURN(
      const std::string one,
      EmitTo(context,
             OpBuilder("reshape").In("X", x).Attr(
                 "shape",
                 std::vector<int64_t>{dims[0], dims[1], 1, dims[2], dims[3]}),
             absl::StrCat(hint, "_one")));
  SF_ASSIGN_OR_RETURN(
      const std::string wide,
      EmitTo(context,
             OpBuilder("expand").In("X", one).Attr(
                 "shape", std::vector<int64_t>{dims[0], dims[1], group, dims[2],
                                               dims[3]}),
             absl::StrCat(hint, "_repeated")));
  return EmitTo(context,
                OpBuilder("reshape").In("X", wide).Attr(
                    "shape", std::vector<int64_t>{dims[0], dims[1] * group,
                                                  dims[2], dims[3]}),
                absl::StrCat(hint, "_grouped"));
}

// The additive bias of the scores: attn_mask (a boolean one as 0 / -inf)
// plus the causal mask; "" if neither.
absl::StatusOr<std::string> Bias(NodeContext& context, DataType dtype,
                                 int64_t lq, int64_t past, int64_t total,
                                 bool causal) {
  std::string bias;
  if (context.HasInput(3)) {
    SF_ASSIGN_OR_RETURN(bias, context.Input(3));
    if (context.InputInfo(3).dtype == kBool) {
      const std::string zero = context.AddConstant("zero", Scalar(dtype, 0));
      const std::string minus_inf =
          context.AddConstant("minus_inf", Scalar(dtype, kMinusInfinity));
      SF_ASSIGN_OR_RETURN(bias, EmitTo(context,
                                       OpBuilder("where")
                                           .In("Condition", bias)
                                           .In("X", zero)
                                           .In("Y", minus_inf),
                                       "mask_bias"));
    }
  }
  if (!causal) return bias;
  // Query i attends key j iff j <= i + past.
  Tensor mask;
  SF_RETURN_IF_ERROR(mask.Allocate(CPUPlace(), dtype, Dims{lq, total}));
  for (int64_t i = 0; i < lq; ++i) {
    for (int64_t j = 0; j < total; ++j) {
      const double v = j <= i + past ? 0.0 : kMinusInfinity;
      if (dtype == kFloat64) {
        mask.data<double>()[i * total + j] = v;
      } else {
        mask.data<float>()[i * total + j] = static_cast<float>(v);
      }
    }
  }
  const std::string causal_mask =
      context.AddConstant("causal_mask", std::move(mask));
  if (bias.empty()) return causal_mask;
  return EmitTo(context, OpBuilder("add").In("X", bias).In("Y", causal_mask),
                "bias");
}

absl::Status ConvertAttention(NodeContext& context) {
  SF_CHECK(context.opset() >= 23,
           "ONNX Attention exists from opset 23 on: the model imports opset %d",
           context.opset());
  SF_ASSIGN_OR_RETURN(const int64_t is_causal, context.IntAttr("is_causal", 0));
  SF_ASSIGN_OR_RETURN(const int64_t mode,
                      context.IntAttr("qk_matmul_output_mode", 0));
  SF_ASSIGN_OR_RETURN(const float softcap, context.FloatAttr("softcap", 0.0f));
  SF_CHECK(mode >= 0 && mode <= 3,
           "attribute \"qk_matmul_output_mode\" = %d: expected 0 to 3", mode);
  if (context.HasInput(6)) {
    return Unsupported(
        "input 6 (nonpad_kv_seqlen, opset 24) is not converted: scopeflow's "
        "attention takes no per-batch key lengths");
  }
  SF_CHECK(context.HasInput(4) == context.HasInput(5),
           "past_key and past_value go together: expected both or neither");
  const VarInfo qi = context.InputInfo(0);
  const VarInfo ki = context.InputInfo(1);
  const VarInfo vi = context.InputInfo(2);
  if (!qi.has_dims || !ki.has_dims || !vi.has_dims) {
    return Unsupported("the conversion needs the dims of Q, K and V");
  }
  const size_t rank = qi.dims.size();
  SF_CHECK((rank == 3 || rank == 4) && ki.dims.size() == rank &&
               vi.dims.size() == rank,
           "Q, K and V have shapes %s, %s and %s: expected all 3-D or all 4-D",
           DimsToString(qi.dims), DimsToString(ki.dims), DimsToString(vi.dims));
  for (const Dims* dims : {&qi.dims, &ki.dims, &vi.dims}) {
    for (int64_t d : *dims) {
      if (d < 0) return Unsupported("the conversion needs the dims of Q, K, V");
    }
  }
  if (context.HasAttr("softmax_precision")) {
    SF_ASSIGN_OR_RETURN(const int64_t precision,
                        context.IntAttr("softmax_precision"));
    SF_ASSIGN_OR_RETURN(const DataType softmax_dtype,
                        DataTypeFromOnnx(static_cast<int32_t>(precision)));
    if (softmax_dtype != qi.dtype) {
      return Unsupported(
          "softmax_precision other than the inputs' dtype is not converted");
    }
  }
  SF_ASSIGN_OR_RETURN(std::string q, context.Input(0));
  SF_ASSIGN_OR_RETURN(std::string k, context.Input(1));
  SF_ASSIGN_OR_RETURN(std::string v, context.Input(2));
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  if (rank == 3) {
    SF_ASSIGN_OR_RETURN(q_heads, context.IntAttr("q_num_heads"));
    SF_ASSIGN_OR_RETURN(kv_heads, context.IntAttr("kv_num_heads"));
    SF_ASSIGN_OR_RETURN(q, SplitHeads(context, q, qi.dims, q_heads, "q"));
    SF_ASSIGN_OR_RETURN(k, SplitHeads(context, k, ki.dims, kv_heads, "k"));
    SF_ASSIGN_OR_RETURN(v, SplitHeads(context, v, vi.dims, kv_heads, "v"));
  } else {
    q_heads = qi.dims[1];
    kv_heads = ki.dims[1];
  }
  SF_CHECK(kv_heads > 0 && q_heads % kv_heads == 0,
           "%d query heads do not form groups of the %d key/value heads",
           q_heads, kv_heads);
  const int64_t batch = qi.dims[0];
  const int64_t lq = rank == 3 ? qi.dims[1] : qi.dims[2];
  const int64_t head = rank == 3 ? qi.dims[2] / q_heads : qi.dims[3];
  const int64_t v_head = rank == 3 ? vi.dims[2] / kv_heads : vi.dims[3];
  int64_t total = rank == 3 ? ki.dims[1] : ki.dims[2];
  int64_t past = 0;
  if (context.HasInput(4)) {
    const VarInfo pi = context.InputInfo(4);
    SF_CHECK(pi.has_dims && pi.dims.size() == 4 && pi.dims[2] >= 0,
             "past_key has shape %s: expected [batch, kv_num_heads, "
             "past_length, head_size]",
             pi.has_dims ? DimsToString(pi.dims) : std::string("unknown"));
    past = pi.dims[2];
    total += past;
    for (auto [input, output, value] :
         {std::tuple<int, int, std::string*>{4, 1, &k}, {5, 2, &v}}) {
      SF_ASSIGN_OR_RETURN(const std::string cache, context.Input(input));
      const std::string present = context.HasOutput(output)
                                      ? context.Output(output)
                                      : context.Temp("present");
      SF_RETURN_IF_ERROR(
          context.Emit(OpBuilder("concat")
                           .In("X", std::vector<std::string>{cache, *value})
                           .Out("Out", present)
                           .Attr("axis", int32_t{2})));
      *value = present;
    }
  } else {
    SF_CHECK(!context.HasOutput(1) && !context.HasOutput(2),
             "present_key and present_value need past_key and past_value");
  }
  const int64_t group = q_heads / kv_heads;
  SF_ASSIGN_OR_RETURN(
      k, RepeatHeads(context, k, {batch, kv_heads, total, head}, group, "k"));
  SF_ASSIGN_OR_RETURN(
      v, RepeatHeads(context, v, {batch, kv_heads, total, v_head}, group, "v"));
  double scale = 1.0 / std::sqrt(static_cast<double>(head));
  if (context.HasAttr("scale")) {
    SF_ASSIGN_OR_RETURN(const float s, context.FloatAttr("scale"));
    scale = s;
  }
  SF_ASSIGN_OR_RETURN(const std::string bias,
                      Bias(context, qi.dtype, lq, past, total, is_causal != 0));
  const std::string y4 = rank == 4 ? context.Output(0) : context.Temp("y");
  if (softcap == 0.0f && !context.HasOutput(3)) {
    OpBuilder fused("attention");
    fused.In("Q", q).In("K", k).In("V", v).Out("Out", y4).Attr(
        "scale", static_cast<float>(scale));
    if (!bias.empty()) fused.In("Mask", bias);
    SF_RETURN_IF_ERROR(context.Emit(fused));
  } else {
    // The ops the fused one stands for, with the softcap between the
    // scaled product and the bias, and each qk_matmul_output_mode's value.
    std::vector<std::string> stages;
    SF_ASSIGN_OR_RETURN(std::string scores,
                        EmitTo(context,
                               OpBuilder("matmul")
                                   .In("X", q)
                                   .In("Y", k)
                                   .Attr("transpose_y", true)
                                   .Attr("alpha", static_cast<float>(scale)),
                               "scores"));
    stages.push_back(scores);
    if (softcap != 0.0f) {
      SF_ASSIGN_OR_RETURN(
          scores,
          EmitTo(
              context,
              OpBuilder("scale").In("X", scores).Attr("scale", 1.0f / softcap),
              "scores_over_cap"));
      SF_ASSIGN_OR_RETURN(
          scores,
          EmitTo(context, OpBuilder("tanh").In("X", scores), "scores_tanh"));
      SF_ASSIGN_OR_RETURN(
          scores,
          EmitTo(context,
                 OpBuilder("scale").In("X", scores).Attr("scale", softcap),
                 "scores_capped"));
    }
    stages.push_back(scores);
    if (!bias.empty()) {
      SF_ASSIGN_OR_RETURN(
          scores,
          EmitTo(context, OpBuilder("add").In("X", scores).In("Y", bias),
                 "scores_biased"));
    }
    stages.push_back(scores);
    SF_ASSIGN_OR_RETURN(
        const std::string probs,
        EmitTo(context,
               OpBuilder("softmax").In("X", scores).Attr("axis", int64_t{-1}),
               "probs"));
    stages.push_back(probs);
    SF_RETURN_IF_ERROR(context.Emit(
        OpBuilder("matmul").In("X", probs).In("Y", v).Out("Out", y4)));
    if (context.HasOutput(3)) {
      SF_RETURN_IF_ERROR(context.Emit(OpBuilder("assign")
                                          .In("X", stages[mode])
                                          .Out("Out", context.Output(3))));
    }
  }
  if (rank == 4) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(
      const std::string joined,
      EmitTo(context,
             OpBuilder("transpose")
                 .In("X", y4)
                 .Attr("perm", std::vector<int32_t>{0, 2, 1, 3}),
             "y_joined"));
  return context.Emit(
      OpBuilder("reshape")
          .In("X", joined)
          .Out("Out", context.Output(0))
          .Attr("shape", std::vector<int64_t>{batch, lq, q_heads * v_head}));
}

}  // namespace

void AddAttentionConverters(ConverterMap& map) {
  map["Attention"] = &ConvertAttention;
}

}  // namespace onnx_import
}  // namespace scopeflow
