#include "operators/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

// The tiles a transpose moves: kTile x kTile elements, read as kTile runs
// of kTile neighbours and written so, where copying element by element
// reads (or writes) one element per cache line on one side.
constexpr int64_t kTile = 8;

// One full tile of 4-byte elements: dst[i * dst_stride + j] =
// src[i + j * src_stride] for i, j < kTile.
void TransposeTileScalar(float* dst, int64_t dst_stride, const float* src,
                         int64_t src_stride) {
  for (int64_t i = 0; i < kTile; ++i) {
    for (int64_t j = 0; j < kTile; ++j) {
      dst[i * dst_stride + j] = src[i + j * src_stride];
    }
  }
}

#if defined(__x86_64__)
// The same in eight AVX registers: the classic 8 x 8 transpose by
// unpacking pairs, then quads, then swapping 128-bit halves. Bits move
// unchanged (float shuffles never touch the values, NaNs included).
__attribute__((target("avx"))) void TransposeTileAvx(float* dst,
                                                     int64_t dst_stride,
                                                     const float* src,
                                                     int64_t src_stride) {
  __m256 r[8];
  for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(src + j * src_stride);
  __m256 t[8];
  for (int j = 0; j < 8; j += 2) {
    t[j] = _mm256_unpacklo_ps(r[j], r[j + 1]);
    t[j + 1] = _mm256_unpackhi_ps(r[j], r[j + 1]);
  }
  __m256 u[8];
  for (int j = 0; j < 8; j += 4) {
    u[j] = _mm256_shuffle_ps(t[j], t[j + 2], 0x44);
    u[j + 1] = _mm256_shuffle_ps(t[j], t[j + 2], 0xee);
    u[j + 2] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0x44);
    u[j + 3] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * dst_stride,
                     _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * dst_stride,
                     _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
  }
}
#endif

using TileFn = void (*)(float*, int64_t, const float*, int64_t);

TileFn TransposeTileForThisCpu() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx")) return &TransposeTileAvx;
#endif
  return &TransposeTileScalar;
}

// dst[i * dst_stride + j] = src[i + j * src_stride] for rows [row_begin,
// row_end) and columns [0, cols), 4-byte elements (moved as floats: the
// copies keep every bit).
void TransposeRows4(float* dst, int64_t dst_stride, const float* src,
                    int64_t src_stride, int64_t row_begin, int64_t row_end,
                    int64_t cols) {
  static const TileFn tile = TransposeTileForThisCpu();
  for (int64_t i0 = row_begin; i0 < row_end; i0 += kTile) {
    const int64_t i_end = std::min(row_end, i0 + kTile);
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t j_end = std::min(cols, j0 + kTile);
      if (i_end - i0 == kTile && j_end - j0 == kTile) {
        tile(dst + i0 * dst_stride + j0, dst_stride, src + i0 + j0 * src_stride,
             src_stride);
        continue;
      }
      for (int64_t i = i0; i < i_end; ++i) {
        for (int64_t j = j0; j < j_end; ++j) {
          std::memcpy(dst + i * dst_stride + j, src + i + j * src_stride, 4);
        }
      }
    }
  }
}

// The two dims of `box` a transpose swaps, if it is one worth tiling: `row`
// contiguous in the source, `col` in the destination, both at least a
// tile long (shorter ones copy faster by LengthenInnerRow's rows).
std::optional<std::pair<int, int>> TransposedPair(const MergedBox& box) {
  int row = -1, col = -1;
  for (int k = 0; k < static_cast<int>(box.dims.size()); ++k) {
    if (box.src_strides[k] == 1 && box.dst_strides[k] != 1) row = k;
    if (box.dst_strides[k] == 1 && box.src_strides[k] != 1) col = k;
  }
  if (row < 0 || col < 0 || box.dims[row] < kTile || box.dims[col] < kTile) {
    return std::nullopt;
  }
  return std::make_pair(row, col);
}

// Copies `box` of 4-byte elements, whose dims `row` and `col` a transpose
// swaps, tile by tile; the other dims (and blocks of rows, on several
// threads) outside.
void CopyTransposed4(char* dst, const char* src, const MergedBox& box, int row,
                     int col) {
  absl::InlinedVector<int64_t, 8> outer_dims, outer_dst, outer_src;
  for (int k = 0; k < static_cast<int>(box.dims.size()); ++k) {
    if (k == row || k == col) continue;
    outer_dims.push_back(box.dims[k]);
    outer_dst.push_back(box.dst_strides[k]);
    outer_src.push_back(box.src_strides[k]);
  }
  int64_t outer_count = 1;
  for (int64_t d : outer_dims) outer_count *= d;
  const int64_t rows = box.dims[row], cols = box.dims[col];
  const int64_t row_blocks = (rows + kTile - 1) / kTile;
  auto* const dst_floats = reinterpret_cast<float*>(dst);
  const auto* const src_floats = reinterpret_cast<const float*>(src);
  constexpr int64_t kBytesWorthAThread = int64_t{1} << 17;
  const int64_t block_bytes = kTile * cols * 4;
  ParallelFor(outer_count * row_blocks,
              (kBytesWorthAThread + block_bytes - 1) / block_bytes,
              [&](int64_t begin, int64_t end) {
                for (int64_t unit = begin; unit < end; ++unit) {
                  int64_t outer = unit / row_blocks;
                  const int64_t block = unit % row_blocks;
                  int64_t dst_offset = 0, src_offset = 0;
                  for (int k = static_cast<int>(outer_dims.size()) - 1; k >= 0;
                       --k) {
                    const int64_t index = outer % outer_dims[k];
                    outer /= outer_dims[k];
                    dst_offset += index * outer_dst[k];
                    src_offset += index * outer_src[k];
                  }
                  TransposeRows4(dst_floats + dst_offset, box.dst_strides[row],
                                 src_floats + src_offset, box.src_strides[col],
                                 block * kTile,
                                 std::min(rows, (block + 1) * kTile), cols);
                }
              });
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
  if (element_size == 4) {
    if (const auto pair = TransposedPair(*box)) {
      CopyTransposed4(static_cast<char*>(dst), static_cast<const char*>(src),
                      *box, pair->first, pair->second);
      return;
    }
  }
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
