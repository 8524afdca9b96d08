#include "operators/nn/conv_onednn.h"

#include "absl/strings/match.h"

namespace scopeflow {
namespace {

dnnl::memory::format_tag TagOf(ImageFormat format) {
  using Tag = dnnl::memory::format_tag;
  switch (format) {
    case ImageFormat::kNchw8c:
      return Tag::nChw8c;
    case ImageFormat::kNchw16c:
      return Tag::nChw16c;
    case ImageFormat::kNhwc:
      return Tag::nhwc;
    case ImageFormat::kNchw:
      break;
  }
  return Tag::nchw;
}

// The src (and diff_src) and dst (and diff_dst) layouts to ask a primitive
// of `algorithm` for: Winograd's kernels run on their own layouts only.
struct DataLayouts {
  dnnl::memory::desc src, dst;
};

DataLayouts LayoutsFor(const OneDnnConv& c, dnnl::algorithm algorithm) {
  if (algorithm == dnnl::algorithm::convolution_winograd) {
    return {AnyLayout(c.src), AnyLayout(c.dst)};
  }
  return {c.src_want, c.dst_want};
}

// Whether `c`'s direct primitives run on NHWC activations, which oneDNN's
// AVX-512 direct kernels take as they are, as fast as their own 16-channel
// blocks, while Winograd's reorders them to and from those blocks. NCHW
// direct reorders too, as Winograd's kernels do; NCHW8c's 8-channel blocks
// only its AVX2 kernels take, at half the vector width; NCHW16c's are the
// AVX-512 kernels' own, direct's and Winograd's alike, so neither
// reorders and Winograd's saved multiplications are all gain.
bool DirectRunsOnNhwc(const OneDnnConv& c) {
  const dnnl::memory::desc nhwc(c.dst, dnnl::memory::data_type::f32,
                                dnnl::memory::format_tag::nhwc);
  return c.dst_want == nhwc;
}

// What `make` returns for Winograd's algorithm where WinogradPays and
// oneDNN has it for this CPU and these shapes, else for the direct one.
// oneDNN says it has no implementation by throwing when the primitive
// descriptor is made, so trying is how to find out.
template <typename Make>
auto WinogradWherePays(const OneDnnConv& c, const Make& make)
    -> decltype(make(c, dnnl::algorithm::convolution_direct)) {
  if (WinogradPays(c)) {
    try {
      return make(c, dnnl::algorithm::convolution_winograd);
    } catch (const dnnl::error&) {
      // No Winograd kernel on this CPU (or for these paddings): direct.
    }
  }
  return make(c, dnnl::algorithm::convolution_direct);
}

// Whether `pd` is oneDNN's reference implementation: a plain loop, 100 to
// 1000 times slower than its JIT kernels.
bool IsReference(const dnnl::primitive_desc_base& pd) {
  return absl::StartsWith(pd.impl_info_str(), "ref");
}

// WinogradWherePays's primitive, unless only oneDNN's reference kernel
// takes our layouts (a blocked op's NCHW Input of more channels than the
// first-convolution kernels read, say): then the primitive on the layouts
// oneDNN chooses, which the callers reorder to and from.
template <typename Make>
auto FastestOnAnyLayout(const OneDnnConv& c, const Make& make)
    -> decltype(make(c, dnnl::algorithm::convolution_direct)) {
  auto pd = WinogradWherePays(c, make);
  if (!IsReference(pd)) return pd;
  OneDnnConv chosen_by_onednn = c;
  chosen_by_onednn.src_want = AnyLayout(c.src);
  chosen_by_onednn.dst_want = AnyLayout(c.dst);
  auto reordered = WinogradWherePays(chosen_by_onednn, make);
  return IsReference(reordered) ? pd : reordered;
}

// The forward-training primitive the backward ones of `algorithm` are
// chosen to match: oneDNN picks backward implementations by it.
dnnl::convolution_forward::primitive_desc TrainingHint(
    const OneDnnConv& c, dnnl::algorithm algorithm,
    const dnnl::engine& engine) {
  const DataLayouts l = LayoutsFor(c, algorithm);
  return dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_training, algorithm, l.src,
          AnyLayout(c.weights), l.dst, c.strides, c.dilates, c.pad_l, c.pad_r),
      engine);
}

// The primitive of backward pass `Pass` (convolution_backward_data or
// convolution_backward_weights, whose descriptors take the same arguments:
// src or diff_src, weights or diff_weights, dst or diff_dst) of
// `algorithm` for `c`, chosen to match TrainingHint.
template <typename Pass>
typename Pass::primitive_desc BackwardPrimitiveOf(const OneDnnConv& c,
                                                  dnnl::algorithm algorithm,
                                                  const dnnl::engine& engine) {
  const DataLayouts l = LayoutsFor(c, algorithm);
  return typename Pass::primitive_desc(
      typename Pass::desc(algorithm, l.src, AnyLayout(c.weights), l.dst,
                          c.strides, c.dilates, c.pad_l, c.pad_r),
      engine, TrainingHint(c, algorithm, engine));
}

}  // namespace

dnnl::memory::desc AnyLayout(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::any);
}

