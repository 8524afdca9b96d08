// CUDA kernels of conv2d and conv2d_grad: the ops are declared, with their
// CPU kernels, in conv2d.cc. The convolutions run in cuDNN:
//   - float32 NHWC runs in cuDNN's NHWC layout, with the OIHW filter
//     reordered to OHWI (cuDNN's NHWC kernels take filters in the data's
//     layout); float64, whose NHWC support in cuDNN is thin (PyTorch keeps
//     it to NCHW too), and any NHWC convolution cuDNN has no algorithm
//     for, runs in NCHW through reordered copies.
//   - NCHW8c and NCHW16c (operators/channel_blocks.h), for which cuDNN has
//     no float layout, run in NCHW: blocked Inputs and Outputs (and their
//     gradients) go through NCHW copies; a blocked op's rank-4 Input is
//     NCHW already.
//   - cuDNN pads both sides of an axis alike: other padding pads a copy of
//     the input by the difference, and the input's gradient is cropped
//     from the padded one's.
//   - cuDNN's descriptors hold at most 2^31 - 1 elements: larger batches
//     run in parts.
//   - float32 keeps to FMA kernels (no TF32), so results agree with the
//     CPU's within float32 rounding.
// Each convolution's algorithms come from cuDNN's heuristics once per shape
// (a process-wide cache).
#include "operators/nn/conv2d_cuda.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/kernel_registry.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "operators/nn/kernel_util.h"
#include "operators/nn/window.h"
#include "platform/allocator.h"
#include "platform/cuda_context.h"
#include "platform/mutex.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using cuda::ChannelView;
using cuda::Image4d;

// The most workspace an algorithm may ask for: others are passed over.
constexpr size_t kMaxAlgoWorkspace = size_t{256} << 20;
// The most elements a cuDNN tensor descriptor holds.
constexpr int64_t kMaxCudnnElements = std::numeric_limits<int32_t>::max();

template <typename T>
cudnnDataType_t CudnnType() {
  return std::is_same_v<T, float> ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
}

// A convolution as cuDNN runs it: in one layout for data and filters,
// with the padding symmetric.
struct CudnnConv {
  cudnnDataType_t dtype;
  bool nhwc;
  int64_t n, c, h, w;  // input
  int64_t m, kh, kw;   // filter [m, c / groups, kh, kw]
  int64_t oh, ow;      // output [n, m, oh, ow]
  int64_t pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, groups;

  std::string ToString() const {
    return absl::StrFormat(
        "input [%d, %d, %d, %d], filter [%d, %d, %d, %d], output [%d, %d, "
        "%d, %d] (%s, %s), pads [%d, %d], strides [%d, %d], dilations [%d, "
        "%d], groups %d",
        n, c, h, w, m, c / groups, kh, kw, n, m, oh, ow, nhwc ? "NHWC" : "NCHW",
        dtype == CUDNN_DATA_FLOAT ? "float32" : "float64", pad_h, pad_w,
        stride_h, stride_w, dilation_h, dilation_w, groups);
  }
};

struct TensorDescDeleter {
  void operator()(cudnnTensorStruct* desc) const {
    cudnnDestroyTensorDescriptor(desc);
  }
};
struct FilterDescDeleter {
  void operator()(cudnnFilterStruct* desc) const {
    cudnnDestroyFilterDescriptor(desc);
  }
};
struct ConvDescDeleter {
  void operator()(cudnnConvolutionStruct* desc) const {
    cudnnDestroyConvolutionDescriptor(desc);
  }
};

// The descriptors of one CudnnConv.
struct ConvDescriptors {
  std::unique_ptr<cudnnTensorStruct, TensorDescDeleter> x, y;
  std::unique_ptr<cudnnFilterStruct, FilterDescDeleter> w;
  std::unique_ptr<cudnnConvolutionStruct, ConvDescDeleter> conv;
};

