// Times oneDNN's direct and Winograd forward convolutions on NHWC
// activations, as conv2d runs them (conv_onednn.h): Winograd's with the
// reorders of src into its layout and of dst out of it, which a net on NHWC
// pays. The figures behind WinogradPays:
//   bazel run //operators/nn:conv_algorithm_benchmark
#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
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

// Input [N, H, W, C] (N, C, H = W: args 0-2) convolved with [M, C, 3, 3]
// (M: arg 3), padding 1, bias and relu; direct (arg 4 = 0) or Winograd (1).
void BM_Conv3x3Algorithm(benchmark::State& state) {
  const int64_t n = state.range(0), c = state.range(1), size = state.range(2),
                m = state.range(3);
  const bool winograd = state.range(4) != 0;
  Conv2dAttrs a;
  a.strides = {1, 1};
  a.dilations = {1, 1};
  a.padding = {1, 1, 1, 1};
  a.groups = 1;
  a.nhwc = true;
  const OneDnnConv conv =
      DescribeConv(a, {n, c, size, size}, ImageFormat::kNhwc, {m, c, 3, 3},
                   {n, m, size, size}, ImageFormat::kNhwc);
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::optional<dnnl::convolution_forward::primitive_desc> pd;
  try {
    pd = ForwardPrimitiveOf(conv,
                            winograd ? dnnl::algorithm::convolution_winograd
                                     : dnnl::algorithm::convolution_direct,
                            /*has_bias=*/true, /*fuse_relu=*/true, engine);
  } catch (const dnnl::error&) {
    state.SkipWithError("oneDNN has no such kernel for this CPU");
    return;
  }
  dnnl::memory user_src(conv.src_md, engine), user_dst(conv.dst_md, engine);
  dnnl::memory user_weights(conv.weights_md, engine);
  dnnl::memory bias(
      {{m}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::x}, engine);
  FillRandom(user_src, 1);
  FillRandom(user_weights, 2);
  FillRandom(bias, 3);
  const bool reorder_src = pd->src_desc() != conv.src_md;
  const bool reorder_dst = pd->dst_desc() != conv.dst_md;
  dnnl::memory src =
      reorder_src ? dnnl::memory(pd->src_desc(), engine) : user_src;
  dnnl::memory dst =
      reorder_dst ? dnnl::memory(pd->dst_desc(), engine) : user_dst;
  dnnl::memory weights(pd->weights_desc(), engine);
  dnnl::reorder(user_weights, weights).execute(stream, user_weights, weights);
  const dnnl::convolution_forward primitive(*pd);
  const dnnl::reorder src_in(user_src, src), dst_out(dst, user_dst);
  for (auto _ : state) {
    if (reorder_src) src_in.execute(stream, user_src, src);
    primitive.execute(stream, {{DNNL_ARG_SRC, src},
                               {DNNL_ARG_WEIGHTS, weights},
                               {DNNL_ARG_BIAS, bias},
                               {DNNL_ARG_DST, dst}});
    if (reorder_dst) dst_out.execute(stream, dst, user_dst);
    stream.wait();
  }
  state.SetLabel(pd->impl_info_str());
  const double flops = 2.0 * n * size * size * m * c * 9;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {1, 16}) {
    for (const auto& [c, m] : std::vector<std::pair<int64_t, int64_t>>{
             {16, 16}, {32, 32}, {32, 64}, {64, 32}, {64, 64}, {128, 128}}) {
      for (int64_t size : {16, 32, 64}) {
        for (int64_t winograd : {0, 1}) b->Args({n, c, size, m, winograd});
      }
    }
  }
}
BENCHMARK(BM_Conv3x3Algorithm)
    ->ArgNames({"n", "c", "hw", "m", "winograd"})
    ->Apply(Shapes)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace scopeflow
