#include "operators/quantization/integer_conv.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "operators/common.h"
#include "operators/quantization/integer_matmul.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::StatusOr<ConvWindow> ConvWindowOf(const Attributes& attrs, int spatial) {
  const auto strides = attrs.Get<std::vector<int32_t>>("strides");
  const auto paddings = attrs.Get<std::vector<int32_t>>("paddings");
  const auto dilations = attrs.Get<std::vector<int32_t>>("dilations");
  ConvWindow window;
  window.groups = attrs.Get<int32_t>("groups");
  SF_CHECK(window.groups > 0, "attribute \"groups\" is %d: expected >= 1",
           window.groups);
  SF_CHECK(strides.empty() || static_cast<int>(strides.size()) == spatial,
           "attribute \"strides\" holds %d values: expected %d, one per "
           "spatial axis",
           strides.size(), spatial);
  SF_CHECK(dilations.empty() || static_cast<int>(dilations.size()) == spatial,
           "attribute \"dilations\" holds %d values: expected %d, one per "
           "spatial axis",
           dilations.size(), spatial);
  SF_CHECK(paddings.empty() || static_cast<int>(paddings.size()) == 2 * spatial,
           "attribute \"paddings\" holds %d values: expected %d, before and "
           "after each spatial axis",
           paddings.size(), 2 * spatial);
  for (int i = 0; i < spatial; ++i) {
    window.strides.push_back(strides.empty() ? 1 : strides[i]);
    window.dilations.push_back(dilations.empty() ? 1 : dilations[i]);
    window.pads_before.push_back(paddings.empty() ? 0 : paddings[2 * i]);
    window.pads_after.push_back(paddings.empty() ? 0 : paddings[2 * i + 1]);
    SF_CHECK(window.strides[i] > 0 && window.dilations[i] > 0,
             "attributes \"strides\" and \"dilations\" must be positive");
    SF_CHECK(window.pads_before[i] >= 0 && window.pads_after[i] >= 0,
             "attribute \"paddings\" must not be negative");
  }
  return window;
}

absl::StatusOr<Dims> IntegerConvDims(const Dims& x, const Dims& w,
                                     const ConvWindow& window,
                                     const std::string& describe_x,
                                     const std::string& describe_w) {
  const size_t spatial = window.strides.size();
  SF_CHECK(x.size() == spatial + 2 && w.size() == spatial + 2,
           "%s and %s: expected [N, C, spatial...] and [M, C / groups, "
           "kernel...] of rank %d",
           describe_x, describe_w, spatial + 2);
  SF_CHECK(x[1] < 0 || w[1] < 0 || x[1] == w[1] * window.groups,
           "%s and %s: %d input channels do not match %d per group times "
           "%d groups",
           describe_x, describe_w, x[1], w[1], window.groups);
  SF_CHECK(w[0] < 0 || w[0] % window.groups == 0,
           "%s: %d filters do not divide into %d groups", describe_w, w[0],
           window.groups);
  Dims out = {x[0], w[0]};
  for (size_t i = 0; i < spatial; ++i) {
    if (x[2 + i] < 0 || w[2 + i] < 0) {
      out.push_back(-1);
      continue;
    }
    const int64_t extent = (w[2 + i] - 1) * window.dilations[i] + 1;
    const int64_t padded =
        x[2 + i] + window.pads_before[i] + window.pads_after[i];
    SF_CHECK(padded >= extent,
             "%s and %s: the window (extent %d on spatial axis %d) is larger "
             "than the padded input (%d)",
             describe_x, describe_w, extent, i, padded);
    out.push_back((padded - extent) / window.strides[i] + 1);
  }
  return out;
}