absl::StatusOr<ConvDescriptors> Describe(const CudnnConv& c) {
  ConvDescriptors d;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  SF_RETURN_IF_ERROR(CudnnCheck(cudnnCreateTensorDescriptor(&x),
                                "cudnnCreateTensorDescriptor"));
  d.x.reset(x);
  SF_RETURN_IF_ERROR(CudnnCheck(cudnnCreateTensorDescriptor(&y),
                                "cudnnCreateTensorDescriptor"));
  d.y.reset(y);
  SF_RETURN_IF_ERROR(CudnnCheck(cudnnCreateFilterDescriptor(&w),
                                "cudnnCreateFilterDescriptor"));
  d.w.reset(w);
  SF_RETURN_IF_ERROR(CudnnCheck(cudnnCreateConvolutionDescriptor(&conv),
                                "cudnnCreateConvolutionDescriptor"));
  d.conv.reset(conv);
  const cudnnTensorFormat_t format =
      c.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  // Every size was checked to fit cuDNN's ints (PlanConv).
  auto i = [](int64_t v) { return static_cast<int>(v); };
  SF_RETURN_IF_ERROR(
      CudnnCheck(cudnnSetTensor4dDescriptor(x, format, c.dtype, i(c.n), i(c.c),
                                            i(c.h), i(c.w)),
                 "cudnnSetTensor4dDescriptor (input)"));
  SF_RETURN_IF_ERROR(
      CudnnCheck(cudnnSetTensor4dDescriptor(y, format, c.dtype, i(c.n), i(c.m),
                                            i(c.oh), i(c.ow)),
                 "cudnnSetTensor4dDescriptor (output)"));
  SF_RETURN_IF_ERROR(CudnnCheck(
      cudnnSetFilter4dDescriptor(w, c.dtype, format, i(c.m), i(c.c / c.groups),
                                 i(c.kh), i(c.kw)),
      "cudnnSetFilter4dDescriptor"));
  // conv2d is a cross-correlation: the filter is not flipped.
  SF_RETURN_IF_ERROR(CudnnCheck(
      cudnnSetConvolution2dDescriptor(
          conv, i(c.pad_h), i(c.pad_w), i(c.stride_h), i(c.stride_w),
          i(c.dilation_h), i(c.dilation_w), CUDNN_CROSS_CORRELATION, c.dtype),
      "cudnnSetConvolution2dDescriptor"));
  SF_RETURN_IF_ERROR(
      CudnnCheck(cudnnSetConvolutionGroupCount(conv, i(c.groups)),
                 "cudnnSetConvolutionGroupCount"));
  // cuDNN's default math lets float32 run on TF32 tensor cores, whose
  // 10-bit mantissas would miss the CPU's results by far more than float32
  // rounding.
  SF_RETURN_IF_ERROR(
      CudnnCheck(cudnnSetConvolutionMathType(conv, c.dtype == CUDNN_DATA_FLOAT
                                                       ? CUDNN_FMA_MATH
                                                       : CUDNN_DEFAULT_MATH),
                 "cudnnSetConvolutionMathType"));
  int n = 0, m = 0, oh = 0, ow = 0;
  SF_RETURN_IF_ERROR(CudnnCheck(
      cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &m, &oh, &ow),
      "cudnnGetConvolution2dForwardOutputDim"));
  SF_CHECK_CODE(n == c.n && m == c.m && oh == c.oh && ow == c.ow,
                absl::StatusCode::kInternal,
                "cuDNN gives output [%d, %d, %d, %d] for the convolution of %s",
                n, m, oh, ow, c.ToString());
  return d;
}

enum class Pass { kForward, kBackwardData, kBackwardFilter };

const char* PassName(Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return "forward convolution";
    case Pass::kBackwardData:
      return "convolution's input gradient";
    case Pass::kBackwardFilter:
      return "convolution's filter gradient";
  }
  return "";
}

// The algorithms cuDNN's heuristics offer for one pass of one convolution,
// best first, with the workspace each takes; `first` is the first of them
// that ran (cuDNN turns some down only when asked to run them).
struct Algorithms {
  std::vector<std::pair<int, size_t>> candidates;
  size_t first = 0;
};