OneDnnConv DescribeConv(const Conv2dAttrs& a, const Dims& input,
                        ImageFormat input_format, const Dims& filter,
                        const Dims& output, ImageFormat output_format) {
  using dnnl::memory;
  using Tag = memory::format_tag;
  OneDnnConv c;
  c.src = memory::dims(input.begin(), input.end());
  c.dst = memory::dims(output.begin(), output.end());
  const int64_t g = a.groups;
  c.weights =
      g == 1 ? memory::dims(filter.begin(), filter.end())
             : memory::dims{g, filter[0] / g, filter[1], filter[2], filter[3]};
  c.strides = {a.strides[0], a.strides[1]};
  // oneDNN counts dilation from 0: 0 is a dense filter.
  c.dilates = {a.dilations[0] - 1, a.dilations[1] - 1};
  c.pad_l = {a.padding.top, a.padding.left};
  c.pad_r = {a.padding.bottom, a.padding.right};
  c.src_md = memory::desc(c.src, memory::data_type::f32, TagOf(input_format));
  c.weights_md = memory::desc(c.weights, memory::data_type::f32,
                              g == 1 ? Tag::oihw : Tag::goihw);
  c.dst_md = memory::desc(c.dst, memory::data_type::f32, TagOf(output_format));
  const bool ours = a.format != ImageFormat::kNchw;
  c.src_want = ours ? c.src_md : AnyLayout(c.src);
  c.dst_want = ours ? c.dst_md : AnyLayout(c.dst);
  return c;
}

bool WinogradPays(const OneDnnConv& c) {
  const bool one_group = c.weights.size() == 4;
  return one_group && c.weights[2] == 3 && c.weights[3] == 3 &&
         c.strides == dnnl::memory::dims{1, 1} &&
         c.dilates == dnnl::memory::dims{0, 0} && c.src[1] >= 32 &&
         // NCHW, NCHW8c and NCHW16c from 32 output channels.
         c.dst[1] >= (DirectRunsOnNhwc(c) ? 64 : 32);
}

dnnl::convolution_forward::primitive_desc ForwardPrimitiveOf(
    const OneDnnConv& c, dnnl::algorithm algorithm, bool has_bias,
    const ConvEpilogue& epilogue, const dnnl::engine& engine) {
  using dnnl::memory;
  const DataLayouts l = LayoutsFor(c, algorithm);
  const auto prop = dnnl::prop_kind::forward_inference;
  const memory::desc bias_md({c.dst[1]}, memory::data_type::f32,
                             memory::format_tag::x);
  // The residual's sum and the activation as post-ops: applied to each
  // output block while it is still in cache, instead of in more passes over
  // the whole output.
  dnnl::primitive_attr attr;
  if (!epilogue.empty()) attr.set_post_ops(PostOpsOf(epilogue));
  return dnnl::convolution_forward::primitive_desc(
      has_bias ? dnnl::convolution_forward::desc(
                     prop, algorithm, l.src, AnyLayout(c.weights), bias_md,
                     l.dst, c.strides, c.dilates, c.pad_l, c.pad_r)
               : dnnl::convolution_forward::desc(
                     prop, algorithm, l.src, AnyLayout(c.weights), l.dst,
                     c.strides, c.dilates, c.pad_l, c.pad_r),
      attr, engine);
}

dnnl::convolution_forward::primitive_desc ForwardPrimitive(
    const OneDnnConv& c, bool has_bias, const ConvEpilogue& epilogue,
    const dnnl::engine& engine) {
  return FastestOnAnyLayout(
      c, [&](const OneDnnConv& layouts, dnnl::algorithm algorithm) {
        return ForwardPrimitiveOf(layouts, algorithm, has_bias, epilogue,
                                  engine);
      });
}

dnnl::convolution_backward_data::primitive_desc BackwardDataPrimitiveOf(
    const OneDnnConv& c, dnnl::algorithm algorithm,
    const dnnl::engine& engine) {
  return BackwardPrimitiveOf<dnnl::convolution_backward_data>(c, algorithm,
                                                              engine);
}

dnnl::convolution_backward_weights::primitive_desc BackwardWeightsPrimitiveOf(
    const OneDnnConv& c, dnnl::algorithm algorithm,
    const dnnl::engine& engine) {
  return BackwardPrimitiveOf<dnnl::convolution_backward_weights>(c, algorithm,
                                                                 engine);
}

dnnl::convolution_backward_data::primitive_desc BackwardDataPrimitive(
    const OneDnnConv& c, const dnnl::engine& engine) {
  return FastestOnAnyLayout(
      c, [&](const OneDnnConv& layouts, dnnl::algorithm algorithm) {
        return BackwardDataPrimitiveOf(layouts, algorithm, engine);
      });
}

dnnl::convolution_backward_weights::primitive_desc BackwardWeightsPrimitive(
    const OneDnnConv& c, const dnnl::engine& engine) {
  return FastestOnAnyLayout(
      c, [&](const OneDnnConv& layouts, dnnl::algorithm algorithm) {
        return BackwardWeightsPrimitiveOf(layouts, algorithm, engine);
      });
}

}  // namespace scopeflow
