#include "operators/nn/conv_onednn.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace scopeflow {
namespace {

// A convolution of `in` -> `out` channels on 1 x in x 16 x 16 images in
// `format` with a k x k filter, padding k / 2.
OneDnnConv DescribeIn(ImageFormat format, int64_t in, int64_t out, int64_t k,
                      int64_t stride = 1, int64_t dilation = 1,
                      int64_t groups = 1) {
  Conv2dAttrs a;
  a.strides = {stride, stride};
  a.dilations = {dilation, dilation};
  a.padding = {k / 2, k / 2, k / 2, k / 2};
  a.groups = groups;
  a.format = format;
  const int64_t size = (16 + 2 * (k / 2) - dilation * (k - 1) - 1) / stride + 1;
  return DescribeConv(a, {1, in, 16, 16}, format, {out, in / groups, k, k},
                      {1, out, size, size}, format);
}

// The same on NHWC images.
OneDnnConv Describe(int64_t in, int64_t out, int64_t k, int64_t stride = 1,
                    int64_t dilation = 1, int64_t groups = 1) {
  return DescribeIn(ImageFormat::kNhwc, in, out, k, stride, dilation, groups);
}

TEST(WinogradPaysTest, ThreeByThreeOfStrideOneFromThirtyTwoChannelsUp) {
  EXPECT_TRUE(WinogradPays(Describe(32, 64, 3)));
  EXPECT_TRUE(WinogradPays(Describe(64, 64, 3)));
  EXPECT_TRUE(WinogradPays(Describe(256, 512, 3)));
}

// Where direct reorders NCHW to and from its blocks too, runs on NCHW8c
// with AVX2's kernels, or on NCHW16c, where Winograd's needs no reorders,
// 32 output channels suffice.
TEST(WinogradPaysTest, FromThirtyTwoOutputChannelsOffNhwc) {
  for (ImageFormat format :
       {ImageFormat::kNchw, ImageFormat::kNchw8c, ImageFormat::kNchw16c}) {
    SCOPED_TRACE(ImageFormatName(format));
    EXPECT_TRUE(WinogradPays(DescribeIn(format, 32, 32, 3)));
    EXPECT_TRUE(WinogradPays(DescribeIn(format, 64, 32, 3)));
    EXPECT_TRUE(WinogradPays(DescribeIn(format, 32, 64, 3)));
    EXPECT_FALSE(WinogradPays(DescribeIn(format, 16, 32, 3)));
    EXPECT_FALSE(WinogradPays(DescribeIn(format, 32, 16, 3)));
    EXPECT_FALSE(WinogradPays(DescribeIn(format, 16, 16, 3)));
    EXPECT_FALSE(WinogradPays(DescribeIn(format, 32, 32, 5)));
    EXPECT_FALSE(WinogradPays(DescribeIn(format, 32, 32, 3, /*stride=*/2)));
    EXPECT_FALSE(
        WinogradPays(DescribeIn(format, 32, 32, 3, 1, /*dilation=*/2)));
    EXPECT_FALSE(
        WinogradPays(DescribeIn(format, 64, 64, 3, 1, 1, /*groups=*/2)));
  }
}

TEST(WinogradPaysTest, NotForFewChannelsOrOtherFilters) {
  EXPECT_FALSE(WinogradPays(Describe(32, 32, 3)));
  EXPECT_FALSE(WinogradPays(Describe(64, 32, 3)));
  EXPECT_FALSE(WinogradPays(Describe(16, 64, 3)));
  EXPECT_FALSE(WinogradPays(Describe(3, 64, 3)));
  EXPECT_FALSE(WinogradPays(Describe(64, 64, 5)));
  EXPECT_FALSE(WinogradPays(Describe(64, 64, 1)));
  EXPECT_FALSE(WinogradPays(Describe(64, 64, 3, /*stride=*/2)));
  EXPECT_FALSE(WinogradPays(Describe(64, 64, 3, 1, /*dilation=*/2)));
  EXPECT_FALSE(WinogradPays(Describe(64, 64, 3, 1, 1, /*groups=*/2)));
}

// oneDNN 2.6 has Winograd kernels for AVX-512 cores only.
bool CpuHasWinograd() {
  using dnnl::cpu_isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case cpu_isa::avx512_core:
    case cpu_isa::avx512_core_vnni:
    case cpu_isa::avx512_core_bf16:
    case cpu_isa::avx512_core_amx:
      return true;
    default:
      return false;
  }
}

