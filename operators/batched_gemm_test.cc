#include "operators/batched_gemm.h"

#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

// Index of `index` (one per dim of `dims`) in a row-major array of `dims`.
int64_t Flat(const Dims& dims, const std::vector<int64_t>& index) {
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + index[d];
  return flat;
}

// The element of operand `dims` that op(operand)[batch, i, j] reads, batch
// being C's batch index: each batch dim of the operand, aligned from the
// right, takes C's index or 0 where it is 1.
int64_t OperandIndex(const Dims& dims, bool transpose,
                     const std::vector<int64_t>& c_batch, int64_t i,
                     int64_t j) {
  const size_t rank = dims.size();
  std::vector<int64_t> index(rank);
  const size_t lead = c_batch.size() - (rank - 2);
  for (size_t d = 0; d + 2 < rank; ++d) {
    index[d] = dims[d] == 1 ? 0 : c_batch[lead + d];
  }
  index[rank - 2] = transpose ? j : i;
  index[rank - 1] = transpose ? i : j;
  return Flat(dims, index);
}

// C = alpha * op(A) op(B) + beta * C element by element in long double,
// the independent reference.
std::vector<double> Reference(const BatchedGemmShape& s, double alpha,
                              const std::vector<double>& a,
                              const std::vector<double>& b, double beta,
                              const std::vector<double>& c) {
  const size_t rank = s.c.size();
  const int64_t m = s.c[rank - 2], n = s.c[rank - 1];
  const int64_t k = s.transpose_a ? s.a[s.a.size() - 2] : s.a.back();
  std::vector<double> out(c.size());
  std::vector<int64_t> batch(rank - 2, 0);
  const int64_t batches = NumElements(absl::MakeConstSpan(s.c).first(rank - 2));
  for (int64_t flat_batch = 0; flat_batch < batches; ++flat_batch) {
    int64_t rest = flat_batch;
    for (size_t d = rank - 2; d-- > 0;) {
      batch[d] = rest % s.c[d];
      rest /= s.c[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        long double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += static_cast<long double>(
                     a[OperandIndex(s.a, s.transpose_a, batch, i, p)]) *
                 b[OperandIndex(s.b, s.transpose_b, batch, p, j)];
        }
        const int64_t at = (flat_batch * m + i) * n + j;
        out[at] = static_cast<double>(alpha * sum) +
                  (beta == 0 ? 0.0 : beta * c[at]);
      }
    }
  }
  return out;
}

std::vector<double> Random(int64_t size, std::mt19937& engine) {
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> values(size);
  for (double& v : values) v = dist(engine);
  return values;
}

// A product of op(A) [m x k] and op(B) [k x n] with the given batch dims.
BatchedGemmShape ShapeOf(const Dims& a_batch, const Dims& b_batch,
                         const Dims& c_batch, int64_t m, int64_t k, int64_t n,
                         bool ta, bool tb) {
  BatchedGemmShape s;
  s.a = a_batch;
  s.a.push_back(ta ? k : m);
  s.a.push_back(ta ? m : k);
  s.b = b_batch;
  s.b.push_back(tb ? n : k);
  s.b.push_back(tb ? k : n);
  s.c = c_batch;
  s.c.push_back(m);
  s.c.push_back(n);
  s.transpose_a = ta;
  s.transpose_b = tb;
  return s;
}

std::string Describe(const BatchedGemmShape& s, BatchedGemmPath path) {
  return absl::StrCat("[", absl::StrJoin(s.a, ","), "]", s.transpose_a ? "T" : "",
                      " x [", absl::StrJoin(s.b, ","), "]",
                      s.transpose_b ? "T" : "", " -> [",
                      absl::StrJoin(s.c, ","), "] path ",
                      static_cast<int>(path));
}

struct BatchCase {
  Dims a, b, c;
};

// Batch dims as matmul sees them: equal, a 1 against N either way, rank 3
// against rank 4, against none (rank 2), both sides broadcast at once.
std::vector<BatchCase> BatchCases() {
  return {{{3}, {3}, {3}},
          {{1}, {4}, {4}},
          {{4}, {1}, {4}},
          {{2, 3}, {3}, {2, 3}},
          {{3}, {2, 3}, {2, 3}},
          {{}, {2, 3}, {2, 3}},
          {{2, 3}, {}, {2, 3}},
          {{2, 1}, {1, 3}, {2, 3}},
          {{1, 3, 1}, {2, 1, 2}, {2, 3, 2}},
          {{1, 1}, {1}, {1, 1}}};
}

