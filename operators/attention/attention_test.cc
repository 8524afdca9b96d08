// attention: values against torch 1.13 and against the unfused computation
// (matrix products, softmax) written out here, in both layouts, with K
// transposed, masks of every broadcast, scales given as inputs, several
// blocks of query rows; errors; and attention_grad against numeric
// gradients.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

struct Case {
  Dims batch;
  int64_t lq, lk, d, dv;
  bool seq_first = false;
  bool transpose_k = false;
  bool has_mask = false;
  Dims mask;  // as stored: may be of lower rank, or hold 1s
  float scale = 1.0f;
  bool scale_input = false;    // a one-element "Scale" of 2.0
  bool divisor_input = false;  // a one-element "Divisor" of 4.0

  Dims Stored(int64_t rows, int64_t cols) const {
    Dims dims;
    if (seq_first) dims.push_back(rows);
    dims.insert(dims.end(), batch.begin(), batch.end());
    if (!seq_first) dims.push_back(rows);
    dims.push_back(cols);
    return dims;
  }
  Dims QDims() const { return Stored(lq, d); }
  Dims KDims() const { return transpose_k ? Stored(d, lk) : Stored(lk, d); }
  Dims VDims() const { return Stored(lk, dv); }
  Dims OutDims() const { return Stored(lq, dv); }
  double TotalScale() const {
    return scale * (scale_input ? 2.0 : 1.0) / (divisor_input ? 4.0 : 1.0);
  }

  std::string Op(const std::string& type = "attention") const {
    std::string op = absl::StrCat(
        "type: \"", type, "\" inputs { slot: \"Q\" vars: \"q\" } ",
        "inputs { slot: \"K\" vars: \"k\" } inputs { slot: \"V\" vars: \"v\" ",
        "} ");
    if (has_mask)
      absl::StrAppend(&op, "inputs { slot: \"Mask\" vars: \"m\" } ");
    if (scale_input) {
      absl::StrAppend(&op, "inputs { slot: \"Scale\" vars: \"s\" } ");
    }
    if (divisor_input) {
      absl::StrAppend(&op, "inputs { slot: \"Divisor\" vars: \"dv\" } ");
    }
    absl::StrAppend(
        &op, "outputs { slot: \"Out\" vars: \"out\" } ",
        "attrs { name: \"scale\" f: ", scale, " } ",
        "attrs { name: \"seq_first\" b: ", seq_first ? "true" : "false", " } ",
        "attrs { name: \"transpose_k\" b: ", transpose_k ? "true" : "false",
        " }");
    return op;
  }
};

// Element (b, i, j) of a batch of matrices stored as `c` lays out a tensor
// of `rows` x `cols` per batch index (transposed: stored cols x rows).
int64_t At(const Case& c, int64_t b, int64_t i, int64_t j, int64_t rows,
           int64_t cols, bool transposed = false) {
  if (transposed) std::swap(i, j), std::swap(rows, cols);
  const int64_t batches = NumElements(c.batch);
  if (c.seq_first) return (i * batches + b) * cols + j;
  return (b * rows + i) * cols + j;
}