class AlgorithmCache {
 public:
  bool Find(const std::string& key, Algorithms& algorithms) {
    MutexLock lock(&mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    algorithms = it->second;
    return true;
  }

  // Keeps `algorithms` unless another thread stored the key first.
  void Store(const std::string& key, const Algorithms& algorithms) {
    // Shapes may vary without end; entries are small, and a full cache is
    // emptied rather than ordered.
    constexpr size_t kMaxEntries = 4096;
    MutexLock lock(&mu_);
    if (map_.size() >= kMaxEntries) map_.clear();
    map_.emplace(key, algorithms);
  }

  void SetFirst(const std::string& key, size_t first) {
    MutexLock lock(&mu_);
    auto it = map_.find(key);
    if (it != map_.end()) it->second.first = first;
  }

 private:
  Mutex mu_;
  absl::flat_hash_map<std::string, Algorithms> map_ ABSL_GUARDED_BY(mu_);
};

// Never destroyed, as it may be used until the process exits.
AlgorithmCache& Cache() {
  static AlgorithmCache& cache = *std::make_unique<AlgorithmCache>().release();
  return cache;
}

std::string CacheKey(Pass pass, int device, const CudnnConv& c) {
  return absl::StrCat(static_cast<int>(pass), ";", device, ";", c.ToString());
}

// Where cuDNN's heuristics offer nothing (or turn the shape down), the
// list is empty.
template <typename Perf, typename Query, typename Size>
absl::StatusOr<Algorithms> AskHeuristics(int count, Query query,
                                         Size workspace_size) {
  std::vector<Perf> perf(count);
  int returned = 0;
  const cudnnStatus_t status = query(count, &returned, perf.data());
  Algorithms algorithms;
  if (status == CUDNN_STATUS_NOT_SUPPORTED) return algorithms;
  SF_RETURN_IF_ERROR(CudnnCheck(status, "cuDNN's algorithm heuristics"));
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    const int algo = static_cast<int>(perf[i].algo);
    // The heuristics may list an algorithm once per math type.
    const bool listed = std::any_of(
        algorithms.candidates.begin(), algorithms.candidates.end(),
        [algo](const std::pair<int, size_t>& c) { return c.first == algo; });
    size_t bytes = 0;
    if (listed ||
        workspace_size(perf[i].algo, &bytes) != CUDNN_STATUS_SUCCESS ||
        bytes > kMaxAlgoWorkspace) {
      continue;
    }
    algorithms.candidates.emplace_back(algo, bytes);
  }
  return algorithms;
}

// cuDNN's heuristics for one pass.
absl::StatusOr<Algorithms> AskCudnn(cudnnHandle_t h, Pass pass,
                                    const ConvDescriptors& d) {
  switch (pass) {
    case Pass::kForward:
      return AskHeuristics<cudnnConvolutionFwdAlgoPerf_t>(
          CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
          [&](int count, int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
            return cudnnGetConvolutionForwardAlgorithm_v7(
                h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), count,
                returned, perf);
          },
          [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
            return cudnnGetConvolutionForwardWorkspaceSize(
                h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), algo, bytes);
          });
    case Pass::kBackwardData:
      return AskHeuristics<cudnnConvolutionBwdDataAlgoPerf_t>(
          CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
          [&](int count, int* returned,
              cudnnConvolutionBwdDataAlgoPerf_t* perf) {
            return cudnnGetConvolutionBackwardDataAlgorithm_v7(
                h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(), count,
                returned, perf);
          },
          [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
            return cudnnGetConvolutionBackwardDataWorkspaceSize(
                h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(), algo, bytes);
          });
    case Pass::kBackwardFilter:
      return AskHeuristics<cudnnConvolutionBwdFilterAlgoPerf_t>(
          CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
          [&](int count, int* returned,
              cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
            return cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), count,
                returned, perf);
          },
          [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
            return cudnnGetConvolutionBackwardFilterWorkspaceSize(
                h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), algo, bytes);
          });
  }
  return absl::InternalError("unknown convolution pass");
}

// The algorithms for `pass` of `c`, from the cache or, the first time,
// from cuDNN's heuristics.
absl::StatusOr<Algorithms> AlgorithmsFor(CudaContext* cuda, Pass pass,
                                         const CudnnConv& c,
                                         const ConvDescriptors& d) {
  const std::string key = CacheKey(pass, cuda->device(), c);
  Algorithms algorithms;
  if (Cache().Find(key, algorithms)) return algorithms;
  SF_ASSIGN_OR_RETURN(algorithms, AskCudnn(cuda->cudnn(), pass, d));
  Cache().Store(key, algorithms);
  return algorithms;
}

// Runs `pass` by the cached algorithms in turn from the first that ran
// before, until cuDNN takes one: `run(algo, workspace, bytes)` calls cuDNN.
template <typename Run>
absl::Status RunPass(CudaContext* cuda, Pass pass, const CudnnConv& c,
                     const ConvDescriptors& d, Run run) {
  SF_ASSIGN_OR_RETURN(const Algorithms algorithms,
                      AlgorithmsFor(cuda, pass, c, d));
  for (size_t i = algorithms.first; i < algorithms.candidates.size(); ++i) {
    const auto [algo, bytes] = algorithms.candidates[i];
    SF_ASSIGN_OR_RETURN(void* workspace, cuda->Workspace(bytes));
    const cudnnStatus_t status = run(algo, workspace, bytes);
    if (status == CUDNN_STATUS_NOT_SUPPORTED) continue;
    SF_RETURN_IF_ERROR(CudnnCheck(status, PassName(pass)));
    if (i != algorithms.first) {
      Cache().SetFirst(CacheKey(pass, cuda->device(), c), i);
    }
    return absl::OkStatus();
  }
  // Remembered, so that ChoosePlan passes over this layout from now on.
  Cache().SetFirst(CacheKey(pass, cuda->device(), c),
                   algorithms.candidates.size());
  return absl::UnimplementedError(
      absl::StrFormat("cuDNN has no algorithm (within %d MiB of workspace) "
                      "for the %s of %s",
                      kMaxAlgoWorkspace >> 20, PassName(pass), c.ToString()));
}

