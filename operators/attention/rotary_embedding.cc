// rotary_embedding: rotary position embeddings (RoPE), as ONNX's
// RotaryEmbedding (23) applies them. Input "X" is [batch, heads, seq, head]
// or [batch, seq, heads * head] (then attribute "num_heads" says how many
// heads); "CosCache" and "SinCache" hold cos and sin of each position's
// angles, [max_position, rotary_dim / 2] read at the rows of optional int
// input "PositionIds" ([batch, seq]), or without it [batch, seq,
// rotary_dim / 2]. The first "rotary_embedding_dim" values of each head
// (0: all) are rotated in pairs (x1, x2), the halves of those values or,
// with "interleaved", each even value and the odd one after it:
//
//   x1' = cos x1 - sin x2,   x2' = sin x1 + cos x2,
//
// and the rest copied. Out has X's shape.
//
// Gradient (rotary_embedding_grad): the rotation's transpose takes
// Out@GRAD (g1, g2) back to X (cos g1 + sin g2, cos g2 - sin g1; copied
// values copy g); the caches get, at each row read, the sums of x1 g1 +
// x2 g2 (cos) and x1 g2 - x2 g1 (sin) over the heads and over the
// positions reading that row.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kPositionDtypes[] = {kInt32, kInt64};

// Where X's values and the caches' rows are.
struct RopePlan {
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t head_size = 0;
  int64_t rotary_dim = 0;
  int64_t half = 0;
  bool heads_first = false;  // X is [batch, heads, seq, head]
  bool interleaved = false;
  bool position_ids = false;
  int64_t cache_rows = 0;

  // The first value of head h at position s of batch b.
  int64_t XOffset(int64_t b, int64_t s, int64_t h) const {
    return heads_first ? ((b * heads + h) * seq + s) * head_size
                       : ((b * seq + s) * heads + h) * head_size;
  }
  // The offsets in a head of pair i's two values.
  int64_t First(int64_t i) const { return interleaved ? 2 * i : i; }
  int64_t Second(int64_t i) const { return interleaved ? 2 * i + 1 : i + half; }
};

absl::StatusOr<RopePlan> MakeRopePlan(const Dims& x, const Dims& cos,
                                      const Dims& sin, const Dims* ids,
                                      const Attributes& attrs,
                                      const std::string& x_var) {
  RopePlan plan;
  plan.interleaved = attrs.Get<bool>("interleaved");
  const int64_t num_heads = attrs.Get<int32_t>("num_heads");
  const std::string described = absl::StrFormat(
      "input \"X\" (variable \"%s\", shape %s)", x_var, DimsToString(x));
  if (x.size() == 4) {
    plan.heads_first = true;
    plan.batch = x[0];
    plan.heads = x[1];
    plan.seq = x[2];
    plan.head_size = x[3];
  } else {
    SF_CHECK(x.size() == 3,
             "%s: expected [batch, heads, seq, head] or [batch, seq, hidden]",
             described);
    SF_CHECK(num_heads > 0 && x[2] % num_heads == 0,
             "%s is 3-D: attribute \"num_heads\" = %d must be positive and "
             "divide the hidden size %d",
             described, num_heads, x[2]);
    plan.batch = x[0];
    plan.seq = x[1];
    plan.heads = num_heads;
    plan.head_size = x[2] / num_heads;
  }
  const int64_t rotary_dim = attrs.Get<int32_t>("rotary_embedding_dim");
  plan.rotary_dim = rotary_dim == 0 ? plan.head_size : rotary_dim;
  SF_CHECK(plan.rotary_dim > 0 && plan.rotary_dim % 2 == 0 &&
               plan.rotary_dim <= plan.head_size,
           "rotary_embedding_dim %d (0: the head size) for %s: expected an "
           "even number in [2, %d]",
           rotary_dim, described, plan.head_size);
  plan.half = plan.rotary_dim / 2;
  SF_CHECK(cos == sin,
           "CosCache has shape %s and SinCache %s: expected the same shape",
           DimsToString(cos), DimsToString(sin));
  plan.position_ids = ids != nullptr;
  if (plan.position_ids) {
    SF_CHECK(cos.size() == 2 && cos[1] == plan.half,
             "CosCache has shape %s: expected [max_position, %d] with "
             "PositionIds",
             DimsToString(cos), plan.half);
    SF_CHECK(*ids == Dims({plan.batch, plan.seq}),
             "PositionIds has shape %s: expected [batch, seq] = [%d, %d]",
             DimsToString(*ids), plan.batch, plan.seq);
    plan.cache_rows = cos[0];
  } else {
    SF_CHECK(cos == Dims({plan.batch, plan.seq, plan.half}),
             "CosCache has shape %s: expected [batch, seq, rotary_dim / 2] = "
             "[%d, %d, %d] without PositionIds",
             DimsToString(cos), plan.batch, plan.seq, plan.half);
    plan.cache_rows = plan.batch * plan.seq;
  }
  return plan;
}

