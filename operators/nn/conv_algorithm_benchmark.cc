// Times oneDNN's direct and Winograd convolutions as conv2d and
// conv2d_grad run them (conv_onednn.h), counting the reorders between the
// user's layouts and each primitive's, which a net pays: the inference
// pass, and the backward-data and backward-weights passes with the filter
// read from and written to OIHW on every run. Each on NHWC, NCHW, NCHW8c
// and NCHW16c activations: Winograd's reorders the first three into its
// 16-channel blocks and out of them, and runs on NCHW16c as it is; direct
// runs on NHWC as it is, reorders NCHW to and from its blocks too, takes
// NCHW8c with AVX2's kernels on AVX-512 CPUs and NCHW16c with AVX-512's.
// The figures behind WinogradPays, at 1 and 2 threads (a filter such as
// --benchmark_filter=Backward.*/nchw/ picks passes and layouts):
//   OMP_NUM_THREADS=1 bazel run //operators/nn:conv_algorithm_benchmark
#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "dnnl.hpp"
#include "operators/nn/conv_onednn.h"

namespace scopeflow {
namespace {

void FillRandom(dnnl::memory& memory, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* data = static_cast<float*>(memory.get_data_handle());
  std::generate_n(data, memory.get_desc().get_size() / sizeof(float),
                  [&] { return dist(engine); });
}

// Input [N, C, H = W] convolved with [M, C, 3, 3], stride 1, padding 1,
// into [N, M, H, W]; activations in `format`.
OneDnnConv Conv3x3(int64_t n, int64_t c, int64_t size, int64_t m,
                   ImageFormat format) {
  Conv2dAttrs a;
  a.strides = {1, 1};
  a.dilations = {1, 1};
  a.padding = {1, 1, 1, 1};
  a.groups = 1;
  a.format = format;
  return DescribeConv(a, {n, c, size, size}, format, {m, c, 3, 3},
                      {n, m, size, size}, format);
}

dnnl::algorithm AlgorithmOf(bool winograd) {
  return winograd ? dnnl::algorithm::convolution_winograd
                  : dnnl::algorithm::convolution_direct;
}

// A reorder between a user's memory and a primitive's where their layouts
// differ; where they do not, both are the user's and Run does nothing.
struct Staged {
  dnnl::memory from, to;
  std::optional<dnnl::reorder> reorder;