// How one conv2d call maps onto cuDNN calls: dims of the op in [N, C, H,
// W] order, the layout cuDNN computes in, the input padded to make the
// padding symmetric, and the samples per call.
struct ConvPlan {
  cudnnDataType_t dtype;
  bool nhwc;  // the op's data_format
  // Channels per block of the op's Input and Output: 8 or 16 where they
  // are NCHW8c or NCHW16c, 1 where NCHW or NHWC.
  int64_t input_block, output_block;
  bool compute_nhwc;  // cuDNN's layout
  int64_t n, c, h, w, m, kh, kw, oh, ow;
  int64_t groups, stride_h, stride_w, dilation_h, dilation_w;
  // cuDNN's symmetric pads, and the rows and columns added before the
  // input (pad_top - pad_h, pad_left - pad_w) and in all.
  int64_t pad_h, pad_w, extra_top, extra_left, padded_h, padded_w;
  int64_t samples_per_call;

  bool CopiesInput() const {
    return nhwc != compute_nhwc || input_block != 1 || padded_h != h ||
           padded_w != w;
  }
  bool CopiesOutput() const {
    return nhwc != compute_nhwc || output_block != 1;
  }
  bool CopiesFilter() const { return compute_nhwc; }

  CudnnConv Conv(int64_t samples) const {
    return {dtype, compute_nhwc, samples,  c,          padded_h,   padded_w,
            m,     kh,           kw,       oh,         ow,         pad_h,
            pad_w, stride_h,     stride_w, dilation_h, dilation_w, groups};
  }
  // The op's Input and Output, and cuDNN's.
  Image4d Input(int64_t samples) const {
    return {samples, c, h, w, nhwc, input_block};
  }
  Image4d CudnnInput(int64_t samples) const {
    return {samples, c, padded_h, padded_w, compute_nhwc};
  }
  Image4d Output(int64_t samples) const {
    return {samples, m, oh, ow, nhwc, output_block};
  }
  Image4d CudnnOutput(int64_t samples) const {
    return {samples, m, oh, ow, compute_nhwc};
  }
  // OIHW, or with channels_last OHWI.
  Image4d Filter(bool channels_last) const {
    return {m, c / groups, kh, kw, channels_last};
  }
};

// The plan with cuDNN computing in NHWC where `compute_nhwc`; an error
// naming the variable where one sample or the filter passes cuDNN's
// limit.
absl::StatusOr<ConvPlan> PlanConv(const KernelContext& context,
                                  const Conv2dAttrs& a, cudnnDataType_t dtype,
                                  const Tensor& input, const Tensor& filter,
                                  const Dims& output, bool compute_nhwc) {
  ConvPlan p;
  p.dtype = dtype;
  p.nhwc = a.Nhwc();
  // A blocked op's Input is NCHW where its rank is 4; its Output is always
  // blocked.
  p.input_block = a.Blocked() && input.dims().size() == 5 ? a.Block() : 1;
  p.output_block = a.Blocked() ? a.Block() : 1;
  p.compute_nhwc = compute_nhwc;
  const Dims& x = input.dims();
  p.n = x[0];
  p.c = a.Nhwc() ? x[3] : x[1] * p.input_block;
  p.h = a.Nhwc() ? x[1] : x[2];
  p.w = a.Nhwc() ? x[2] : x[3];
  p.m = filter.dim(0);
  p.kh = filter.dim(2);
  p.kw = filter.dim(3);
  p.oh = a.Nhwc() ? output[1] : output[2];
  p.ow = a.Nhwc() ? output[2] : output[3];
  p.groups = a.groups;
  p.stride_h = a.strides[0];
  p.stride_w = a.strides[1];
  p.dilation_h = a.dilations[0];
  p.dilation_w = a.dilations[1];
  p.pad_h = std::min(a.padding.top, a.padding.bottom);
  p.pad_w = std::min(a.padding.left, a.padding.right);
  p.extra_top = a.padding.top - p.pad_h;
  p.extra_left = a.padding.left - p.pad_w;
  p.padded_h = p.h + a.padding.top + a.padding.bottom - 2 * p.pad_h;
  p.padded_w = p.w + a.padding.left + a.padding.right - 2 * p.pad_w;
  const int64_t input_sample = p.c * p.padded_h * p.padded_w;
  const int64_t output_sample = p.m * p.oh * p.ow;
  SF_CHECK(input_sample <= kMaxCudnnElements,
           "input \"Input\" (variable \"%s\") has %d elements per sample "
           "(padding included): cuDNN takes at most %d",
           context.InputName("Input"), input_sample, kMaxCudnnElements);
  SF_CHECK(output_sample <= kMaxCudnnElements,
           "output \"Output\" of input \"Input\" (variable \"%s\") has %d "
           "elements per sample: cuDNN takes at most %d",
           context.InputName("Input"), output_sample, kMaxCudnnElements);
  SF_CHECK(filter.numel() <= kMaxCudnnElements,
           "input \"Filter\" (variable \"%s\") has %d elements: cuDNN takes "
           "at most %d",
           context.InputName("Filter"), filter.numel(), kMaxCudnnElements);
  p.samples_per_call = std::max<int64_t>(
      1, std::min(p.n, kMaxCudnnElements /
                           std::max<int64_t>(
                               1, std::max(input_sample, output_sample))));
  return p;
}

