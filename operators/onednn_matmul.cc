#include "operators/onednn_matmul.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dnnl.hpp"
#include "operators/nn/onednn.h"
#include "platform/mutex.h"
#include "platform/parallel.h"

namespace scopeflow {
namespace {

using dnnl::memory;

// A primitive ready to run one shape, with the descriptions of the memory
// it reads and writes. Immutable once made: threads share it.
struct MatmulPrimitive {
  dnnl::matmul matmul;
  memory::desc a, b, c, scratchpad;
};

// oneDNN wants every operand of one rank: `dims` with leading 1s to `rank`.
memory::dims Padded(const Dims& dims, size_t rank) {
  memory::dims padded(rank - dims.size(), 1);
  padded.insert(padded.end(), dims.begin(), dims.end());
  return padded;
}

// A row-major operand stored with dims `stored`, described as op(operand):
// with its last two dims and their strides swapped when `transpose`, so
// that oneDNN reads the transpose in place.
memory::desc OperandDesc(memory::dims stored, bool transpose) {
  const size_t rank = stored.size();
  memory::dims strides(rank);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    strides[d] = stride;
    stride *= stored[d];
  }
  if (transpose) {
    std::swap(stored[rank - 1], stored[rank - 2]);
    std::swap(strides[rank - 1], strides[rank - 2]);
  }
  return memory::desc(stored, memory::data_type::f32, strides);
}

int64_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// What tells one primitive from another: the padded dims of A, B and C,
// the transpose flags, alpha, beta and the threads.
using Key = std::vector<int64_t>;

Key KeyOf(const memory::dims& a, const memory::dims& b, const memory::dims& c,
          const BatchedGemmShape& shape, float alpha, float beta,
          int threads) {
  Key key;
  key.reserve(3 * c.size() + 4);
  key.insert(key.end(), a.begin(), a.end());
  key.insert(key.end(), b.begin(), b.end());
  key.insert(key.end(), c.begin(), c.end());
  key.push_back(int64_t{shape.transpose_a} << 1 | int64_t{shape.transpose_b});
  key.push_back(FloatBits(alpha));
  key.push_back(FloatBits(beta));
  key.push_back(threads);
  return key;
}

// alpha as oneDNN's output scale and beta as a sum post-op (C's old
// contents scaled and added), each only where it does something; the
// scratchpad the caller's, so that no two runs share oneDNN's.
std::shared_ptr<const MatmulPrimitive> MakePrimitive(const memory::dims& a,
                                                     const memory::dims& b,
                                                     const memory::dims& c,
                                                     const BatchedGemmShape& s,
                                                     float alpha, float beta) {
  auto made = std::make_shared<MatmulPrimitive>();
  made->a = OperandDesc(a, s.transpose_a);
  made->b = OperandDesc(b, s.transpose_b);
  made->c = OperandDesc(c, false);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops sum;
    sum.append_sum(beta);
    attr.set_post_ops(sum);
  }
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(made->a, made->b, made->c), attr, SharedCpuEngine());
  made->scratchpad = pd.scratchpad_desc();
  made->matmul = dnnl::matmul(pd);
  return made;
}

// One shape's entry in the cache: its primitive, made by the first thread
// to ask for it while any others asking wait (oneDNN's own cache would
// make it once too, but hands it between threads by synchronisation that
// ThreadSanitizer cannot see in the uninstrumented library).
struct Slot {
  Mutex mutex;
  bool made ABSL_GUARDED_BY(mutex) = false;
  // Null where oneDNN has no implementation.
  std::shared_ptr<const MatmulPrimitive> primitive ABSL_GUARDED_BY(mutex);
};

// The slots of the shapes asked for so far, by Key. Thread-safe. Bounded,
// because shapes may vary without end: a full cache is emptied (simpler
// than an LRU and rare in practice); a thread still using a slot or a
// primitive keeps it alive through its shared_ptr.
class MatmulPrimitiveCache {
 public:
  static MatmulPrimitiveCache& Get() {
    static MatmulPrimitiveCache* const cache = new MatmulPrimitiveCache;
    return *cache;
  }

