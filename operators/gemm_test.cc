#include "operators/gemm.h"

#include <cmath>
#include <cstdint>
#include <memory>
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

// A weight-shaped B (1024 columns, rows 4 KiB apart) in its own
// allocation, the products of A with it, and their float64 references.
class KeptCopyTest : public ::testing::Test {
 protected:
  static constexpr int64_t kM = 16, kN = 1024, kK = 48;

  void SetUp() override {
    absl::StatusOr<std::shared_ptr<Allocation>> allocation =
        (*GetAllocator(CPUPlace()))->Allocate(kK * kN * sizeof(float));
    ASSERT_TRUE(allocation.ok());
    buffer_ = *allocation;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    a_.resize(kM * kK);
    for (float& v : a_) v = dist(rng);
    for (int64_t i = 0; i < kK * kN; ++i) b()[i] = dist(rng);
  }

  float* b() const { return static_cast<float*>(buffer_->data()); }

  std::vector<float> Product(const Allocation* b_buffer) const {
    std::vector<float> out(kM * kN);
    EXPECT_TRUE(Gemm(false, false, kM, kN, kK, 1.0f, a_.data(), kK, b(), kN,
                     0.0f, out.data(), kN, b_buffer)
                    .ok());
    return out;
  }

  std::vector<double> Reference() const {
    const std::vector<double> a64(a_.begin(), a_.end());
    const std::vector<double> b64(b(), b() + kK * kN);
    std::vector<double> out(kM * kN);
    EXPECT_TRUE(Gemm(false, false, kM, kN, kK, 1.0, a64.data(), kK, b64.data(),
                     kN, 0.0, out.data(), kN)
                    .ok());
    return out;
  }

  static int Mismatches(const std::vector<float>& got,
                        const std::vector<double>& expected) {
    int mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::abs(got[i] - expected[i]) > 1e-4 * kK) ++mismatches;
    }
    return mismatches;
  }

  // Whether Gemm copies this B before a product (if not, nothing is kept).
  static bool Copies() { return GemmCopiesB(false, kM, kN, kK, kN); }

  std::shared_ptr<Allocation> buffer_;
  std::vector<float> a_;
};

TEST_F(KeptCopyTest, KeepsTheCopyFromTheSecondProductOfTheSameContents) {
  const std::vector<double> expected = Reference();
  EXPECT_EQ(Mismatches(Product(buffer_.get()), expected), 0);
  // Once is not enough: a training step's weights change before the next.
  EXPECT_EQ(buffer_->kept_copies().NumCopies(), 0);
  EXPECT_EQ(Mismatches(Product(buffer_.get()), expected), 0);
  EXPECT_EQ(buffer_->kept_copies().NumCopies(), Copies() ? 1 : 0);
  EXPECT_EQ(Mismatches(Product(buffer_.get()), expected), 0);

  // Written and declared: the kept copy is dropped and the products follow
  // the new contents.
  for (int64_t i = 0; i < kK * kN; ++i) b()[i] = -0.5f * b()[i] + 0.25f;
  buffer_->MarkWritten();
  const std::vector<double> rewritten = Reference();
  EXPECT_EQ(Mismatches(Product(buffer_.get()), rewritten), 0);
  EXPECT_EQ(buffer_->kept_copies().NumCopies(), 0);
  EXPECT_EQ(Mismatches(Product(buffer_.get()), rewritten), 0);
  EXPECT_EQ(buffer_->kept_copies().NumCopies(), Copies() ? 1 : 0);

  // Written without declaring it: where a copy is kept, the product reads
  // the copy, not B, so it still gives the declared contents' product.
  if (Copies()) {
    for (int64_t i = 0; i < kK * kN; ++i) b()[i] = 1.0f;
    EXPECT_EQ(Mismatches(Product(buffer_.get()), rewritten), 0);
  }
}

// Memory a caller owns and may write at any time unseen.
class CallerMemory final : public Allocator {
 public:
  CallerMemory() : Allocator(CPUPlace()) {}
  bool OwnsMemory() const override { return false; }

 protected:
  absl::StatusOr<void*> AllocateRaw(size_t bytes) override {
    return absl::UnimplementedError("caller memory");
  }
  void FreeRaw(void* data, size_t bytes) override {}
};

TEST_F(KeptCopyTest, KeepsNoCopyOfCallerOwnedMemory) {
  const Allocation caller_owned(b(), kK * kN * sizeof(float),
                                std::make_shared<CallerMemory>());
  EXPECT_EQ(Mismatches(Product(&caller_owned), Reference()), 0);
  EXPECT_EQ(Mismatches(Product(&caller_owned), Reference()), 0);
  for (int64_t i = 0; i < kK * kN; ++i) b()[i] = 2.0f * b()[i];
  EXPECT_EQ(Mismatches(Product(&caller_owned), Reference()), 0);
  EXPECT_EQ(caller_owned.kept_copies().NumCopies(), 0);
}

TEST_F(KeptCopyTest, TwoMatricesOfOneBufferKeepTwoCopies) {
  // The second half of the rows as a matrix of its own.
  const int64_t half = kK / 2;
  const float* second = b() + half * kN;
  std::vector<float> out(kM * kN);
  std::vector<double> expected(kM * kN);
  const std::vector<double> a64(a_.begin(), a_.end());
  const std::vector<double> b64(second, second + half * kN);
  ASSERT_TRUE(Gemm(false, false, kM, kN, half, 1.0, a64.data(), kK, b64.data(),
                   kN, 0.0, expected.data(), kN)
                  .ok());
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(Mismatches(Product(buffer_.get()), Reference()), 0);
    ASSERT_TRUE(Gemm(false, false, kM, kN, half, 1.0f, a_.data(), kK, second,
                     kN, 0.0f, out.data(), kN, buffer_.get())
                    .ok());
    EXPECT_EQ(Mismatches(out, expected), 0);
  }
  EXPECT_EQ(buffer_->kept_copies().NumCopies(), Copies() ? 2 : 0);
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