// The plan for `passes`: in NHWC for float32 NHWC where cuDNN has
// algorithms for it (none turned down yet), otherwise in NCHW.
template <typename T>
absl::StatusOr<ConvPlan> ChoosePlan(const KernelContext& context,
                                    CudaContext* cuda, const Conv2dAttrs& a,
                                    const Tensor& input, const Tensor& filter,
                                    const Dims& output,
                                    const std::vector<Pass>& passes) {
  const bool nhwc = a.Nhwc() && std::is_same_v<T, float>;
  SF_ASSIGN_OR_RETURN(ConvPlan plan, PlanConv(context, a, CudnnType<T>(), input,
                                              filter, output, nhwc));
  if (!nhwc) return plan;
  const CudnnConv conv = plan.Conv(plan.samples_per_call);
  SF_ASSIGN_OR_RETURN(const ConvDescriptors d, Describe(conv));
  for (Pass pass : passes) {
    SF_ASSIGN_OR_RETURN(const Algorithms algorithms,
                        AlgorithmsFor(cuda, pass, conv, d));
    if (algorithms.first >= algorithms.candidates.size()) {
      return PlanConv(context, a, CudnnType<T>(), input, filter, output,
                      /*compute_nhwc=*/false);
    }
  }
  return plan;
}

// Device memory for one kernel's copies, freed when the kernel returns: the
// allocator hands it to later work of this thread's stream only, which runs
// after the copies' readers.
absl::StatusOr<std::shared_ptr<Allocation>> Scratch(const Place& place,
                                                    int64_t elements,
                                                    size_t element_size) {
  SF_ASSIGN_OR_RETURN(Allocator * allocator, GetAllocator(place));
  return allocator->Allocate(static_cast<size_t>(elements) * element_size);
}

template <typename T>
T* ScratchData(const std::shared_ptr<Allocation>& scratch) {
  return static_cast<T*>(scratch->data());
}

absl::Status Zero(CudaContext* cuda, Tensor* tensor) {
  if (tensor == nullptr || tensor->numel() == 0) return absl::OkStatus();
  return CudaCheck(
      cudaMemsetAsync(tensor->raw_data(), 0, tensor->nbytes(), cuda->stream()),
      "cudaMemsetAsync");
}

// An Output (or its gradient) of the op's layout, for the per-channel bias
// and its gradient.
ChannelView ChannelsOf(const Dims& dims, const Conv2dAttrs& a) {
  if (a.Nhwc()) return {dims[0] * dims[1] * dims[2], dims[3], 1};
  if (a.Blocked()) {
    return {dims[0], dims[1] * a.Block(), dims[2] * dims[3], a.Block()};
  }
  return {dims[0], dims[1], dims[2] * dims[3]};
}