TEST(ForwardPrimitiveTest, WinogradWhereItPaysAndTheCpuHasIt) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  for (const OneDnnConv& c :
       {Describe(64, 64, 3), DescribeIn(ImageFormat::kNchw, 32, 32, 3),
        DescribeIn(ImageFormat::kNchw8c, 32, 32, 3),
        DescribeIn(ImageFormat::kNchw16c, 32, 32, 3)}) {
    const std::string impl =
        ForwardPrimitive(c, /*has_bias=*/true,
                         ConvEpilogue{false, ConvActivation::kRelu}, engine)
            .impl_info_str();
    EXPECT_EQ(impl.find("wino") != std::string::npos, CpuHasWinograd()) << impl;
  }
}

TEST(ForwardPrimitiveTest, DirectWhereWinogradDoesNotPay) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  for (const OneDnnConv& c : {Describe(32, 32, 3), Describe(64, 64, 5),
                              Describe(64, 64, 3, /*stride=*/2)}) {
    const dnnl::convolution_forward::primitive_desc pd =
        ForwardPrimitive(c, /*has_bias=*/false, ConvEpilogue{}, engine);
    const std::string impl = pd.impl_info_str();
    EXPECT_EQ(impl.find("wino"), std::string::npos) << impl;
    // Direct kernels run on our NHWC layout: no reorders.
    EXPECT_TRUE(pd.src_desc() == c.src_md);
    EXPECT_TRUE(pd.dst_desc() == c.dst_md);
  }
}

// Whether `pd` is oneDNN's reference kernel, a plain loop.
bool IsReference(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

// A blocked op's NCHW Input of more channels than oneDNN's first-convolution
// kernels read has only its reference kernel on our layouts, 100 to 1000
// times slower: the primitives are then oneDNN's choice of layouts, which
// conv2d reorders to and from.
TEST(ForwardPrimitiveTest, NoReferenceKernelForWideNchwInputs) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  for (ImageFormat format : {ImageFormat::kNchw8c, ImageFormat::kNchw16c}) {
    SCOPED_TRACE(ImageFormatName(format));
    Conv2dAttrs a;
    a.strides = {1, 1};
    a.dilations = {1, 1};
    a.padding = {0, 0, 0, 0};
    a.groups = 1;
    a.format = format;
    const OneDnnConv c = DescribeConv(a, {1, 24, 16, 16}, ImageFormat::kNchw,
                                      {144, 24, 1, 1}, {1, 144, 16, 16},
                                      format);
    // Only the reference kernel on our layouts (what conv2d ran before).
    EXPECT_TRUE(IsReference(ForwardPrimitiveOf(
        c, dnnl::algorithm::convolution_direct, /*has_bias=*/true,
        ConvEpilogue{false, ConvActivation::kSilu}, engine)));
    const dnnl::convolution_forward::primitive_desc forward =
        ForwardPrimitive(c, /*has_bias=*/true,
                         ConvEpilogue{false, ConvActivation::kSilu}, engine);
    EXPECT_FALSE(IsReference(forward)) << forward.impl_info_str();
    const dnnl::convolution_backward_data::primitive_desc data =
        BackwardDataPrimitive(c, engine);
    EXPECT_FALSE(IsReference(data)) << data.impl_info_str();
    const dnnl::convolution_backward_weights::primitive_desc weights =
        BackwardWeightsPrimitive(c, engine);
    EXPECT_FALSE(IsReference(weights)) << weights.impl_info_str();
  }
}

bool IsWinograd(const std::string& impl) {
  return impl.find("wino") != std::string::npos;
}

