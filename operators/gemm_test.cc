#include "operators/gemm.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace scopeflow {
namespace {

struct Case {
  bool transpose_a;
  bool transpose_b;
  int64_t m, n, k;
  int64_t ldb;  // B's row stride: n (or k when transposed) or more
};

// The float Gemm against the float64 one on the same values, C starting
// non-zero so that beta counts. The cases include B with rows 4 KiB apart
// and 8..256 rows of C, which on AVX2 machines Gemm first copies to a
// padded stride: that copy must not change a value, nor read past a row's
// n values when B's stride is wider than its rows.
void ExpectMatchesFloat64(const Case& c) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t a_rows = c.transpose_a ? c.k : c.m;
  const int64_t lda = c.transpose_a ? c.m : c.k;
  const int64_t b_rows = c.transpose_b ? c.n : c.k;
  std::vector<float> a(a_rows * lda), b(b_rows * c.ldb), out(c.m * c.n);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  for (float& v : out) v = dist(rng);
  const std::vector<double> a64(a.begin(), a.end()), b64(b.begin(), b.end());
  std::vector<double> out64(out.begin(), out.end());
  ASSERT_TRUE(Gemm(c.transpose_a, c.transpose_b, c.m, c.n, c.k, 0.5f, a.data(),
                   lda, b.data(), c.ldb, 2.0f, out.data(), c.n)
                  .ok());
  ASSERT_TRUE(Gemm(c.transpose_a, c.transpose_b, c.m, c.n, c.k, 0.5, a64.data(),
                   lda, b64.data(), c.ldb, 2.0, out64.data(), c.n)
                  .ok());
  for (int64_t i = 0; i < c.m * c.n; ++i) {
    ASSERT_NEAR(out[i], out64[i], 1e-4 * c.k)
        << "m " << c.m << " n " << c.n << " k " << c.k << " ldb " << c.ldb
        << " transposes " << c.transpose_a << c.transpose_b << " at " << i;
  }
}

TEST(GemmTest, RowsFourKibApartGiveTheSameProduct) {
  for (bool transpose_a : {false, true}) {
    for (int64_t m : {1, 8, 64, 256, 400}) {
      ExpectMatchesFloat64({transpose_a, false, m, 1024, 96, 1024});
      // Rows 8 KiB apart holding 1000 values each.
      ExpectMatchesFloat64({transpose_a, false, m, 1000, 40, 2048});
    }
  }
  // A copy too large for the thread to keep (over 16 MiB).
  ExpectMatchesFloat64({false, false, 8, 1024, 4200, 1024});
}

TEST(GemmTest, OtherStridesAndTransposes) {
  ExpectMatchesFloat64({false, true, 64, 1024, 1024, 1024});
  ExpectMatchesFloat64({true, true, 16, 300, 1024, 1024});
  ExpectMatchesFloat64({false, false, 33, 17, 5, 19});
  ExpectMatchesFloat64({false, false, 64, 10, 1024, 10});
}

TEST(GemmTest, EmptyInnerDimensionScalesC) {
  std::vector<float> out = {1.0f, -2.0f};
  ASSERT_TRUE(Gemm(false, false, 1, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 3.0f,
                   out.data(), 2)
                  .ok());
  EXPECT_EQ(out, (std::vector<float>{3.0f, -6.0f}));
}

}  // namespace
}  // namespace scopeflow
