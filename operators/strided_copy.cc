#include "operators/strided_copy.h"

#include <cstring>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "platform/parallel.h"

namespace scopeflow {
namespace {

// Copies `n` elements of N bytes `dst_stride` / `src_stride` elements apart.
// N is a constant so that each element moves as one load and one store.
template <size_t N>
void CopyRow(char* dst, int64_t dst_stride, const char* src, int64_t src_stride,
             int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * dst_stride * static_cast<int64_t>(N),
                src + i * src_stride * static_cast<int64_t>(N), N);
  }
}

void CopyRowAnySize(char* dst, int64_t dst_stride, const char* src,
                    int64_t src_stride, int64_t n, size_t size) {
  const int64_t bytes = static_cast<int64_t>(size);
  if (dst_stride == 1 && src_stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * size);
    return;
  }
  switch (size) {
    case 1:
      return CopyRow<1>(dst, dst_stride, src, src_stride, n);
    case 2:
      return CopyRow<2>(dst, dst_stride, src, src_stride, n);
    case 4:
      return CopyRow<4>(dst, dst_stride, src, src_stride, n);
    case 8:
      return CopyRow<8>(dst, dst_stride, src, src_stride, n);
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + i * dst_stride * bytes, src + i * src_stride * bytes,
                    size);
      }
  }
}

// Any order of a box's dimensions copies the same elements. A short
// innermost row (an image's 3 channels moved last) costs a call per few
// elements, so a long dimension that is contiguous on one side takes its
// place: the copy then reads (or writes) long runs of neighbours and makes
// a call per run.
void LengthenInnerRow(MergedBox& box) {
  constexpr int64_t kShortRow = 8;
  auto& d = box.dims;
  const int inner = static_cast<int>(d.size()) - 1;
  if (inner < 1 || d[inner] >= kShortRow) return;
  int longest = -1;
  for (int k = 0; k < inner; ++k) {
    const bool contiguous = box.dst_strides[k] == 1 || box.src_strides[k] == 1;
    if (contiguous && d[k] >= kShortRow * d[inner] &&
        (longest < 0 || d[k] > d[longest])) {
      longest = k;
    }
  }
  if (longest < 0) return;
  std::swap(d[longest], d[inner]);
  std::swap(box.dst_strides[longest], box.dst_strides[inner]);
  std::swap(box.src_strides[longest], box.src_strides[inner]);
}

}  // namespace

std::optional<MergedBox> MergeBox(absl::Span<const int64_t> dims,
                                  absl::Span<const int64_t> dst_strides,
                                  absl::Span<const int64_t> src_strides) {
  MergedBox box;
  auto& d = box.dims;
  auto& ds = box.dst_strides;
  auto& ss = box.src_strides;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 0) return std::nullopt;
    if (dims[k] == 1) continue;
    if (!d.empty() && ds.back() == dst_strides[k] * dims[k] &&
        ss.back() == src_strides[k] * dims[k]) {
      d.back() *= dims[k];
      ds.back() = dst_strides[k];
      ss.back() = src_strides[k];
      continue;
    }
    d.push_back(dims[k]);
    ds.push_back(dst_strides[k]);
    ss.push_back(src_strides[k]);
  }
  return box;
}

void CopyStrided(void* dst, absl::Span<const int64_t> dst_strides,
                 const void* src, absl::Span<const int64_t> src_strides,
                 absl::Span<const int64_t> dims, size_t element_size) {
  std::optional<MergedBox> box = MergeBox(dims, dst_strides, src_strides);
  if (!box.has_value()) return;
  LengthenInnerRow(*box);
  const auto& d = box->dims;
  const auto& ds = box->dst_strides;
  const auto& ss = box->src_strides;
  char* const dst_bytes = static_cast<char*>(dst);
  const char* const src_bytes = static_cast<const char*>(src);
  if (d.empty()) {
    std::memcpy(dst_bytes, src_bytes, element_size);
    return;
  }
  const int inner = static_cast<int>(d.size()) - 1;
  const int64_t bytes = static_cast<int64_t>(element_size);
  // The outermost dimension's indices [begin, end): an odometer over the
  // outer dimensions, with the element offsets it points at, copying a
  // row of the innermost one at each step.
  auto copy_outer = [&](int64_t begin, int64_t end) {
    if (inner == 0) {
      CopyRowAnySize(dst_bytes + begin * ds[0] * bytes, ds[0],
                     src_bytes + begin * ss[0] * bytes, ss[0], end - begin,
                     element_size);
      return;
    }
    absl::InlinedVector<int64_t, 8> index(inner, 0);
    index[0] = begin;
    int64_t dst_offset = begin * ds[0], src_offset = begin * ss[0];
    while (true) {
      CopyRowAnySize(dst_bytes + dst_offset * bytes, ds[inner],
                     src_bytes + src_offset * bytes, ss[inner], d[inner],
                     element_size);
      int k = inner - 1;
      for (; k >= 0; --k) {
        dst_offset += ds[k];
        src_offset += ss[k];
        if (++index[k] < (k == 0 ? end : d[k])) break;
        if (k == 0) return;
        dst_offset -= ds[k] * d[k];
        src_offset -= ss[k] * d[k];
        index[k] = 0;
      }
    }
  };
  // Large copies spread their outermost indices over threads: the
  // destination ranges they write are disjoint.
  constexpr int64_t kBytesWorthAThread = int64_t{1} << 17;
  int64_t bytes_per_outer = bytes;
  for (int k = 1; k <= inner; ++k) bytes_per_outer *= d[k];
  ParallelFor(d[0],
              (kBytesWorthAThread + bytes_per_outer - 1) / bytes_per_outer,
              copy_outer);
}

}  // namespace scopeflow