// The convolution of `input` by `filter` into `output`, as `p` plans it.
template <typename T>
absl::Status RunForward(const Place& place, CudaContext* cuda,
                        const ConvPlan& p, const Tensor& input,
                        const Tensor& filter, Tensor& output) {
  const int64_t part = p.samples_per_call;
  std::shared_ptr<Allocation> x_copy, y_copy, w_copy;
  if (p.CopiesInput()) {
    SF_ASSIGN_OR_RETURN(
        x_copy,
        Scratch(place, part * p.c * p.padded_h * p.padded_w, sizeof(T)));
  }
  if (p.CopiesOutput()) {
    SF_ASSIGN_OR_RETURN(y_copy,
                        Scratch(place, part * p.m * p.oh * p.ow, sizeof(T)));
  }
  const T* w = filter.data<T>();
  if (p.CopiesFilter()) {
    SF_ASSIGN_OR_RETURN(w_copy, Scratch(place, filter.numel(), sizeof(T)));
    cuda::LaunchCopyWindow<T>(w, p.Filter(false), ScratchData<T>(w_copy),
                              p.Filter(true), 0, 0, cuda->stream());
    SF_RETURN_IF_ERROR(CudaLaunchCheck("conv2d filter reorder"));
    w = ScratchData<T>(w_copy);
  }
  const T one = 1, zero = 0;
  for (int64_t first = 0; first < p.n; first += part) {
    const int64_t samples = std::min(part, p.n - first);
    const T* x = input.data<T>() + first * p.c * p.h * p.w;
    if (p.CopiesInput()) {
      cuda::LaunchCopyWindow<T>(x, p.Input(samples), ScratchData<T>(x_copy),
                                p.CudnnInput(samples), -p.extra_top,
                                -p.extra_left, cuda->stream());
      SF_RETURN_IF_ERROR(CudaLaunchCheck("conv2d input copy"));
      x = ScratchData<T>(x_copy);
    }
    T* y_out = output.data<T>() + first * p.m * p.oh * p.ow;
    T* y = p.CopiesOutput() ? ScratchData<T>(y_copy) : y_out;
    const CudnnConv conv = p.Conv(samples);
    SF_ASSIGN_OR_RETURN(const ConvDescriptors d, Describe(conv));
    SF_RETURN_IF_ERROR(RunPass(
        cuda, Pass::kForward, conv, d,
        [&](int algo, void* workspace, size_t bytes) {
          return cudnnConvolutionForward(
              cuda->cudnn(), &one, d.x.get(), x, d.w.get(), w, d.conv.get(),
              static_cast<cudnnConvolutionFwdAlgo_t>(algo), workspace, bytes,
              &zero, d.y.get(), y);
        }));
    if (p.CopiesOutput()) {
      cuda::LaunchCopyWindow<T>(y, p.CudnnOutput(samples), y_out,
                                p.Output(samples), 0, 0, cuda->stream());
      SF_RETURN_IF_ERROR(CudaLaunchCheck("conv2d output copy"));
    }
  }
  return absl::OkStatus();
}

// Runs `run(plan)` with the plan ChoosePlan gives; where cuDNN turns down
// every algorithm it had offered for NHWC, again in NCHW (each run writes
// all of its outputs).
template <typename T, typename Run>
absl::Status RunPlanned(const KernelContext& context, CudaContext* cuda,
                        const Conv2dAttrs& a, const Tensor& input,
                        const Tensor& filter, const Dims& output,
                        const std::vector<Pass>& passes, Run run) {
  SF_ASSIGN_OR_RETURN(
      const ConvPlan plan,
      ChoosePlan<T>(context, cuda, a, input, filter, output, passes));
  absl::Status status = run(plan);
  if (!absl::IsUnimplemented(status) || !plan.compute_nhwc) return status;
  SF_ASSIGN_OR_RETURN(const ConvPlan nchw,
                      PlanConv(context, a, CudnnType<T>(), input, filter,
                               output, /*compute_nhwc=*/false));
  return run(nchw);
}

template <typename T>
absl::Status Conv2dCuda(KernelContext& context) {
  const Tensor& input = context.Input("Input");
  const Tensor& filter = context.Input("Filter");
  const T* bias =
      context.HasInput("Bias") ? context.Input("Bias").data<T>() : nullptr;
  Tensor& output = *context.Output("Output");
  if (output.numel() == 0) return absl::OkStatus();
  const Conv2dAttrs a = Conv2dAttrsOf(context.attrs());
  const bool relu = context.attrs().Get<bool>("fuse_relu");
  // The conv-fusion pass writes these for the CPU only.
  const std::string& activation =
      context.attrs().Get<std::string>("activation");
  if (!activation.empty() || context.HasInput("Residual")) {
    return absl::UnimplementedError(absl::StrCat(
        "conv2d on CUDA: no kernel for a fused ",
        activation.empty() ? "input \"Residual\""
                           : absl::StrCat("activation \"", activation, "\""),
        " (the CPU's conv-fusion pass writes them); run the add or the "
        "activation as an op of its own"));
  }
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const ChannelView out = ChannelsOf(output.dims(), a);
  if (input.numel() > 0) {
    SF_RETURN_IF_ERROR(RunPlanned<T>(
        context, cuda, a, input, filter, output.dims(), {Pass::kForward},
        [&](const ConvPlan& p) {
          return RunForward<T>(context.place(), cuda, p, input, filter, output);
        }));
  }
  // With no input (no channels, or only padding), the bias or zeros.
  if (bias != nullptr || relu || input.numel() == 0) {
    cuda::LaunchBiasRelu<T>(bias, relu, /*accumulate=*/input.numel() > 0, out,
                            output.data<T>(), cuda->stream());
    SF_RETURN_IF_ERROR(CudaLaunchCheck("conv2d bias"));
  }
  return absl::OkStatus();
}

