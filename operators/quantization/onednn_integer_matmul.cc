#include "operators/quantization/onednn_integer_matmul.h"

#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "dnnl.hpp"
#include "operators/nn/onednn.h"
#include "platform/parallel.h"

namespace scopeflow {
namespace {

using dnnl::memory;

struct Primitive {
  dnnl::matmul matmul;
  memory::desc a, b, c, scratchpad;
};

// How the product maps onto oneDNN's: [batch, m, k] x [1 or batch, k, n].
struct Layout {
  int64_t a_batch = 1, b_batch = 1;
};

// The layout, or false where the batches are not one of the two oneDNN
// takes here (A's batch in order against one B or against B's in order).
bool LayoutOf(const IntegerMatmulSizes& sizes, Layout& layout) {
  bool a_in_order = true, b_in_order = true, b_single = true;
  for (int64_t i = 0; i < sizes.batches; ++i) {
    a_in_order = a_in_order && sizes.a_batch[i] == i;
    b_in_order = b_in_order && sizes.b_batch[i] == i;
    b_single = b_single && sizes.b_batch[i] == 0;
  }
  if (!a_in_order || !(b_single || b_in_order)) return false;
  layout.a_batch = sizes.batches;
  layout.b_batch = b_single ? 1 : sizes.batches;
  return true;
}

std::shared_ptr<Primitive> Make(const IntegerMatmulSizes& s,
                                const Layout& layout, memory::data_type a_type,
                                bool a_zero, bool b_zero) {
  auto made = std::make_shared<Primitive>();
  // One B against the whole batch: A's rows folded into one product.
  const bool fold = layout.b_batch == 1;
  const int64_t rows = fold ? layout.a_batch * s.m : s.m;
  const int64_t batch = fold ? 1 : layout.a_batch;
  made->a = memory::desc({batch, rows, s.k}, a_type, memory::format_tag::abc);
  made->b = memory::desc({layout.b_batch, s.k, s.n}, memory::data_type::s8,
                         memory::format_tag::abc);
  made->c = memory::desc({batch, rows, s.n}, memory::data_type::s32,
                         memory::format_tag::abc);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (a_zero) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (b_zero) attr.set_zero_points(DNNL_ARG_WEIGHTS, 0, {DNNL_RUNTIME_S32_VAL});
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(made->a, made->b, made->c), attr, ThreadCpuEngine());
  made->scratchpad = pd.scratchpad_desc();
  made->matmul = dnnl::matmul(pd);
  return made;
}

// The calling thread's primitives by shape, types, zero points and
// threads; null entries remember shapes oneDNN has no implementation for.
// Bounded: a full cache is emptied.
std::shared_ptr<Primitive> PrimitiveFor(const IntegerMatmulSizes& s,
                                        const Layout& layout,
                                        memory::data_type a_type, bool a_zero,
                                        bool b_zero, int threads) {
  thread_local absl::flat_hash_map<std::vector<int64_t>,
                                   std::shared_ptr<Primitive>>
      cache;
  const std::vector<int64_t> key = {layout.a_batch,
                                    layout.b_batch,
                                    s.m,
                                    s.k,
                                    s.n,
                                    static_cast<int64_t>(a_type),
                                    a_zero,
                                    b_zero,
                                    threads};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 64) cache.clear();
  std::shared_ptr<Primitive> made;
  try {
    made = Make(s, layout, a_type, a_zero, b_zero);
  } catch (const dnnl::error& e) {
    if (e.status != dnnl_unimplemented) throw;
  }
  cache[key] = made;
  return made;
}

void* ThreadScratchpad(size_t size) {
  constexpr size_t kAlignment = 64;
  thread_local std::vector<char> buffer;
  if (buffer.size() < size + kAlignment) buffer.resize(size + kAlignment);
  void* data = buffer.data();
  size_t space = buffer.size();
  return std::align(kAlignment, size, data, space);
}

}  // namespace

absl::Status OneDnnIntegerMatmul(const Tensor& a, const Tensor& b,
                                 int32_t a_zero, int32_t b_zero,
                                 const IntegerMatmulSizes& sizes,
                                 int32_t* acc) {
  Layout layout;
  if (b.dtype() != kInt8 || !LayoutOf(sizes, layout) || sizes.m == 0 ||
      sizes.k == 0 || sizes.n == 0) {
    return absl::UnimplementedError("oneDNN's int8 matmul takes int8 B");
  }
  const memory::data_type a_type =
      a.dtype() == kInt8 ? memory::data_type::s8 : memory::data_type::u8;
  const int threads = MaxParallelThreads();
  return RunOneDnn("int8 matmul", [&]() -> absl::Status {
    const std::shared_ptr<Primitive> p =
        PrimitiveFor(sizes, layout, a_type, a_zero != 0, b_zero != 0, threads);
    if (p == nullptr) {
      return absl::UnimplementedError(
          "oneDNN has no int8 matmul for this shape on this CPU");
    }
    const dnnl::engine& engine = ThreadCpuEngine();
    dnnl::stream& stream = ThreadCpuStream();
    const memory::desc zero_desc({1}, memory::data_type::s32,
                                 memory::format_tag::a);
    int32_t a_zero_value = a_zero, b_zero_value = b_zero;
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, memory(p->a, engine, ReadOnlyHandle(a.raw_data()))},
        {DNNL_ARG_WEIGHTS, memory(p->b, engine, ReadOnlyHandle(b.raw_data()))},
        {DNNL_ARG_DST, memory(p->c, engine, acc)}};
    if (a_zero != 0) {
      args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC,
                   memory(zero_desc, engine, &a_zero_value));
    }
    if (b_zero != 0) {
      args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_WEIGHTS,
                   memory(zero_desc, engine, &b_zero_value));
    }
    const size_t scratchpad_size = p->scratchpad.get_size();
    if (scratchpad_size > 0) {
      args.emplace(
          DNNL_ARG_SCRATCHPAD,
          memory(p->scratchpad, engine, ThreadScratchpad(scratchpad_size)));
    }
    p->matmul.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  });
}

}  // namespace scopeflow
