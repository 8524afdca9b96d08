// Matrix products may keep a re-spaced copy of a weight between runs
// (operators/gemm.cc), and convolutions their filter in oneDNN's layout
// (operators/nn/conv2d.cc): every way a net or its caller changes the
// weight must make the next run read the new values. The matrix weights are
// 1024 wide and the batches 8 rows, the shapes for which AVX2 machines keep
// such copies.
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/substitute.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gtest/gtest.h"
#include "operators/gemm.h"

namespace scopeflow {
namespace {

constexpr int64_t kRows = 8, kInner = 64, kCols = 1024;

NetDef Net(const std::string& blocks) {
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1 name: \"kept\" " + blocks);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

// h = fc(x, w) with w a parameter.
constexpr char kFc[] = R"pb(
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ -1, 64 ]
    }
    vars {
      name: "w"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 64, 1024 ]
      persistable: true
    }
    vars { name: "h" dtype: DATA_TYPE_FLOAT32 }
    ops {
      type: "fc"
      inputs { slot: "X" vars: "x" }
      inputs { slot: "W" vars: "w" }
      outputs { slot: "Out" vars: "h" }
    }
  })pb";

// $0 -= lr * g in place, $0 and g of shape [$1] (see SgdNet).
constexpr char kSgdNet[] = R"pb(
  blocks {
    vars {
      name: "$0"
      dtype: DATA_TYPE_FLOAT32
      shape: [ $1 ]
      persistable: true
    }
    vars {
      name: "g"
      dtype: DATA_TYPE_FLOAT32
      shape: [ $1 ]
    }
    vars {
      name: "lr"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 1 ]
    }
    ops {
      type: "sgd"
      inputs { slot: "Param" vars: "$0" }
      inputs { slot: "Grad" vars: "g" }
      inputs { slot: "LearningRate" vars: "lr" }
      outputs { slot: "ParamOut" vars: "$0" }
    }
  })pb";

std::string SgdNet(const std::string& param, const std::string& shape) {
  return absl::Substitute(kSgdNet, param, shape);
}

// out = x y, both fed.
constexpr char kMatmul[] = R"pb(
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ -1, 64 ]
    }
    vars {
      name: "y"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 64, 1024 ]
    }
    vars { name: "out" dtype: DATA_TYPE_FLOAT32 }
    ops {
      type: "matmul"
      inputs { slot: "X" vars: "x" }
      inputs { slot: "Y" vars: "y" }
      outputs { slot: "Out" vars: "out" }
    }
  })pb";

// y = conv2d(x, f), 3x3 with padding 1, f a parameter.
constexpr char kConv[] = R"pb(
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ -1, 8, 12, 12 ]
    }
    vars {
      name: "f"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 16, 8, 3, 3 ]
      persistable: true
    }
    vars { name: "y" dtype: DATA_TYPE_FLOAT32 }
    ops {
      type: "conv2d"
      inputs { slot: "Input" vars: "x" }
      inputs { slot: "Filter" vars: "f" }
      outputs { slot: "Output" vars: "y" }
      attrs {
        name: "paddings"
        ints { values: [ 1, 1 ] }
      }
    }
  })pb";

std::vector<float> Pattern(int64_t size, float scale) {
  std::vector<float> values(size);
  for (int64_t i = 0; i < size; ++i) {
    values[i] = scale * static_cast<float>((i * 37) % 101 - 50) / 50.0f;
  }
  return values;
}

// The number of elements of x w (plain loops in float64) that `got` misses.
int Mismatches(const Tensor& got, const std::vector<float>& x,
               const std::vector<float>& w) {
  const std::vector<float> values = Values<float>(got);
  EXPECT_EQ(values.size(), static_cast<size_t>(kRows * kCols));
  int mismatches = 0;
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < kInner; ++p) {
        sum += static_cast<double>(x[i * kInner + p]) * w[p * kCols + j];
      }
      if (std::abs(values[i * kCols + j] - sum) > 1e-4) ++mismatches;
    }
  }
  return mismatches;
}

class KeptWeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    x_ = Pattern(kRows * kInner, 1.0f);
    w_ = Pattern(kInner * kCols, 0.5f);
    absl::StatusOr<Tensor*> w = root_.Var("w")->GetMutable<Tensor>();
    ASSERT_TRUE(w.ok());
    *(*w) = MakeTensor<float>({kInner, kCols}, w_);
    fc_ = executor_.Prepare(Net(kFc), 0, CPUPlace());
    ASSERT_TRUE(fc_.ok()) << fc_.status();
  }

  // Runs the fc net and counts the elements that miss x w_.
  int RunFc() {
    absl::StatusOr<std::vector<Tensor>> out = executor_.Run(
        *fc_, root_, {{"x", MakeTensor<float>({kRows, kInner}, x_)}}, {"h"});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? Mismatches((*out)[0], x_, w_) : -1;
  }

  Executor executor_;
  Scope root_;
  absl::StatusOr<PreparedNet> fc_ = absl::UnknownError("not prepared");
  std::vector<float> x_, w_;
};

TEST_F(KeptWeightsTest, AnOptimizerUpdateInPlaceIsReadByTheNextRun) {
  for (int run = 0; run < 3; ++run) EXPECT_EQ(RunFc(), 0) << "run " << run;
  absl::StatusOr<PreparedNet> sgd =
      executor_.Prepare(Net(SgdNet("w", "64, 1024")), 0, CPUPlace());
  ASSERT_TRUE(sgd.ok()) << sgd.status();
  const std::vector<float> g = Pattern(kInner * kCols, 0.25f);
  for (int step = 0; step < 2; ++step) {
    ASSERT_TRUE(executor_
                    .Run(*sgd, root_,
                         {{"g", MakeTensor<float>({kInner, kCols}, g)},
                          {"lr", MakeTensor<float>({1}, {2.0f})}},
                         {})
                    .ok());
    for (int64_t i = 0; i < kInner * kCols; ++i) w_[i] -= 2.0f * g[i];
    for (int run = 0; run < 3; ++run) {
      EXPECT_EQ(RunFc(), 0) << "step " << step << " run " << run;
    }
  }
}

TEST_F(KeptWeightsTest, ACallerWritingTheParameterIsReadByTheNextRun) {
  for (int run = 0; run < 3; ++run) EXPECT_EQ(RunFc(), 0);
  Tensor* w = *root_.FindVar("w")->GetMutable<Tensor>();
  // Where Gemm copies such a weight at all, the runs kept the copy.
  EXPECT_EQ(w->buffer()->kept_copies().NumCopies(),
            GemmCopiesB(false, kRows, kCols, kInner, kCols) ? 1 : 0);
  // Through a mutable tensor's elements, as a caller loading weights would.
  float* elements = w->data<float>();
  for (int64_t i = 0; i < kInner * kCols; ++i) {
    w_[i] = 1.0f - w_[i];
    elements[i] = w_[i];
  }
  for (int run = 0; run < 3; ++run) EXPECT_EQ(RunFc(), 0);
  // Through an element pointer kept from before those runs: declared.
  for (int64_t i = 0; i < kInner * kCols; ++i) {
    w_[i] = 0.5f * w_[i];
    elements[i] = w_[i];
  }
  w->MarkWritten();
  for (int run = 0; run < 3; ++run) EXPECT_EQ(RunFc(), 0);
  // Replaced by another tensor.
  w_ = Pattern(kInner * kCols, -1.0f);
  *w = MakeTensor<float>({kInner, kCols}, w_);
  for (int run = 0; run < 3; ++run) EXPECT_EQ(RunFc(), 0);
}

TEST_F(KeptWeightsTest, ConcurrentRunsShareOneKeptCopy) {
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < 20; ++run) mismatches[t] += RunFc();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
  const Tensor* w = *root_.FindVar("w")->GetMutable<Tensor>();
  EXPECT_EQ(w->buffer()->kept_copies().NumCopies(),
            GemmCopiesB(false, kRows, kCols, kInner, kCols) ? 1 : 0);
}

