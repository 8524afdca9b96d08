// Embeds scopeflow: loads a net and its parameters once, then runs it from
// several threads at once on one Predictor, and checks every thread got
// the same answer.
//
// Three commands, the last two wrapped here (a backslash would end a
// comment line in a continuation):
//   bazel build //examples/embed
//   bazel-bin/tools/scopeflow run examples/mlp/main.pbtxt
//       --startup examples/mlp/startup.pbtxt --save_params /tmp/mlp.params
//   bazel-bin/examples/embed/embed examples/mlp/main.pbtxt /tmp/mlp.params
//       examples/mlp/digit.npy
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/npy.h"
#include "framework/serving/predictor.h"

namespace {

constexpr int kThreads = 4;
constexpr int kRunsPerThread = 2000;

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "embed: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s NET PARAMS INPUT.npy\n", argv[0]);
    return 2;
  }
  absl::StatusOr<scopeflow::Predictor> predictor =
      scopeflow::Predictor::Load(argv[1], argv[2]);
  if (!predictor.ok()) return Fail(predictor.status());
  for (const scopeflow::TensorInfo& input : predictor->inputs()) {
    std::printf("input  %s\n", input.DebugString().c_str());
  }
  for (const scopeflow::TensorInfo& output : predictor->outputs()) {
    std::printf("output %s\n", output.DebugString().c_str());
  }
  absl::StatusOr<scopeflow::Tensor> input = scopeflow::ReadNpy(argv[3]);
  if (!input.ok()) return Fail(input.status());

  // The input stays in memory this program owns; the predictor reads it
  // there, without a copy, through a tensor viewing it.
  std::vector<float> image(input->data<float>(),
                           input->data<float>() + input->numel());
  absl::StatusOr<scopeflow::Tensor> view = scopeflow::Tensor::FromExternal(
      image.data(), scopeflow::kFloat32, input->dims());
  if (!view.ok()) return Fail(view.status());
  const std::vector<scopeflow::Feed> feeds = {
      {predictor->inputs()[0].name, *view}};

  absl::StatusOr<std::vector<scopeflow::Tensor>> expected =
      predictor->Run(feeds);
  if (!expected.ok()) return Fail(expected.status());
  const scopeflow::Tensor& scores = (*expected)[0];
  int best = 0;
  for (int i = 1; i < scores.numel(); ++i) {
    if (scores.data<float>()[i] > scores.data<float>()[best]) best = i;
  }
  std::printf("class %d (score %.4f)\n", best, scores.data<float>()[best]);

  // Every thread runs the same predictor: the parameters are shared.
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRunsPerThread; ++i) {
        absl::StatusOr<std::vector<scopeflow::Tensor>> out =
            predictor->Run(feeds);
        bool same = out.ok() && (*out)[0].numel() == scores.numel();
        for (int j = 0; same && j < scores.numel(); ++j) {
          same = (*out)[0].data<float>()[j] == scores.data<float>()[j];
        }
        if (!same) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  int total = 0;
  for (int m : mismatches) total += m;
  std::printf("%d threads x %d runs: %d differed from the first, %.0f runs/s\n",
              kThreads, kRunsPerThread, total,
              kThreads * kRunsPerThread / seconds);
  return total == 0 ? 0 : 1;
}