  std::shared_ptr<Slot> SlotFor(const Key& key) {
    {
      ReaderMutexLock lock(&mutex_);
      auto it = slots_.find(key);
      if (it != slots_.end()) return it->second;
    }
    constexpr size_t kMaxEntries = 256;
    MutexLock lock(&mutex_);
    if (slots_.size() >= kMaxEntries && !slots_.contains(key)) slots_.clear();
    auto [it, added] = slots_.try_emplace(key, nullptr);
    if (added) it->second = std::make_shared<Slot>();
    return it->second;
  }

 private:
  Mutex mutex_;
  absl::flat_hash_map<Key, std::shared_ptr<Slot>> slots_
      ABSL_GUARDED_BY(mutex_);
};

// The primitive for these operands, from the cache or made and kept
// there; null where oneDNN has no implementation. Threads wait for each
// other only while making the same shape's primitive.
std::shared_ptr<const MatmulPrimitive> PrimitiveFor(
    const memory::dims& a, const memory::dims& b, const memory::dims& c,
    const BatchedGemmShape& shape, float alpha, float beta, int threads) {
  const std::shared_ptr<Slot> slot = MatmulPrimitiveCache::Get().SlotFor(
      KeyOf(a, b, c, shape, alpha, beta, threads));
  {
    ReaderMutexLock lock(&slot->mutex);
    if (slot->made) return slot->primitive;
  }
  MutexLock lock(&slot->mutex);
  if (!slot->made) {
    try {
      slot->primitive = MakePrimitive(a, b, c, shape, alpha, beta);
    } catch (const dnnl::error& e) {
      // Any other failure is not the shape's: the next run tries again.
      if (e.status != dnnl_unimplemented) throw;
    }
    slot->made = true;
  }
  return slot->primitive;
}

// The calling thread's scratch buffer of at least `size` bytes, aligned
// for any vector: a run's scratchpad, reused by the thread's next run.
void* ThreadScratchpad(size_t size) {
  constexpr size_t kAlignment = 64;
  thread_local std::vector<char> buffer;
  if (buffer.size() < size + kAlignment) buffer.resize(size + kAlignment);
  void* data = buffer.data();
  size_t space = buffer.size();
  return std::align(kAlignment, size, data, space);
}

}  // namespace

absl::Status OneDnnBatchedMatmul(const BatchedGemmShape& shape, float alpha,
                                 const float* a, const float* b, float beta,
                                 float* c, int threads) {
  // oneDNN reads the limit when it makes a primitive and when it runs one.
  const ScopedMaxThreads limit(threads);
  return RunOneDnn("matmul", [&]() -> absl::Status {
    const size_t rank = shape.c.size();
    const memory::dims a_dims = Padded(shape.a, rank);
    const memory::dims b_dims = Padded(shape.b, rank);
    const memory::dims c_dims = Padded(shape.c, rank);
    const std::shared_ptr<const MatmulPrimitive> p =
        PrimitiveFor(a_dims, b_dims, c_dims, shape, alpha, beta, threads);
    if (p == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          "oneDNN has no matmul for [", absl::StrJoin(shape.a, ", "), "]",
          shape.transpose_a ? "^T" : "", " x [", absl::StrJoin(shape.b, ", "),
          "]", shape.transpose_b ? "^T" : "", " on this CPU"));
    }
    const dnnl::engine& engine = SharedCpuEngine();
    dnnl::stream& stream = SharedCpuEngineStream();
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, memory(p->a, engine, ReadOnlyHandle(a))},
        {DNNL_ARG_WEIGHTS, memory(p->b, engine, ReadOnlyHandle(b))},
        {DNNL_ARG_DST, memory(p->c, engine, c)}};
    const size_t scratchpad_size = p->scratchpad.get_size();
    if (scratchpad_size > 0) {
      args.emplace(DNNL_ARG_SCRATCHPAD,
                   memory(p->scratchpad, engine,
                          ThreadScratchpad(scratchpad_size)));
    }
    p->matmul.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  });
}

}  // namespace scopeflow