// NCHW16c is the layout of Winograd's kernels (where the CPU has them) and
// of direct's AVX-512 ones: neither is asked to reorder activations.
TEST(ForwardPrimitiveTest, NoReordersOnNchw16c) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  for (const OneDnnConv& c : {DescribeIn(ImageFormat::kNchw16c, 32, 32, 3),
                              DescribeIn(ImageFormat::kNchw16c, 64, 128, 3),
                              DescribeIn(ImageFormat::kNchw16c, 16, 16, 3),
                              DescribeIn(ImageFormat::kNchw16c, 32, 32, 3,
                                         /*stride=*/2),
                              DescribeIn(ImageFormat::kNchw16c, 32, 32, 1)}) {
    const dnnl::convolution_forward::primitive_desc pd =
        ForwardPrimitive(c, /*has_bias=*/true,
                         ConvEpilogue{false, ConvActivation::kRelu}, engine);
    const std::string impl = pd.impl_info_str();
    EXPECT_EQ(IsWinograd(impl), WinogradPays(c) && CpuHasWinograd()) << impl;
    EXPECT_TRUE(pd.src_desc() == c.src_md) << impl;
    EXPECT_TRUE(pd.dst_desc() == c.dst_md) << impl;
    if (!CpuHasWinograd()) continue;
    // The same with Winograd's chosen outright, where it has kernels.
    if (c.weights[2] != 3 || c.strides != dnnl::memory::dims{1, 1}) continue;
    const dnnl::convolution_forward::primitive_desc winograd =
        ForwardPrimitiveOf(c, dnnl::algorithm::convolution_winograd,
                           /*has_bias=*/true,
                           ConvEpilogue{false, ConvActivation::kRelu}, engine);
    EXPECT_TRUE(winograd.src_desc() == c.src_md);
    EXPECT_TRUE(winograd.dst_desc() == c.dst_md);
  }
}

// A first convolution: NCHW Input, few channels, into 16-channel blocks.
TEST(ForwardPrimitiveTest, FirstConvolutionReadsNchwWritesNchw16c) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  Conv2dAttrs a;
  a.strides = {1, 1};
  a.dilations = {1, 1};
  a.padding = {1, 1, 1, 1};
  a.groups = 1;
  a.format = ImageFormat::kNchw16c;
  const OneDnnConv c =
      DescribeConv(a, {1, 3, 16, 16}, ImageFormat::kNchw, {32, 3, 3, 3},
                   {1, 32, 16, 16}, ImageFormat::kNchw16c);
  EXPECT_FALSE(WinogradPays(c));
  const dnnl::convolution_forward::primitive_desc pd = ForwardPrimitive(
      c, /*has_bias=*/true, ConvEpilogue{false, ConvActivation::kRelu}, engine);
  EXPECT_TRUE(pd.src_desc() == c.src_md) << pd.impl_info_str();
  EXPECT_TRUE(pd.dst_desc() == c.dst_md) << pd.impl_info_str();
}

// Backward passes of the shapes above in each layout, some where
// Winograd's pays.
std::vector<OneDnnConv> TrainingShapes() {
  std::vector<OneDnnConv> shapes;
  for (ImageFormat format : {ImageFormat::kNhwc, ImageFormat::kNchw,
                             ImageFormat::kNchw8c, ImageFormat::kNchw16c}) {
    for (const OneDnnConv& c :
         {DescribeIn(format, 32, 64, 3), DescribeIn(format, 64, 64, 3),
          DescribeIn(format, 32, 32, 3), DescribeIn(format, 64, 32, 3),
          DescribeIn(format, 16, 32, 3), DescribeIn(format, 16, 64, 3),
          DescribeIn(format, 64, 64, 5),
          DescribeIn(format, 64, 64, 3, /*stride=*/2),
          DescribeIn(format, 64, 64, 3, 1, /*dilation=*/2)}) {
      shapes.push_back(c);
    }
  }
  return shapes;
}

TEST(BackwardPrimitivesTest, WinogradExactlyWhereItPaysAndTheCpuHasIt) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  int winograd = 0;
  for (const OneDnnConv& c : TrainingShapes()) {
    const bool pays = WinogradPays(c) && CpuHasWinograd();
    winograd += pays;
    const std::string forward =
        ForwardPrimitive(c, /*has_bias=*/true, ConvEpilogue{}, engine)
            .impl_info_str();
    const std::string data = BackwardDataPrimitive(c, engine).impl_info_str();
    const std::string weights =
        BackwardWeightsPrimitive(c, engine).impl_info_str();
    EXPECT_EQ(IsWinograd(forward), pays) << forward;
    EXPECT_EQ(IsWinograd(data), pays) << data;
    EXPECT_EQ(IsWinograd(weights), pays) << weights;
  }
  // 32 -> 64 and 64 -> 64 in each layout; 32 -> 32 and 64 -> 32 in NCHW,
  // NCHW8c and NCHW16c only.
  EXPECT_EQ(winograd, CpuHasWinograd() ? 14 : 0);
}

