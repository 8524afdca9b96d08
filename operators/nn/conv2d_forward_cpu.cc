#include "operators/nn/conv2d_forward_cpu.h"

#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "dnnl.hpp"
#include "operators/nn/conv_onednn.h"
#include "operators/nn/onednn.h"
#include "platform/kept_copies.h"

namespace scopeflow {
namespace {

// A forward convolution ready to run: its primitive, the reorders between
// our layouts and the ones oneDNN chose, and scratch buffers in
// oneDNN's layouts. Building one costs more than a small convolution, so
// each thread keeps them per shape (ConvForwardFor). Weights in another
// layout than oneDNN's are reordered once per version of their contents and
// kept with them (KeptWeights).
struct ConvForward {
  dnnl::convolution_forward conv;
  // The user-layout memories, pointed at the run's tensors before each run.
  dnnl::memory user_src, user_weights, user_dst, bias;
  // In the primitive's layouts; the same objects as the user ones (and no
  // reorder) where the layouts agree. `weights` has no buffer of its own
  // where it differs: a run reorders into a kept copy (KeptWeights), or,
  // before one is kept, into a buffer of that run's.
  dnnl::memory src, weights, dst;
  std::optional<dnnl::reorder> src_in, weights_in, dst_out;
  // Where a residual is added and dst is not the user's: the residual into
  // dst's layout, before the convolution adds to it.
  std::optional<dnnl::reorder> dst_in;
  // Pointed at a kept copy of the weights, in the primitive's layout.
  dnnl::memory kept_weights;
  // The primitive's arguments, set before each run.
  std::unordered_map<int, dnnl::memory> args;
  // Names the weights' layout among kept copies: the same for every thread
  // running these shapes and attributes, which get the same layout.
  uint64_t weights_form = 0;
};

ConvForward MakeConvForward(const Conv2dAttrs& a, const Dims& input,
                            ImageFormat input_format, const Dims& filter,
                            const Dims& output, bool has_bias,
                            const ConvEpilogue& epilogue) {
  using dnnl::memory;
  dnnl::engine& engine = ThreadCpuEngine();
  const OneDnnConv c =
      DescribeConv(a, input, input_format, filter, output, a.format);
  const dnnl::convolution_forward::primitive_desc pd =
      ForwardPrimitive(c, has_bias, epilogue, engine);
  ConvForward f;
  f.conv = dnnl::convolution_forward(pd);
  // Null handles: each run sets them to its tensors.
  f.user_src = memory(c.src_md, engine, nullptr);
  f.user_weights = memory(c.weights_md, engine, nullptr);
  f.user_dst = memory(c.dst_md, engine, nullptr);
  if (has_bias) f.bias = memory(pd.bias_desc(), engine, nullptr);
  auto stage = [&](const memory& user, const memory::desc& want,
                   memory& staged) {
    staged = user.get_desc() == want ? user : memory(want, engine);
  };
  stage(f.user_src, pd.src_desc(), f.src);
  stage(f.user_dst, pd.dst_desc(), f.dst);
  if (f.src != f.user_src) f.src_in = dnnl::reorder(f.user_src, f.src);
  if (f.user_weights.get_desc() == pd.weights_desc()) {
    f.weights = f.user_weights;
  } else {
    // The weights of every convolution of a net would otherwise stay
    // allocated once more per thread, beside their kept copies.
    f.weights = memory(pd.weights_desc(), engine, nullptr);
    f.weights_in = dnnl::reorder(f.user_weights, f.weights);
    f.kept_weights = memory(pd.weights_desc(), engine, nullptr);
  }
  if (f.dst != f.user_dst) {
    f.dst_out = dnnl::reorder(f.dst, f.user_dst);
    // The sum post-op adds to what dst holds: the residual, in its layout.
    if (epilogue.residual) f.dst_in = dnnl::reorder(f.user_dst, f.dst);
  }
  return f;
}

// What tells ConvForwards apart: every dimension and attribute (each list
// after its length), and the epilogue's parameters. Built and hashed on
// every call, so kept to integers and two floats rather than text.
struct ConvForwardKey {
  absl::InlinedVector<int64_t, 40> values;
  float alpha = 0, beta = 0;