  void Run(dnnl::stream& stream) {
    if (reorder) reorder->execute(stream, from, to);
  }
};

// `user` into the primitive's memory of `desc` (`to`).
Staged Into(const dnnl::memory& user, const dnnl::memory::desc& desc,
            const dnnl::engine& engine) {
  if (user.get_desc() == desc) return {user, user, std::nullopt};
  const dnnl::memory to(desc, engine);
  return {user, to, dnnl::reorder(user, to)};
}

// The primitive's memory of `desc` (`from`) out to `user`.
Staged OutOf(const dnnl::memory::desc& desc, const dnnl::memory& user,
             const dnnl::engine& engine) {
  if (user.get_desc() == desc) return {user, user, std::nullopt};
  const dnnl::memory from(desc, engine);
  return {from, user, dnnl::reorder(from, user)};
}

// A random user memory of `desc`.
dnnl::memory RandomMemory(const dnnl::memory::desc& desc,
                          const dnnl::engine& engine, uint32_t seed) {
  dnnl::memory memory(desc, engine);
  FillRandom(memory, seed);
  return memory;
}

// The convolution's multiplications and additions, as a rate counter.
void CountFlops(benchmark::State& state, int64_t n, int64_t c, int64_t size,
                int64_t m) {
  const double flops = 2.0 * n * size * size * m * c * 9;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

// The arguments of the benchmarks below: N, C, H = W, M, and direct
// (winograd = 0) or Winograd (1). Each takes the activations' layout too.
struct Args {
  int64_t n, c, size, m;
  bool winograd;
};

Args ArgsOf(const benchmark::State& state) {
  return {state.range(0), state.range(1), state.range(2), state.range(3),
          state.range(4) != 0};
}

// conv2d's inference pass, bias and relu fused; the filter is reordered
// into the primitive's layout once, as conv2d keeps it.
void BM_Conv3x3Algorithm(benchmark::State& state, ImageFormat format) {
  const Args x = ArgsOf(state);
  const OneDnnConv conv = Conv3x3(x.n, x.c, x.size, x.m, format);
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::optional<dnnl::convolution_forward::primitive_desc> pd;
  try {
    pd = ForwardPrimitiveOf(conv, AlgorithmOf(x.winograd), /*has_bias=*/true,
                            ConvEpilogue{false, ConvActivation::kRelu}, engine);
  } catch (const dnnl::error&) {
    state.SkipWithError("oneDNN has no such kernel for this CPU");
    return;
  }
  Staged src =
      Into(RandomMemory(conv.src_md, engine, 1), pd->src_desc(), engine);
  Staged dst = OutOf(pd->dst_desc(), dnnl::memory(conv.dst_md, engine), engine);
  Staged weights = Into(RandomMemory(conv.weights_md, engine, 2),
                        pd->weights_desc(), engine);
  weights.Run(stream);
  const dnnl::memory bias = RandomMemory(
      {{x.m}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::x},
      engine, 3);
  const dnnl::convolution_forward primitive(*pd);
  for (auto _ : state) {
    src.Run(stream);
    primitive.execute(stream, {{DNNL_ARG_SRC, src.to},
                               {DNNL_ARG_WEIGHTS, weights.to},
                               {DNNL_ARG_BIAS, bias},
                               {DNNL_ARG_DST, dst.from}});
    dst.Run(stream);
    stream.wait();
  }
  state.SetLabel(pd->impl_info_str());
  CountFlops(state, x.n, x.c, x.size, x.m);
}

// conv2d_grad's Input@GRAD: Output@GRAD and the OIHW filter in, Input@GRAD
// out, each through a reorder where the primitive wants another layout.
void BM_Conv3x3BackwardDataAlgorithm(benchmark::State& state,
                                     ImageFormat format) {
  const Args x = ArgsOf(state);
  const OneDnnConv conv = Conv3x3(x.n, x.c, x.size, x.m, format);
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::optional<dnnl::convolution_backward_data::primitive_desc> pd;
  try {
    pd = BackwardDataPrimitiveOf(conv, AlgorithmOf(x.winograd), engine);
  } catch (const dnnl::error&) {
    state.SkipWithError("oneDNN has no such kernel for this CPU");
    return;
  }
  Staged dy =
      Into(RandomMemory(conv.dst_md, engine, 1), pd->diff_dst_desc(), engine);
  Staged weights = Into(RandomMemory(conv.weights_md, engine, 2),
                        pd->weights_desc(), engine);
  Staged dx =
      OutOf(pd->diff_src_desc(), dnnl::memory(conv.src_md, engine), engine);
  const dnnl::convolution_backward_data primitive(*pd);
  for (auto _ : state) {
    dy.Run(stream);
    weights.Run(stream);
    primitive.execute(stream, {{DNNL_ARG_DIFF_DST, dy.to},
                               {DNNL_ARG_WEIGHTS, weights.to},
                               {DNNL_ARG_DIFF_SRC, dx.from}});
    dx.Run(stream);
    stream.wait();
  }
  state.SetLabel(pd->impl_info_str());
  CountFlops(state, x.n, x.c, x.size, x.m);
}

// conv2d_grad's Filter@GRAD: Input and Output@GRAD in, the OIHW filter's
// gradient out, each through a reorder where the primitive wants another
// layout. (Where both passes run, conv2d_grad reorders Output@GRAD once
// for both if they want the same layout: this counts it in each.)
void BM_Conv3x3BackwardWeightsAlgorithm(benchmark::State& state,
                                        ImageFormat format) {
  const Args x = ArgsOf(state);
  const OneDnnConv conv = Conv3x3(x.n, x.c, x.size, x.m, format);
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::optional<dnnl::convolution_backward_weights::primitive_desc> pd;
  try {
    pd = BackwardWeightsPrimitiveOf(conv, AlgorithmOf(x.winograd), engine);
  } catch (const dnnl::error&) {
    state.SkipWithError("oneDNN has no such kernel for this CPU");
    return;
  }
  Staged src =
      Into(RandomMemory(conv.src_md, engine, 1), pd->src_desc(), engine);
  Staged dy =
      Into(RandomMemory(conv.dst_md, engine, 2), pd->diff_dst_desc(), engine);
  Staged dw = OutOf(pd->diff_weights_desc(),
                    dnnl::memory(conv.weights_md, engine), engine);
  const dnnl::convolution_backward_weights primitive(*pd);
  for (auto _ : state) {
    src.Run(stream);
    dy.Run(stream);
    primitive.execute(stream, {{DNNL_ARG_SRC, src.to},
                               {DNNL_ARG_DIFF_DST, dy.to},
                               {DNNL_ARG_DIFF_WEIGHTS, dw.from}});
    dw.Run(stream);
    stream.wait();
  }
  state.SetLabel(pd->impl_info_str());
  CountFlops(state, x.n, x.c, x.size, x.m);
}

// Each shape's direct and Winograd runs next to each other, so that the
// machine's drift falls on both alike. A batch of one image only up to
// 32x32, to keep a run of all three passes near ten minutes a thread
// count.
void Shapes(benchmark::internal::Benchmark* b,
            const std::vector<std::pair<int64_t, int64_t>>& channels) {
  for (int64_t n : {1, 16}) {
    for (const auto& [c, m] : channels) {
      for (int64_t size : {16, 32, 64}) {
        if (n == 1 && size > 32) continue;
        for (int64_t winograd : {0, 1}) b->Args({n, c, size, m, winograd});
      }
    }
  }
}

// Each pass on each layout as a family of its own (BM_<pass>/<layout>/...),
// which keeps families under the library's warning about more than 100
// inputs. The backward passes take 16 -> 32 channels too: the first layers
// of small training nets.
const bool kRegistered = [] {
  using Pass = void (*)(benchmark::State&, ImageFormat);
  using Channels = std::vector<std::pair<int64_t, int64_t>>;
  const Channels forward = {{16, 16}, {32, 32}, {32, 64},
                            {64, 32}, {64, 64}, {128, 128}};
  const Channels backward = {{16, 16}, {16, 32}, {32, 32},  {32, 64},
                             {64, 32}, {64, 64}, {128, 128}};
  const std::tuple<const char*, Pass, const Channels*> passes[] = {
      {"BM_Conv3x3Algorithm", BM_Conv3x3Algorithm, &forward},
      {"BM_Conv3x3BackwardDataAlgorithm", BM_Conv3x3BackwardDataAlgorithm,
       &backward},
      {"BM_Conv3x3BackwardWeightsAlgorithm", BM_Conv3x3BackwardWeightsAlgorithm,
       &backward}};
  const std::pair<const char*, ImageFormat> layouts[] = {
      {"nhwc", ImageFormat::kNhwc},
      {"nchw", ImageFormat::kNchw},
      {"nchw8c", ImageFormat::kNchw8c},
      {"nchw16c", ImageFormat::kNchw16c}};
  // The 3x3 layers of ResNet's four stages on a 224x224 image, batch 1:
  // images smaller than the ones above, with more channels.
  for (const auto& [layout_name, format] : layouts) {
    benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
        (std::string("BM_Conv3x3Algorithm/resnet_stages/") + layout_name)
            .c_str(),
        BM_Conv3x3Algorithm, format);
    for (const auto& [channels, size] :
         {std::pair<int64_t, int64_t>{64, 56}, {128, 28}, {256, 14},
          {512, 7}}) {
      for (int64_t winograd : {0, 1}) {
        b->Args({1, channels, size, channels, winograd});
      }
    }
    b->ArgNames({"n", "c", "hw", "m", "winograd"})
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  for (const auto& [pass_name, pass, channels] : passes) {
    for (const auto& [layout_name, format] : layouts) {
      benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
          (std::string(pass_name) + "/" + layout_name).c_str(), pass, format);
      Shapes(b, *channels);
      b->ArgNames({"n", "c", "hw", "m", "winograd"})
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  return true;
}();

}  // namespace
}  // namespace scopeflow