absl::Status InferRotaryEmbedding(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "CosCache"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "SinCache"));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 3, 4));
  if (context.HasInput("PositionIds")) {
    SF_RETURN_IF_ERROR(CheckDtypeIn(context, "PositionIds", kPositionDtypes));
  }
  const VarInfo& x = context.Input("X");
  const VarInfo& cos = context.Input("CosCache");
  const VarInfo& sin = context.Input("SinCache");
  auto known = [](const VarInfo& info) {
    return info.has_dims && std::none_of(info.dims.begin(), info.dims.end(),
                                         [](int64_t d) { return d < 0; });
  };
  const VarInfo* ids =
      context.HasInput("PositionIds") ? &context.Input("PositionIds") : nullptr;
  if (known(x) && known(cos) && known(sin) && (ids == nullptr || known(*ids))) {
    SF_RETURN_IF_ERROR(MakeRopePlan(x.dims, cos.dims, sin.dims,
                                    ids ? &ids->dims : nullptr, context.attrs(),
                                    context.InputName("X"))
                           .status());
  }
  context.SetOutput("Out", x);
  return absl::OkStatus();
}

// The plan and the cache row of every (batch, position), checked against
// the caches' rows.
struct RopeRun {
  RopePlan plan;
  std::vector<int64_t> rows;
};

template <typename Id>
absl::Status ReadRows(const Tensor& ids, const std::string& var, RopeRun& run) {
  const Id* values = ids.data<Id>();
  for (int64_t p = 0; p < ids.numel(); ++p) {
    const int64_t row = static_cast<int64_t>(values[p]);
    SF_CHECK(row >= 0 && row < run.plan.cache_rows,
             "input \"PositionIds\" (variable \"%s\") holds %d at %d: "
             "expected a row of the caches, in [0, %d)",
             var, row, p, run.plan.cache_rows);
    run.rows[p] = row;
  }
  return absl::OkStatus();
}

absl::StatusOr<RopeRun> KernelRun(const KernelContext& context) {
  const Tensor* ids =
      context.HasInput("PositionIds") ? &context.Input("PositionIds") : nullptr;
  RopeRun run;
  SF_ASSIGN_OR_RETURN(
      run.plan,
      MakeRopePlan(context.Input("X").dims(), context.Input("CosCache").dims(),
                   context.Input("SinCache").dims(),
                   ids ? &ids->dims() : nullptr, context.attrs(),
                   context.InputName("X")));
  run.rows.resize(run.plan.batch * run.plan.seq);
  if (ids == nullptr) {
    for (int64_t p = 0; p < static_cast<int64_t>(run.rows.size()); ++p) {
      run.rows[p] = p;
    }
  } else if (ids->dtype() == kInt32) {
    SF_RETURN_IF_ERROR(
        ReadRows<int32_t>(*ids, context.InputName("PositionIds"), run));
  } else {
    SF_RETURN_IF_ERROR(
        ReadRows<int64_t>(*ids, context.InputName("PositionIds"), run));
  }
  return run;
}