  bool operator==(const ConvForwardKey& other) const {
    return values == other.values && alpha == other.alpha && beta == other.beta;
  }
  template <typename H>
  friend H AbslHashValue(H h, const ConvForwardKey& key) {
    return H::combine(std::move(h), key.values, key.alpha, key.beta);
  }
};

ConvForwardKey KeyOf(const Conv2dAttrs& a, const Dims& input,
                     ImageFormat input_format, const Dims& filter,
                     const Dims& output, bool has_bias,
                     const ConvEpilogue& epilogue) {
  ConvForwardKey key;
  auto& v = key.values;
  for (const Dims* dims : {&input, &filter, &output}) {
    v.push_back(static_cast<int64_t>(dims->size()));
    v.insert(v.end(), dims->begin(), dims->end());
  }
  v.insert(v.end(), a.strides.begin(), a.strides.end());
  v.insert(v.end(), a.dilations.begin(), a.dilations.end());
  v.insert(v.end(),
           {a.padding.top, a.padding.bottom, a.padding.left, a.padding.right,
            a.groups, static_cast<int64_t>(a.format),
            static_cast<int64_t>(input_format), has_bias, epilogue.residual,
            static_cast<int64_t>(epilogue.activation)});
  key.alpha = epilogue.alpha;
  key.beta = epilogue.beta;
  return key;
}

// The calling thread's ConvForward for these shapes (`input` and `output`
// in [N, C, H, W] order) and attributes, made on first use. Per thread,
// because a ConvForward's scratch buffers serve one run at a time; bounded,
// because shapes may vary without end (a full cache is emptied: simpler
// than an LRU). The bound holds every convolution of the nets a process
// runs: a net with more distinct convolutions than the cache holds would
// rebuild each of them in every run (MobileNet V3 small has 52; with a
// bound of 32 that was a third of its time).
ConvForward& ConvForwardFor(const Conv2dAttrs& a, const Dims& input,
                            ImageFormat input_format, const Dims& filter,
                            const Dims& output, bool has_bias,
                            const ConvEpilogue& epilogue) {
  constexpr size_t kMaxEntries = 1024;
  // The engine and stream first, so that as thread-locals they outlive the
  // cache, whose memories and primitives belong to them.
  ThreadCpuStream();
  thread_local absl::flat_hash_map<ConvForwardKey, ConvForward> cache;
  const ConvForwardKey key =
      KeyOf(a, input, input_format, filter, output, has_bias, epilogue);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  // Made before the eviction so that a throwing oneDNN leaves the cache as
  // it was.
  ConvForward made = MakeConvForward(a, input, input_format, filter, output,
                                     has_bias, epilogue);
  // Never 0, the form of plain re-spaced copies.
  made.weights_form = absl::Hash<ConvForwardKey>{}(key) | 1;
  if (cache.size() >= kMaxEntries) cache.clear();
  return cache.emplace(key, std::move(made)).first->second;
}

// The filter reordered into `f`'s weights layout, kept with the filter's
// buffer for the runs after (KeptCopyOf); null where none is kept, and the
// run reorders into a buffer of its own.
std::shared_ptr<const Allocation> KeptWeights(ConvForward& f,
                                              const Tensor& filter) {
  const Allocation* buffer = filter.buffer();
  if (buffer == nullptr || filter.numel() == 0) return nullptr;
  const KeptCopyKey key{
      static_cast<size_t>(static_cast<const char*>(filter.raw_data()) -
                          static_cast<const char*>(buffer->data())),
      filter.dim(0), filter.numel() / filter.dim(0), 0, f.weights_form};
  return KeptCopyOf(
      *buffer, key, f.weights.get_desc().get_size(), [&f](void* copy) {
        dnnl::memory into(f.weights.get_desc(), ThreadCpuEngine(), copy);
        f.weights_in->execute(ThreadCpuStream(), f.user_weights, into);
        // Other threads may read the copy once it is kept.
        ThreadCpuStream().wait();
      });
}

}  // namespace

absl::Status RunConv2d(const Conv2dAttrs& a, const Dims& input_nchw,
                       ImageFormat input_format, const Tensor& input,
                       const Tensor& filter, const Tensor* bias,
                       const Tensor* residual, const ConvEpilogue& epilogue,
                       const Dims& output_nchw, Tensor& output) {
  dnnl::stream& stream = ThreadCpuStream();
  ConvForward& f = ConvForwardFor(a, input_nchw, input_format, filter.dims(),
                                  output_nchw, bias != nullptr, epilogue);
  f.user_src.set_data_handle(ReadOnlyHandle(input.raw_data()));
  f.user_weights.set_data_handle(ReadOnlyHandle(filter.raw_data()));
  f.user_dst.set_data_handle(output.raw_data());
  if (f.src_in) f.src_in->execute(stream, f.user_src, f.src);
  if (residual != nullptr) {
    // The sum post-op adds the convolution to what dst holds. Residual has
    // Output's dims and layout.
    if (f.dst_in) {
      dnnl::memory user_residual(f.user_dst.get_desc(), ThreadCpuEngine(),
                                 ReadOnlyHandle(residual->raw_data()));
      f.dst_in->execute(stream, user_residual, f.dst);
    } else if (residual->raw_data() != output.raw_data()) {
      std::memcpy(output.raw_data(), residual->raw_data(),
                  static_cast<size_t>(output.numel()) * sizeof(float));
    }
  }
  dnnl::memory weights = f.weights;
  // Holds the kept copy alive until the convolution has read it.
  std::shared_ptr<const Allocation> kept;
  // The weights reordered for this run alone, before a copy is kept.
  std::optional<dnnl::memory> run_weights;
  if (f.weights_in) {
    kept = KeptWeights(f, filter);
    if (kept != nullptr) {
      f.kept_weights.set_data_handle(kept->data());
      weights = f.kept_weights;
    } else {
      run_weights.emplace(f.weights.get_desc(), ThreadCpuEngine());
      f.weights_in->execute(stream, f.user_weights, *run_weights);
      weights = *run_weights;
    }
  }
  // The map's nodes outlive the call: a run allocates none.
  std::unordered_map<int, dnnl::memory>& args = f.args;
  args[DNNL_ARG_SRC] = f.src;
  args[DNNL_ARG_WEIGHTS] = weights;
  args[DNNL_ARG_DST] = f.dst;
  if (bias != nullptr) {
    f.bias.set_data_handle(ReadOnlyHandle(bias->raw_data()));
    args[DNNL_ARG_BIAS] = f.bias;
  }
  f.conv.execute(stream, args);
  if (f.dst_out) f.dst_out->execute(stream, f.dst, f.user_dst);
  stream.wait();
  // Let this run's reordered weights go with it.
  if (run_weights.has_value()) args[DNNL_ARG_WEIGHTS] = f.weights;
  return absl::OkStatus();
}

}  // namespace scopeflow