const BatchedGemmPath kPaths[] = {
    BatchedGemmPath::kChoose, BatchedGemmPath::kOneDnnMatmul,
    BatchedGemmPath::kGemmPerBatch, BatchedGemmPath::kGemmThreadsOverBatch};

TEST(BatchedGemmTest, EveryPathMatchesTheReferenceInFloat32) {
  std::mt19937 engine(7);
  struct Sizes {
    int64_t m, k, n;
  };
  for (const BatchCase& bc : BatchCases()) {
    for (const Sizes& z : {Sizes{3, 5, 4}, Sizes{1, 7, 1}, Sizes{17, 33, 9}}) {
      for (int flags = 0; flags < 4; ++flags) {
        const BatchedGemmShape s =
            ShapeOf(bc.a, bc.b, bc.c, z.m, z.k, z.n, flags & 1, flags & 2);
        const std::vector<double> a = Random(NumElements(s.a), engine);
        const std::vector<double> b = Random(NumElements(s.b), engine);
        const std::vector<double> c0 = Random(NumElements(s.c), engine);
        for (const auto& [alpha, beta] :
             {std::pair{1.0f, 0.0f}, std::pair{-0.5f, 1.0f},
              std::pair{2.0f, 0.25f}}) {
          const std::vector<double> expected =
              Reference(s, alpha, a, b, beta, c0);
          for (BatchedGemmPath path : kPaths) {
            SCOPED_TRACE(absl::StrCat(Describe(s, path), " alpha ", alpha,
                                      " beta ", beta));
            const std::vector<float> af(a.begin(), a.end());
            const std::vector<float> bf(b.begin(), b.end());
            std::vector<float> c(c0.begin(), c0.end());
            const absl::Status status = BatchedGemm(
                s, alpha, af.data(), bf.data(), beta, c.data(), path);
            ASSERT_TRUE(status.ok()) << status;
            for (size_t i = 0; i < c.size(); ++i) {
              ASSERT_NEAR(c[i], expected[i], 2e-5 * (1 + z.k)) << "at " << i;
            }
          }
        }
      }
    }
  }
}

TEST(BatchedGemmTest, Float64MatchesTheReferenceOnEveryPath) {
  std::mt19937 engine(8);
  for (const BatchCase& bc : BatchCases()) {
    for (int flags = 0; flags < 4; ++flags) {
      const BatchedGemmShape s =
          ShapeOf(bc.a, bc.b, bc.c, 4, 6, 3, flags & 1, flags & 2);
      const std::vector<double> a = Random(NumElements(s.a), engine);
      const std::vector<double> b = Random(NumElements(s.b), engine);
      const std::vector<double> c0 = Random(NumElements(s.c), engine);
      const std::vector<double> expected = Reference(s, 1.5, a, b, 0.5, c0);
      for (BatchedGemmPath path : kPaths) {
        SCOPED_TRACE(Describe(s, path));
        std::vector<double> c = c0;
        const absl::Status status =
            BatchedGemm(s, 1.5, a.data(), b.data(), 0.5, c.data(), path);
        ASSERT_TRUE(status.ok()) << status;
        for (size_t i = 0; i < c.size(); ++i) {
          ASSERT_NEAR(c[i], expected[i], 1e-12) << "at " << i;
        }
      }
    }
  }
}

TEST(BatchedGemmTest, BetaZeroIgnoresNanInC) {
  const BatchedGemmShape s = ShapeOf({2}, {2}, {2}, 2, 3, 2, false, false);
  const std::vector<float> a(12, 1.0f), b(12, 2.0f);
  for (BatchedGemmPath path : kPaths) {
    SCOPED_TRACE(Describe(s, path));
    std::vector<float> c(8, std::nanf(""));
    ASSERT_TRUE(
        BatchedGemm(s, 1.0f, a.data(), b.data(), 0.0f, c.data(), path).ok());
    EXPECT_THAT(c, ::testing::Each(6.0f));
  }
}