template <typename T>
absl::Status RotaryEmbeddingKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const RopeRun run, KernelRun(context));
  const RopePlan& plan = run.plan;
  const T* x = context.Input("X").data<T>();
  const T* cos = context.Input("CosCache").data<T>();
  const T* sin = context.Input("SinCache").data<T>();
  T* out = context.Output("Out")->data<T>();
  for (int64_t b = 0; b < plan.batch; ++b) {
    for (int64_t s = 0; s < plan.seq; ++s) {
      const int64_t row = run.rows[b * plan.seq + s] * plan.half;
      for (int64_t h = 0; h < plan.heads; ++h) {
        const int64_t at = plan.XOffset(b, s, h);
        for (int64_t i = 0; i < plan.half; ++i) {
          const T x1 = x[at + plan.First(i)];
          const T x2 = x[at + plan.Second(i)];
          out[at + plan.First(i)] = cos[row + i] * x1 - sin[row + i] * x2;
          out[at + plan.Second(i)] = sin[row + i] * x1 + cos[row + i] * x2;
        }
        for (int64_t j = plan.rotary_dim; j < plan.head_size; ++j) {
          out[at + j] = x[at + j];
        }
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status RotaryEmbeddingGradKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const RopeRun run, KernelRun(context));
  const RopePlan& plan = run.plan;
  const Tensor& g_tensor = context.Input("Out@GRAD");
  SF_CHECK(g_tensor.dims() == context.Input("X").dims(),
           "input \"Out@GRAD\" (variable \"%s\") has shape %s: expected X's "
           "shape %s",
           context.InputName("Out@GRAD"), DimsToString(g_tensor.dims()),
           DimsToString(context.Input("X").dims()));
  const T* x = context.Input("X").data<T>();
  const T* cos = context.Input("CosCache").data<T>();
  const T* sin = context.Input("SinCache").data<T>();
  const T* g = g_tensor.data<T>();
  T* dx = context.HasOutput("X@GRAD") ? context.Output("X@GRAD")->data<T>()
                                      : nullptr;
  T* dcos = context.HasOutput("CosCache@GRAD")
                ? context.Output("CosCache@GRAD")->data<T>()
                : nullptr;
  T* dsin = context.HasOutput("SinCache@GRAD")
                ? context.Output("SinCache@GRAD")->data<T>()
                : nullptr;
  const int64_t cache_size = plan.cache_rows * plan.half;
  if (dcos != nullptr) std::fill(dcos, dcos + cache_size, T(0));
  if (dsin != nullptr) std::fill(dsin, dsin + cache_size, T(0));
  for (int64_t b = 0; b < plan.batch; ++b) {
    for (int64_t s = 0; s < plan.seq; ++s) {
      const int64_t row = run.rows[b * plan.seq + s] * plan.half;
      for (int64_t h = 0; h < plan.heads; ++h) {
        const int64_t at = plan.XOffset(b, s, h);
        for (int64_t i = 0; i < plan.half; ++i) {
          const int64_t first = at + plan.First(i);
          const int64_t second = at + plan.Second(i);
          const T g1 = g[first];
          const T g2 = g[second];
          if (dx != nullptr) {
            dx[first] = cos[row + i] * g1 + sin[row + i] * g2;
            dx[second] = cos[row + i] * g2 - sin[row + i] * g1;
          }
          if (dcos != nullptr) dcos[row + i] += x[first] * g1 + x[second] * g2;
          if (dsin != nullptr) dsin[row + i] += x[first] * g2 - x[second] * g1;
        }
        if (dx != nullptr) {
          for (int64_t j = plan.rotary_dim; j < plan.head_size; ++j) {
            dx[at + j] = g[at + j];
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status InferRotaryEmbeddingGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Out@GRAD"));
  return GradsLikeInputs({"X", "CosCache", "SinCache"})(context);
}

}  // namespace

SF_REGISTER_OP(rotary_embedding)
    .Input("X")
    .Input("CosCache")
    .Input("SinCache")
    .Input("PositionIds", /*optional=*/true)
    .Output("Out")
    .Attr("interleaved", AttrType::kBool, AttrValue(false))
    .Attr("num_heads", AttrType::kInt, AttrValue(0), NonNegative())
    .Attr("rotary_embedding_dim", AttrType::kInt, AttrValue(0), NonNegative())
    .Infer(InferRotaryEmbedding)
    .Grad(GradSpec("rotary_embedding_grad")
              .ReadInput("X")
              .ReadInput("CosCache")
              .ReadInput("SinCache")
              .ReadInput("PositionIds")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("CosCache")
              .WriteInputGrad("SinCache"))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &RotaryEmbeddingKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &RotaryEmbeddingKernel<double>);

SF_REGISTER_OP(rotary_embedding_grad)
    .Input("X")
    .Input("CosCache")
    .Input("SinCache")
    .Input("PositionIds", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("CosCache@GRAD", /*optional=*/true)
    .Output("SinCache@GRAD", /*optional=*/true)
    .Attr("interleaved", AttrType::kBool, AttrValue(false))
    .Attr("num_heads", AttrType::kInt, AttrValue(0), NonNegative())
    .Attr("rotary_embedding_dim", AttrType::kInt, AttrValue(0), NonNegative())
    .Infer(InferRotaryEmbeddingGrad)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &RotaryEmbeddingGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &RotaryEmbeddingGradKernel<double>);

}  // namespace scopeflow