// The unfused computation, in float64, from the stored values.
std::vector<double> Reference(const Case& c, const std::vector<double>& q,
                              const std::vector<double>& k,
                              const std::vector<double>& v,
                              const std::vector<double>& mask) {
  const int64_t batches = NumElements(c.batch);
  std::vector<double> out(batches * c.lq * c.dv);
  // The mask's strides against the scores [*batch, lq, lk].
  Dims scores = c.batch;
  scores.push_back(c.lq);
  scores.push_back(c.lk);
  Dims mask_dims(scores.size() - c.mask.size(), 1);
  mask_dims.insert(mask_dims.end(), c.mask.begin(), c.mask.end());
  std::vector<int64_t> mask_strides(scores.size(), 0);
  int64_t stride = 1;
  for (int a = static_cast<int>(scores.size()) - 1; a >= 0; --a) {
    mask_strides[a] = mask_dims[a] == 1 ? 0 : stride;
    stride *= mask_dims[a];
  }
  for (int64_t b = 0; b < batches; ++b) {
    int64_t mask_base = 0;
    int64_t rest = b;
    for (int a = static_cast<int>(c.batch.size()) - 1; a >= 0; --a) {
      mask_base += (rest % c.batch[a]) * mask_strides[a];
      rest /= c.batch[a];
    }
    for (int64_t i = 0; i < c.lq; ++i) {
      std::vector<double> s(c.lk);
      double max = -INFINITY;
      for (int64_t j = 0; j < c.lk; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < c.d; ++t) {
          dot += q[At(c, b, i, t, c.lq, c.d)] *
                 k[At(c, b, j, t, c.lk, c.d, c.transpose_k)];
        }
        s[j] = dot * c.TotalScale();
        if (c.has_mask) {
          s[j] += mask[mask_base + i * mask_strides[scores.size() - 2] +
                       j * mask_strides[scores.size() - 1]];
        }
        max = std::max(max, s[j]);
      }
      double sum = 0;
      for (double& x : s) sum += (x = std::exp(x - max));
      for (int64_t t = 0; t < c.dv; ++t) {
        double acc = 0;
        for (int64_t j = 0; j < c.lk; ++j) {
          acc += s[j] / sum * v[At(c, b, j, t, c.lk, c.dv)];
        }
        const int64_t batches_out = batches;
        out[c.seq_first ? (i * batches_out + b) * c.dv + t
                        : (b * c.lq + i) * c.dv + t] = acc;
      }
    }
  }
  return out;
}

template <typename T>
std::vector<Feed> Feeds(const Case& c, uint32_t seed) {
  auto tensor = [&](const Dims& dims, double spread) {
    std::vector<double> values = RandomValues(NumElements(dims), seed++);
    for (double& x : values) x *= spread;
    return MakeTensor<T>(dims, std::vector<T>(values.begin(), values.end()));
  };
  std::vector<Feed> feeds = {{"q", tensor(c.QDims(), 2.0)},
                             {"k", tensor(c.KDims(), 2.0)},
                             {"v", tensor(c.VDims(), 1.0)}};
  if (c.has_mask) feeds.push_back({"m", tensor(c.mask, 3.0)});
  if (c.scale_input) feeds.push_back({"s", MakeTensor<T>({1}, {T(2)})});
  if (c.divisor_input) feeds.push_back({"dv", MakeTensor<T>({}, {T(4)})});
  return feeds;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  // Heads of a batch, no mask.
  cases.push_back({{2, 3}, 5, 7, 4, 3});
  cases.back().scale = 0.5f;
  // torch's layout, sequence first, with a causal-style mask per query.
  cases.push_back({{6}, 9, 9, 8, 8, true, false, true, {9, 9}});
  // K stored transposed; a mask per batch and key (a padding mask).
  cases.push_back({{2, 2}, 4, 6, 3, 5, false, true, true, {2, 1, 1, 6}});
  // A mask per query row only, broadcast along the keys.
  cases.push_back({{3}, 5, 4, 2, 2, false, false, true, {5, 1}});
  // A mask of the scores' own dims, scales as inputs.
  cases.push_back({{2}, 150, 33, 16, 12, false, false, true, {2, 150, 33}});
  cases.back().scale_input = true;
  cases.back().divisor_input = true;
  // No batch dims at all.
  cases.push_back({{}, 3, 5, 4, 2});
  cases.back().divisor_input = true;
  return cases;
}

TEST(AttentionTest, MatchesTheUnfusedComputation) {
  uint32_t seed = 1;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.Op());
    const std::vector<Feed> feeds = Feeds<double>(c, seed);
    seed += 10;
    auto values = [&](int i) { return Values<double>(feeds[i].tensor); };
    const std::vector<double> expected =
        Reference(c, values(0), values(1), values(2),
                  c.has_mask ? values(3) : std::vector<double>());
    auto out = RunOp(c.Op(), feeds, {"out"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dims(), c.OutDims());
    EXPECT_THAT(Values<double>((*out)[0]),
                Pointwise(DoubleNear(1e-12), expected));

    const std::vector<Feed> feeds32 = Feeds<float>(c, seed - 10);
    auto out32 = RunOp(c.Op(), feeds32, {"out"});
    ASSERT_TRUE(out32.ok()) << out32.status();
    const std::vector<float> got32 = Values<float>((*out32)[0]);
    ASSERT_EQ(got32.size(), expected.size());
    for (size_t i = 0; i < got32.size(); ++i) {
      EXPECT_NEAR(got32[i], expected[i], 2e-5) << "element " << i;
    }
  }
}