// The elements of conv2d(x, f) (3x3, padding 1, NCHW; plain loops in
// float64) that `got` misses.
int ConvMismatches(const Tensor& got, const std::vector<float>& x,
                   const std::vector<float>& f, int64_t batch) {
  constexpr int64_t kIn = 8, kOut = 16, kSide = 12;
  const std::vector<float> values = Values<float>(got);
  EXPECT_EQ(values.size(), static_cast<size_t>(batch * kOut * kSide * kSide));
  int mismatches = 0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t o = 0; o < kOut; ++o) {
      for (int64_t h = 0; h < kSide; ++h) {
        for (int64_t w = 0; w < kSide; ++w) {
          double sum = 0;
          for (int64_t c = 0; c < kIn; ++c) {
            for (int64_t i = 0; i < 3; ++i) {
              for (int64_t j = 0; j < 3; ++j) {
                const int64_t y = h + i - 1, z = w + j - 1;
                if (y < 0 || y >= kSide || z < 0 || z >= kSide) continue;
                sum += static_cast<double>(
                           x[((n * kIn + c) * kSide + y) * kSide + z]) *
                       f[((o * kIn + c) * 3 + i) * 3 + j];
              }
            }
          }
          const float value = values[((n * kOut + o) * kSide + h) * kSide + w];
          if (std::abs(value - sum) > 1e-4) ++mismatches;
        }
      }
    }
  }
  return mismatches;
}

TEST(KeptConvWeightsTest, EachUpdateOfTheFilterIsReadByTheNextRun) {
  Executor executor;
  Scope root;
  std::vector<float> f = Pattern(16 * 8 * 9, 0.25f);
  *(*root.Var("f")->GetMutable<Tensor>()) = MakeTensor<float>({16, 8, 3, 3}, f);
  absl::StatusOr<PreparedNet> conv =
      executor.Prepare(Net(kConv), 0, CPUPlace());
  ASSERT_TRUE(conv.ok()) << conv.status();
  absl::StatusOr<PreparedNet> sgd =
      executor.Prepare(Net(SgdNet("f", "16, 8, 3, 3")), 0, CPUPlace());
  ASSERT_TRUE(sgd.ok()) << sgd.status();
  const std::vector<float> g = Pattern(16 * 8 * 9, 0.125f);
  for (int step = 0; step < 3; ++step) {
    // Batches of 1 and 2: two shapes, whose primitives may want the
    // weights in different layouts.
    for (int run = 0; run < 4; ++run) {
      const int64_t batch = 1 + run % 2;
      const std::vector<float> x = Pattern(batch * 8 * 12 * 12, 1.0f);
      absl::StatusOr<std::vector<Tensor>> out = executor.Run(
          *conv, root, {{"x", MakeTensor<float>({batch, 8, 12, 12}, x)}},
          {"y"});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(ConvMismatches((*out)[0], x, f, batch), 0)
          << "step " << step << " run " << run;
    }
    const Tensor* filter = *root.FindVar("f")->GetMutable<Tensor>();
    // oneDNN's direct convolutions want their weights blocked: at most one
    // kept copy per layout.
    EXPECT_GE(filter->buffer()->kept_copies().NumCopies(), 1);
    EXPECT_LE(filter->buffer()->kept_copies().NumCopies(), 2);
    ASSERT_TRUE(executor
                    .Run(*sgd, root,
                         {{"g", MakeTensor<float>({16, 8, 3, 3}, g)},
                          {"lr", MakeTensor<float>({1}, {1.0f})}},
                         {})
                    .ok());
    for (size_t i = 0; i < f.size(); ++i) f[i] -= g[i];
  }
}

TEST(KeptFeedsTest, AFeedRewrittenBetweenRunsIsReadAsItIsNow) {
  Executor executor;
  Scope scope;
  absl::StatusOr<PreparedNet> matmul =
      executor.Prepare(Net(kMatmul), 0, CPUPlace());
  ASSERT_TRUE(matmul.ok()) << matmul.status();
  const std::vector<float> x = Pattern(kRows * kInner, 1.0f);
  std::vector<float> y = Pattern(kInner * kCols, 0.5f);
  Tensor y_tensor = MakeTensor<float>({kInner, kCols}, y);
  // The caller keeps the elements' address and refills the same buffer
  // for every run, declaring nothing.
  float* elements = y_tensor.data<float>();
  for (int run = 0; run < 4; ++run) {
    for (int64_t i = 0; i < kInner * kCols; ++i) {
      y[i] = static_cast<float>(run) - y[i];
      elements[i] = y[i];
    }
    absl::StatusOr<std::vector<Tensor>> out = executor.Run(
        *matmul, scope,
        {{"x", MakeTensor<float>({kRows, kInner}, x)}, {"y", y_tensor}},
        {"out"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Mismatches((*out)[0], x, y), 0) << "run " << run;
  }
}

}  // namespace
}  // namespace scopeflow