namespace {

// The input offset (within one channel) each (kernel position, output
// position) reads, or -1 where it falls in the padding.
std::vector<int64_t> WindowOffsets(const Dims& in, const Dims& kernel,
                                   const Dims& out, const ConvWindow& window) {
  const size_t spatial = in.size();
  int64_t kernel_count = 1, out_count = 1;
  for (size_t i = 0; i < spatial; ++i) {
    kernel_count *= kernel[i];
    out_count *= out[i];
  }
  const Dims in_strides = StridesOf(in);
  std::vector<int64_t> offsets(kernel_count * out_count);
  std::vector<int64_t> k(spatial), o(spatial);
  for (int64_t kf = 0; kf < kernel_count; ++kf) {
    int64_t rest = kf;
    for (size_t i = spatial; i-- > 0;) {
      k[i] = rest % kernel[i];
      rest /= kernel[i];
    }
    for (int64_t of = 0; of < out_count; ++of) {
      rest = of;
      int64_t offset = 0;
      for (size_t i = spatial; i-- > 0;) {
        o[i] = rest % out[i];
        rest /= out[i];
        const int64_t at = o[i] * window.strides[i] - window.pads_before[i] +
                           k[i] * window.dilations[i];
        if (offset < 0 || at < 0 || at >= in[i]) {
          offset = -1;
        } else {
          offset += at * in_strides[i];
        }
      }
      offsets[kf * out_count + of] = offset;
    }
  }
  return offsets;
}

template <typename X, typename W>
void Convolve(const X* x, const W* w, int32_t x_zero,
              const std::vector<int32_t>& w_zero, const Dims& x_dims,
              const Dims& w_dims, const ConvWindow& window, const Dims& out,
              int32_t* acc) {
  const Dims in_spatial(x_dims.begin() + 2, x_dims.end());
  const Dims kernel(w_dims.begin() + 2, w_dims.end());
  const Dims out_spatial(out.begin() + 2, out.end());
  const std::vector<int64_t> offsets =
      WindowOffsets(in_spatial, kernel, out_spatial, window);
  int64_t in_size = 1, kernel_count = 1, out_count = 1;
  for (int64_t d : in_spatial) in_size *= d;
  for (int64_t d : kernel) kernel_count *= d;
  for (int64_t d : out_spatial) out_count *= d;
  const int64_t batch = x_dims[0], channels = x_dims[1];
  const int64_t filters = w_dims[0], group_in = w_dims[1];
  const int64_t group_out = filters / window.groups;
  const int64_t rows = group_in * kernel_count;
  // Each group's filters transposed to [rows x group_out], the B of the
  // products below, with their zero points.
  std::vector<Tensor> filters_t(window.groups);
  std::vector<std::vector<int32_t>> zeros(window.groups);
  for (int64_t g = 0; g < window.groups; ++g) {
    if (!filters_t[g]
             .Allocate(CPUPlace(), DataTypeOf<W>(), {rows, group_out})
             .ok()) {
      return;
    }
    W* t = filters_t[g].data<W>();
    for (int64_t f = 0; f < group_out; ++f) {
      const W* filter = w + (g * group_out + f) * rows;
      for (int64_t r = 0; r < rows; ++r) t[r * group_out + f] = filter[r];
      zeros[g].push_back(w_zero[g * group_out + f]);
    }
  }
  const IntegerMatmulSizes sizes = IntegerMatmulSizesOf(
      {out_count, rows}, {rows, group_out}, {out_count, group_out});
  const std::vector<int32_t> x_zeros(out_count, x_zero);
  // Per (image, group): the windows as a matrix [out_count x rows] of X's
  // type (padding reads as the zero point, contributing nothing), times the
  // filters: an integer product (IntegerMatmul, oneDNN's where it applies).
  ParallelFor(batch * window.groups, 1, [&](int64_t begin, int64_t end) {
    Tensor windows;
    if (!windows.Allocate(CPUPlace(), DataTypeOf<X>(), {out_count, rows})
             .ok()) {
      return;
    }
    X* columns = windows.data<X>();
    std::vector<int32_t> product(out_count * group_out);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t n = item / window.groups, g = item % window.groups;
      for (int64_t c = 0; c < group_in; ++c) {
        const X* plane = x + (n * channels + g * group_in + c) * in_size;
        for (int64_t kf = 0; kf < kernel_count; ++kf) {
          X* column = columns + c * kernel_count + kf;
          const int64_t* at = &offsets[kf * out_count];
          for (int64_t p = 0; p < out_count; ++p) {
            column[p * rows] =
                at[p] < 0 ? static_cast<X>(x_zero) : plane[at[p]];
          }
        }
      }
      IntegerMatmul(windows, filters_t[g], x_zeros, zeros[g], sizes,
                    product.data());
      for (int64_t f = 0; f < group_out; ++f) {
        int32_t* y = acc + (n * filters + g * group_out + f) * out_count;
        for (int64_t p = 0; p < out_count; ++p) {
          y[p] = product[p * group_out + f];
        }
      }
    }
  });
}

template <typename X>
void ConvolveX(const X* x, const Tensor& w, int32_t x_zero,
               const std::vector<int32_t>& w_zero, const Dims& x_dims,
               const ConvWindow& window, const Dims& out, int32_t* acc) {
  if (w.dtype() == kInt8) {
    Convolve(x, w.data<int8_t>(), x_zero, w_zero, x_dims, w.dims(), window, out,
             acc);
  } else {
    Convolve(x, w.data<uint8_t>(), x_zero, w_zero, x_dims, w.dims(), window,
             out, acc);
  }
}

}  // namespace

void IntegerConv(const Tensor& x, const Tensor& w, int32_t x_zero,
                 const std::vector<int32_t>& w_zero, const ConvWindow& window,
                 const Dims& out, int32_t* acc) {
  if (x.dtype() == kInt8) {
    ConvolveX(x.data<int8_t>(), w, x_zero, w_zero, x.dims(), window, out, acc);
  } else {
    ConvolveX(x.data<uint8_t>(), w, x_zero, w_zero, x.dims(), window, out, acc);
  }
}

}  // namespace scopeflow