TEST(BatchedGemmTest, EmptyProducts) {
  for (BatchedGemmPath path : kPaths) {
    // k = 0: C = beta * C, zeros for beta 0.
    const BatchedGemmShape no_k = ShapeOf({3}, {1}, {3}, 2, 0, 2, false, true);
    std::vector<float> c(12, std::nanf(""));
    ASSERT_TRUE(
        BatchedGemm(no_k, 1.0f, nullptr, nullptr, 0.0f, c.data(), path).ok());
    EXPECT_THAT(c, ::testing::Each(0.0f));
    std::vector<float> kept(12, 4.0f);
    ASSERT_TRUE(
        BatchedGemm(no_k, 1.0f, nullptr, nullptr, 0.5f, kept.data(), path)
            .ok());
    EXPECT_THAT(kept, ::testing::Each(2.0f));
    // No batches, no rows: nothing to write.
    const BatchedGemmShape no_batch =
        ShapeOf({0}, {1}, {0}, 2, 3, 2, false, false);
    EXPECT_TRUE(
        BatchedGemm(no_batch, 1.0f, nullptr, nullptr, 0.0f, nullptr, path)
            .ok());
    const BatchedGemmShape no_rows =
        ShapeOf({2}, {2}, {2}, 0, 3, 2, true, false);
    EXPECT_TRUE(
        BatchedGemm(no_rows, 1.0f, nullptr, nullptr, 0.0f, nullptr, path)
            .ok());
  }
}

TEST(BatchedGemmTest, InconsistentShapesAreInternalErrors) {
  BatchedGemmShape inner = ShapeOf({2}, {2}, {2}, 2, 3, 2, false, false);
  inner.b = {2, 4, 2};
  std::vector<float> buffer(64);
  const absl::Status status = BatchedGemm(inner, 1.0f, buffer.data(),
                                          buffer.data(), 0.0f, buffer.data());
  EXPECT_TRUE(absl::IsInternal(status)) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("inconsistent batched product: [2, 2, 3] x [2, 4, 2] "
                        "into [2, 2, 2]"));
  const BatchedGemmShape batch = ShapeOf({3}, {2}, {3}, 2, 3, 2, false, false);
  EXPECT_THAT(BatchedGemm(batch, 1.0f, buffer.data(), buffer.data(), 0.0f,
                          buffer.data())
                  .message(),
              HasSubstr("inconsistent batched product"));
  BatchedGemmShape vector = batch;
  vector.a = {3};
  EXPECT_THAT(BatchedGemm(vector, 1.0f, buffer.data(), buffer.data(), 0.0f,
                          buffer.data())
                  .message(),
              HasSubstr("rank below 2"));
}

// Threads running products of shared and of their own shapes at once: the
// cache of primitives is shared, each run's scratchpad is not.
TEST(BatchedGemmTest, ManyThreadsAtOnce) {
  constexpr int kThreads = 6;
  std::vector<std::thread> threads;
  std::vector<std::string> failures(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      std::mt19937 engine(100 + t);
      for (int round = 0; round < 20; ++round) {
        const int64_t m = 8 + (round % 3), k = 16 + t % 2, n = 12;
        const BatchedGemmShape s =
            ShapeOf({2, 3}, {1, 3}, {2, 3}, m, k, n, round % 2, t % 2);
        const std::vector<double> a = Random(NumElements(s.a), engine);
        const std::vector<double> b = Random(NumElements(s.b), engine);
        const std::vector<double> expected =
            Reference(s, 1.0, a, b, 0.0, std::vector<double>(NumElements(s.c)));
        const std::vector<float> af(a.begin(), a.end());
        const std::vector<float> bf(b.begin(), b.end());
        std::vector<float> c(expected.size());
        const absl::Status status =
            BatchedGemm(s, 1.0f, af.data(), bf.data(), 0.0f, c.data());
        if (!status.ok()) {
          failures[t] = std::string(status.message());
          return;
        }
        for (size_t i = 0; i < c.size(); ++i) {
          if (std::fabs(c[i] - expected[i]) > 1e-4) {
            failures[t] = absl::StrCat("round ", round, " element ", i, ": ",
                                       c[i], " instead of ", expected[i]);
            return;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(BroadcastBatchOffsetTest, SkipsBroadcastDims) {
  // Out batch [2, 3]; an input of batch [2, 1] with matrices of 10.
  const Dims out = {2, 3}, in = {2, 1}, none = {};
  EXPECT_EQ(BroadcastBatchOffset(4, out, in, 10), 10);
  EXPECT_EQ(BroadcastBatchOffset(2, out, in, 10), 0);
  EXPECT_EQ(BroadcastBatchOffset(5, out, none, 10), 0);
  const Dims last = {3};
  EXPECT_EQ(BroadcastBatchOffset(5, out, last, 10), 20);
}

}  // namespace
}  // namespace scopeflow