// Bias@GRAD: Output@GRAD summed per output channel, in double as the CPU
// kernel adds it.
template <typename T>
absl::Status BiasGrad(CudaContext* cuda, const Tensor& d_output,
                      const Conv2dAttrs& a, Tensor* d_bias) {
  if (d_bias->numel() == 0) return absl::OkStatus();
  if (d_output.numel() == 0) return Zero(cuda, d_bias);
  const ChannelView view = ChannelsOf(d_output.dims(), a);
  const int64_t splits = cuda::ChannelSumSplits(view);
  SF_ASSIGN_OR_RETURN(void* partial,
                      cuda->Workspace(splits * view.channels * sizeof(double)));
  cuda::LaunchChannelSums<T>(d_output.data<T>(), view,
                             static_cast<double*>(partial), d_bias->data<T>(),
                             cuda->stream());
  return CudaLaunchCheck("conv2d_grad bias gradient");
}

// The gradients of Input and Filter (each skipped where null), as `p`
// plans them.
template <typename T>
absl::Status RunBackward(const Place& place, CudaContext* cuda,
                         const ConvPlan& p, const Tensor& input,
                         const Tensor& filter, const Tensor& d_output,
                         Tensor* d_input, Tensor* d_filter) {
  const int64_t part = p.samples_per_call;
  const int64_t input_part = part * p.c * p.padded_h * p.padded_w;
  std::shared_ptr<Allocation> x_copy, dx_copy, dy_copy, w_copy, dw_copy;
  if (p.CopiesInput()) {
    if (d_filter != nullptr) {
      SF_ASSIGN_OR_RETURN(x_copy, Scratch(place, input_part, sizeof(T)));
    }
    if (d_input != nullptr) {
      SF_ASSIGN_OR_RETURN(dx_copy, Scratch(place, input_part, sizeof(T)));
    }
  }
  if (p.CopiesOutput()) {
    SF_ASSIGN_OR_RETURN(dy_copy,
                        Scratch(place, part * p.m * p.oh * p.ow, sizeof(T)));
  }
  const T* w = filter.data<T>();
  T* dw = d_filter == nullptr ? nullptr : d_filter->data<T>();
  if (p.CopiesFilter()) {
    if (d_input != nullptr) {
      SF_ASSIGN_OR_RETURN(w_copy, Scratch(place, filter.numel(), sizeof(T)));
      cuda::LaunchCopyWindow<T>(w, p.Filter(false), ScratchData<T>(w_copy),
                                p.Filter(true), 0, 0, cuda->stream());
      SF_RETURN_IF_ERROR(CudaLaunchCheck("conv2d_grad filter reorder"));
      w = ScratchData<T>(w_copy);
    }
    if (d_filter != nullptr) {
      SF_ASSIGN_OR_RETURN(dw_copy, Scratch(place, filter.numel(), sizeof(T)));
      dw = ScratchData<T>(dw_copy);
    }
  }
  const T one = 1, zero = 0;
  for (int64_t first = 0; first < p.n; first += part) {
    const int64_t samples = std::min(part, p.n - first);
    const CudnnConv conv = p.Conv(samples);
    SF_ASSIGN_OR_RETURN(const ConvDescriptors d, Describe(conv));
    const T* dy = d_output.data<T>() + first * p.m * p.oh * p.ow;
    if (p.CopiesOutput()) {
      cuda::LaunchCopyWindow<T>(dy, p.Output(samples), ScratchData<T>(dy_copy),
                                p.CudnnOutput(samples), 0, 0, cuda->stream());
      SF_RETURN_IF_ERROR(CudaLaunchCheck("conv2d_grad output gradient copy"));
      dy = ScratchData<T>(dy_copy);
    }
    const int64_t input_offset = first * p.c * p.h * p.w;
    if (d_input != nullptr) {
      T* dx_out = d_input->data<T>() + input_offset;
      T* dx = p.CopiesInput() ? ScratchData<T>(dx_copy) : dx_out;
      SF_RETURN_IF_ERROR(RunPass(
          cuda, Pass::kBackwardData, conv, d,
          [&](int algo, void* workspace, size_t bytes) {
            return cudnnConvolutionBackwardData(
                cuda->cudnn(), &one, d.w.get(), w, d.y.get(), dy, d.conv.get(),
                static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), workspace,
                bytes, &zero, d.x.get(), dx);
          }));
      if (p.CopiesInput()) {
        // The gradients of padding cells are dropped.
        cuda::LaunchCopyWindow<T>(dx, p.CudnnInput(samples), dx_out,
                                  p.Input(samples), p.extra_top, p.extra_left,
                                  cuda->stream());
        SF_RETURN_IF_ERROR(CudaLaunchCheck("conv2d_grad input gradient copy"));
      }
    }
    if (d_filter != nullptr) {
      const T* x = input.data<T>() + input_offset;
      if (p.CopiesInput()) {
        cuda::LaunchCopyWindow<T>(x, p.Input(samples), ScratchData<T>(x_copy),
                                  p.CudnnInput(samples), -p.extra_top,
                                  -p.extra_left, cuda->stream());
        SF_RETURN_IF_ERROR(CudaLaunchCheck("conv2d_grad input copy"));
        x = ScratchData<T>(x_copy);
      }
      // Later parts of the batch add to the first's gradient.
      const T* beta = first == 0 ? &zero : &one;
      SF_RETURN_IF_ERROR(RunPass(
          cuda, Pass::kBackwardFilter, conv, d,
          [&](int algo, void* workspace, size_t bytes) {
            return cudnnConvolutionBackwardFilter(
                cuda->cudnn(), &one, d.x.get(), x, d.y.get(), dy, d.conv.get(),
                static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), workspace,
                bytes, beta, d.w.get(), dw);
          }));
    }
  }
  if (d_filter != nullptr && p.CopiesFilter()) {
    cuda::LaunchCopyWindow<T>(dw, p.Filter(true), d_filter->data<T>(),
                              p.Filter(false), 0, 0, cuda->stream());
    SF_RETURN_IF_ERROR(CudaLaunchCheck("conv2d_grad filter gradient reorder"));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Conv2dGradCuda(KernelContext& context) {
  const Tensor& input = context.Input("Input");
  const Tensor& filter = context.Input("Filter");
  const Tensor& d_output = context.Input("Output@GRAD");
  Tensor* d_input = nn::OptionalOutput(context, "Input@GRAD");
  Tensor* d_filter = nn::OptionalOutput(context, "Filter@GRAD");
  SF_ASSIGN_OR_RETURN(CudaContext * cuda, GetCudaContext(context.place()));
  const Conv2dAttrs a = Conv2dAttrsOf(context.attrs());
  if (context.HasOutput("Bias@GRAD")) {
    SF_RETURN_IF_ERROR(
        BiasGrad<T>(cuda, d_output, a, context.Output("Bias@GRAD")));
  }
  if (d_input == nullptr && d_filter == nullptr) return absl::OkStatus();
  if (input.numel() == 0 || filter.numel() == 0 || d_output.numel() == 0) {
    // No product has terms: the gradients asked for are zero (or empty).
    SF_RETURN_IF_ERROR(Zero(cuda, d_input));
    return Zero(cuda, d_filter);
  }
  std::vector<Pass> passes;
  if (d_input != nullptr) passes.push_back(Pass::kBackwardData);
  if (d_filter != nullptr) passes.push_back(Pass::kBackwardFilter);
  return RunPlanned<T>(context, cuda, a, input, filter, d_output.dims(), passes,
                       [&](const ConvPlan& p) {
                         return RunBackward<T>(context.place(), cuda, p, input,
                                               filter, d_output, d_input,
                                               d_filter);
                       });
}

}  // namespace

SF_REGISTER_KERNEL(conv2d, DeviceType::kCUDA, kFloat32, &Conv2dCuda<float>);
SF_REGISTER_KERNEL(conv2d, DeviceType::kCUDA, kFloat64, &Conv2dCuda<double>);
SF_REGISTER_KERNEL(conv2d_grad, DeviceType::kCUDA, kFloat32,
                   &Conv2dGradCuda<float>);
SF_REGISTER_KERNEL(conv2d_grad, DeviceType::kCUDA, kFloat64,
                   &Conv2dGradCuda<double>);

}  // namespace scopeflow