// x[i] = sin(a i) + b i in row-major order: the inputs of the torch values.
std::vector<double> Sines(int n, double a, double b) {
  std::vector<double> x(n);
  for (int i = 0; i < n; ++i) x[i] = std::sin(a * i) + b * i;
  return x;
}

TEST(AttentionTest, MatchesTorch) {
  // torch.softmax(q @ k.transpose(-1, -2) * 0.75 + m, -1) @ v in float64,
  // with m[0, 3] = -1e9 (a masked key).
  std::vector<double> mask = Sines(12, 2.1, 0.0);
  mask[3] = -1e9;
  Case c{{2}, 3, 4, 2, 3, false, false, true, {3, 4}};
  c.scale = 0.75f;
  auto out = RunOp(c.Op(),
                   {{"q", MakeTensor<double>({2, 3, 2}, Sines(12, 0.9, 0.0))},
                    {"k", MakeTensor<double>({2, 4, 2}, Sines(16, 1.3, 0.05))},
                    {"v", MakeTensor<double>({2, 4, 3}, Sines(24, 0.4, -0.02))},
                    {"m", MakeTensor<double>({3, 4}, mask)}},
                   {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> torch = {
      0.4429734, 0.5783734, 0.6127569,  -0.3136061, -0.4410092, -0.5212062,
      0.5832046, 0.4032508, 0.1413828,  -0.7672543, -0.5336183, -0.2630689,
      0.0315107, -0.034028, -0.1554277, 0.1100282,  0.2730672,  0.3357773};
  EXPECT_THAT(Values<double>((*out)[0]), Pointwise(DoubleNear(1e-6), torch));
}

TEST(AttentionTest, EmptyDims) {
  // No keys: every output row is an average of nothing, 0.
  Case none{{2}, 3, 0, 4, 2};
  auto out = RunOp(none.Op(), Feeds<float>(none, 1), {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(DoubleNear(0), std::vector<float>(12, 0.0f)));
  // head_dim 0: uniform weights over the keys, the mean of V's rows.
  Case flat{{1}, 2, 2, 0, 1};
  out = RunOp(flat.Op(),
              {{"q", MakeTensor<float>({1, 2, 0}, {})},
               {"k", MakeTensor<float>({1, 2, 0}, {})},
               {"v", MakeTensor<float>({1, 2, 1}, {1.0f, 3.0f})}},
              {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]),
              Pointwise(DoubleNear(1e-6), std::vector<float>{2.0f, 2.0f}));
}

absl::Status Prepare(const Case& c, const std::vector<Feed>& feeds) {
  return RunOp(c.Op(), feeds, {"out"}).status();
}

TEST(AttentionTest, Errors) {
  Case c{{2}, 3, 4, 2, 3, false, false, true, {3, 4}};
  std::vector<Feed> feeds = Feeds<float>(c, 1);
  feeds[1].tensor = MakeTensor<float>({2, 4, 5}, std::vector<float>(40, 0));
  EXPECT_THAT(Prepare(c, feeds).message(),
              HasSubstr("op 0 (attention): head_dim differs: input \"Q\" "
                        "(variable \"q\", shape [2, 3, 2]) has 2, input \"K\" "
                        "(variable \"k\", shape [2, 4, 5]) has 5"));
  feeds = Feeds<float>(c, 1);
  feeds[2].tensor = MakeTensor<float>({2, 5, 3}, std::vector<float>(30, 0));
  EXPECT_THAT(Prepare(c, feeds).message(),
              HasSubstr("sequence lengths differ: input \"K\" (variable "
                        "\"k\", shape [2, 4, 2]) has 4 keys, input \"V\" "
                        "(variable \"v\", shape [2, 5, 3]) has 5 values"));
  feeds = Feeds<float>(c, 1);
  feeds[3].tensor = MakeTensor<float>({3, 3}, std::vector<float>(9, 0));
  EXPECT_THAT(Prepare(c, feeds).message(),
              HasSubstr("input \"Mask\" (variable \"m\", shape [3, 3]) does "
                        "not broadcast to the scores [2, 3, 4]"));
  feeds = Feeds<float>(c, 1);
  feeds[2].tensor = MakeTensor<float>({3, 4, 3}, std::vector<float>(36, 0));
  EXPECT_THAT(Prepare(c, feeds).message(),
              HasSubstr("batch dimensions differ"));
  feeds = Feeds<float>(c, 1);
  feeds[1].tensor = MakeTensor<float>({8, 2}, std::vector<float>(16, 0));
  EXPECT_THAT(Prepare(c, feeds).message(),
              HasSubstr("input \"K\" (variable \"k\", shape [8, 2]): "
                        "expected the rank of Q, 3"));
  feeds = Feeds<float>(c, 1);
  feeds[3].tensor = MakeTensor<double>({3, 4}, std::vector<double>(12, 0));
  EXPECT_THAT(Prepare(c, feeds).message(), HasSubstr("must have one dtype"));
  Case scaled = c;
  scaled.scale_input = true;
  feeds = Feeds<float>(scaled, 1);
  feeds[4].tensor = MakeTensor<float>({2}, {1, 2});
  EXPECT_THAT(Prepare(scaled, feeds).message(),
              HasSubstr("input \"Scale\" (variable \"s\", shape [2]): "
                        "expected one element"));
  Case both = c;
  both.seq_first = true;
  both.transpose_k = true;
  EXPECT_THAT(Prepare(both, Feeds<float>(c, 1)).message(),
              HasSubstr("\"transpose_k\" and \"seq_first\" are both set"));
}

TEST(AttentionGradTest, MatchesNumericGradients) {
  uint32_t seed = 100;
  std::vector<Case> cases = Cases();
  cases.erase(cases.begin() + 4);  // the large one: slow in differences
  Case blocks{{1}, 70, 5, 2, 2, false, false, true, {1, 5}};
  blocks.scale_input = true;
  cases.push_back(blocks);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.Op());
    std::vector<Feed> feeds = Feeds<double>(c, seed);
    seed += 10;
    std::vector<std::string> inputs = {"q", "k", "v"};
    if (c.has_mask) inputs.push_back("m");
    if (c.scale_input) inputs.push_back("s");
    if (c.divisor_input) inputs.push_back("dv");
    GradCheckOptions options;
    options.rtol = 1e-5;
    options.atol = 1e-7;
    const absl::Status status =
        CheckGradientTogetherAndAlone(c.Op(), feeds, inputs, options);
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(AttentionGradTest, Errors) {
  Case c{{2}, 3, 4, 2, 3};
  std::vector<Feed> feeds = Feeds<float>(c, 1);
  feeds.push_back(
      {"out", MakeTensor<float>({2, 3, 3}, std::vector<float>(18, 0))});
  feeds.push_back(
      {"g", MakeTensor<float>({2, 3, 4}, std::vector<float>(24, 0))});
  const std::string op =
      "type: \"attention_grad\" inputs { slot: \"Q\" vars: \"q\" } inputs { "
      "slot: \"K\" vars: \"k\" } inputs { slot: \"V\" vars: \"v\" } inputs { "
      "slot: \"Out\" vars: \"out\" } inputs { slot: \"Out@GRAD\" vars: \"g\" "
      "} outputs { slot: \"Mask@GRAD\" vars: \"dm\" }";
  absl::Status status = RunOp(op, feeds, {}).status();
  EXPECT_THAT(status.message(),
              HasSubstr("input \"Out@GRAD\" (variable \"g\", shape [2, 3, 4]): "
                        "expected float32 [2, 3, 3], the forward output"));
  feeds.back().tensor = MakeTensor<float>({2, 3, 3}, std::vector<float>(18, 0));
  status = RunOp(op, feeds, {}).status();
  EXPECT_THAT(status.message(),
              HasSubstr("output \"Mask@GRAD\" (variable \"dm\") needs input "
                        "\"Mask\" for its shape"));
}

}  // namespace
}  // namespace scopeflow