TEST(BackwardPrimitivesTest, DirectOnOurLayoutsWhereWinogradDoesNotPay) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  for (const OneDnnConv& c : TrainingShapes()) {
    // NCHW's direct primitives choose their own layout.
    if (WinogradPays(c) || c.src_want != c.src_md) continue;
    const dnnl::convolution_backward_data::primitive_desc data =
        BackwardDataPrimitive(c, engine);
    const dnnl::convolution_backward_weights::primitive_desc weights =
        BackwardWeightsPrimitive(c, engine);
    EXPECT_FALSE(IsWinograd(data.impl_info_str())) << data.impl_info_str();
    EXPECT_FALSE(IsWinograd(weights.impl_info_str()))
        << weights.impl_info_str();
    // Direct kernels run on our NHWC, NCHW8c and NCHW16c layouts (no
    // reorders), except where oneDNN has only its reference kernel for
    // them (a dilated filter's gradient on NCHW8c, on AVX-512 CPUs):
    // there on its own layouts.
    const auto direct = dnnl::algorithm::convolution_direct;
    if (IsReference(BackwardDataPrimitiveOf(c, direct, engine))) {
      EXPECT_FALSE(IsReference(data)) << data.impl_info_str();
    } else {
      EXPECT_TRUE(data.diff_src_desc() == c.src_md);
      EXPECT_TRUE(data.diff_dst_desc() == c.dst_md);
    }
    if (IsReference(BackwardWeightsPrimitiveOf(c, direct, engine))) {
      EXPECT_FALSE(IsReference(weights)) << weights.impl_info_str();
    } else {
      EXPECT_TRUE(weights.src_desc() == c.src_md);
      EXPECT_TRUE(weights.diff_dst_desc() == c.dst_md);
    }
  }
}

// On NCHW16c, Winograd's backward passes take Output@GRAD and write
// Input@GRAD in our layout, and read Input in it: no reorders.
TEST(BackwardPrimitivesTest, WinogradRunsOnNchw16cAsItIs) {
  if (!CpuHasWinograd()) GTEST_SKIP() << "no Winograd kernels on this CPU";
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const OneDnnConv c = DescribeIn(ImageFormat::kNchw16c, 32, 32, 3);
  ASSERT_TRUE(WinogradPays(c));
  const dnnl::convolution_backward_data::primitive_desc data =
      BackwardDataPrimitive(c, engine);
  const dnnl::convolution_backward_weights::primitive_desc weights =
      BackwardWeightsPrimitive(c, engine);
  EXPECT_TRUE(IsWinograd(data.impl_info_str())) << data.impl_info_str();
  EXPECT_TRUE(IsWinograd(weights.impl_info_str())) << weights.impl_info_str();
  EXPECT_TRUE(data.diff_src_desc() == c.src_md);
  EXPECT_TRUE(data.diff_dst_desc() == c.dst_md);
  EXPECT_TRUE(weights.src_desc() == c.src_md);
  EXPECT_TRUE(weights.diff_dst_desc() == c.dst_md);
}

// Without Winograd's kernels (AVX2, or ONEDNN_MAX_CPU_ISA below AVX-512)
// asking for them throws, which is how the choice above falls back.
TEST(BackwardPrimitivesTest, WinogradOfOnlyWhereTheCpuHasIt) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const OneDnnConv c = Describe(64, 64, 3);
  const auto winograd = dnnl::algorithm::convolution_winograd;
  if (CpuHasWinograd()) {
    EXPECT_TRUE(IsWinograd(
        BackwardDataPrimitiveOf(c, winograd, engine).impl_info_str()));
    EXPECT_TRUE(IsWinograd(
        BackwardWeightsPrimitiveOf(c, winograd, engine).impl_info_str()));
  } else {
    EXPECT_THROW(BackwardDataPrimitiveOf(c, winograd, engine), dnnl::error);
    EXPECT_THROW(BackwardWeightsPrimitiveOf(c, winograd, engine), dnnl::error);
  }
}

}  // namespace
}  // namespace scopeflow
