// roi_align (ONNX RoiAlign, opsets 10 and 16; torchvision.ops.roi_align):
// for each region of interest, a fixed [output_height, output_width] grid
// of bins over its box in image X of its batch index; each bin is the
// average ("avg") or maximum ("max") of bilinear samples on a regular
// sampling_ratio x sampling_ratio grid in the bin (ceil(bin size) a side
// with sampling_ratio 0). Rois [num_rois, 4] are (x1, y1, x2, y2) in input
// coordinates, scaled by spatial_scale; "half_pixel" shifts them by -0.5
// pixel (opset 16's default, torchvision's aligned=True), while
// "output_half_pixel" does not and makes a region at least 1 x 1 (opset
// 10). As in ONNX Runtime, "max" takes the largest of the weighted corner
// values of each sample. Out is [num_rois, C, output_height,
// output_width].
//
// X's gradient (roi_align_grad) sends each output gradient back through
// the bilinear weights: to every corner of every sample, divided by the
// sample count, for "avg"; to the corner that gave the maximum for "max".
// The boxes and indices get none.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// One bilinear sample: the offsets in a [H, W] plane of its 4 corners and
// their weights (all 0 for a sample outside the image).
template <typename T>
struct Sample {
  int64_t offset[4];
  T weight[4];
};

struct RoiAlignParams {
  int64_t out_h, out_w, sampling_ratio;
  double spatial_scale;
  bool half_pixel, max_mode;
};

RoiAlignParams ParamsOf(const Attributes& attrs) {
  return {
      attrs.Get<int64_t>("output_height"),
      attrs.Get<int64_t>("output_width"),
      attrs.Get<int64_t>("sampling_ratio"),
      attrs.Get<float>("spatial_scale"),
      attrs.Get<std::string>("coordinate_transformation_mode") == "half_pixel",
      attrs.Get<std::string>("mode") == "max"};
}

template <typename T>
Sample<T> Bilinear(T y, T x, int64_t height, int64_t width) {
  Sample<T> sample = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  if (y < -1 || y > height || x < -1 || x > width) return sample;
  y = std::max<T>(y, 0);
  x = std::max<T>(x, 0);
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high = y_low + 1, x_high = x_low + 1;
  if (y_low >= height - 1) {
    y_low = y_high = height - 1;
    y = static_cast<T>(y_low);
  }
  if (x_low >= width - 1) {
    x_low = x_high = width - 1;
    x = static_cast<T>(x_low);
  }
  const T ly = y - y_low, lx = x - x_low, hy = 1 - ly, hx = 1 - lx;
  sample.offset[0] = y_low * width + x_low;
  sample.offset[1] = y_low * width + x_high;
  sample.offset[2] = y_high * width + x_low;
  sample.offset[3] = y_high * width + x_high;
  sample.weight[0] = hy * hx;
  sample.weight[1] = hy * lx;
  sample.weight[2] = ly * hx;
  sample.weight[3] = ly * lx;
  return sample;
}

// The samples of every bin of one region, bin by bin, and how many a bin
// has.
template <typename T>
std::vector<Sample<T>> RoiSamples(const T* roi, const RoiAlignParams& p,
                                  int64_t height, int64_t width,
                                  int64_t* per_bin) {
  const T offset = p.half_pixel ? T(0.5) : T(0);
  const T scale = static_cast<T>(p.spatial_scale);
  const T start_w = roi[0] * scale - offset, start_h = roi[1] * scale - offset;
  T roi_w = roi[2] * scale - offset - start_w;
  T roi_h = roi[3] * scale - offset - start_h;
  if (!p.half_pixel) {
    roi_w = std::max<T>(roi_w, 1);
    roi_h = std::max<T>(roi_h, 1);
  }
  const T bin_h = roi_h / p.out_h, bin_w = roi_w / p.out_w;
  // A region of negative extent (half_pixel) has no samples: its bins are
  // 0, as in ONNX Runtime.
  const int64_t grid_h = std::max<int64_t>(
      0, p.sampling_ratio > 0
             ? p.sampling_ratio
             : static_cast<int64_t>(std::ceil(roi_h / p.out_h)));
  const int64_t grid_w = std::max<int64_t>(
      0, p.sampling_ratio > 0
             ? p.sampling_ratio
             : static_cast<int64_t>(std::ceil(roi_w / p.out_w)));
  *per_bin = grid_h * grid_w;
  std::vector<Sample<T>> samples;
  samples.reserve(p.out_h * p.out_w * *per_bin);
  for (int64_t ph = 0; ph < p.out_h; ++ph) {
    for (int64_t pw = 0; pw < p.out_w; ++pw) {
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        const T y = start_h + ph * bin_h + (iy + T(0.5)) * bin_h / grid_h;
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          const T x = start_w + pw * bin_w + (ix + T(0.5)) * bin_w / grid_w;
          samples.push_back(Bilinear<T>(y, x, height, width));
        }
      }
    }
  }
  return samples;
}

// Which corner of which sample of a bin gives its "max" value:
// -1 for a bin without samples.
template <typename T>
int64_t ArgMaxCorner(const Sample<T>* samples, int64_t count, const T* plane,
                     T* max_value) {
  int64_t best = -1;
  T best_value = 0;
  for (int64_t s = 0; s < count; ++s) {
    for (int k = 0; k < 4; ++k) {
      const T value = samples[s].weight[k] * plane[samples[s].offset[k]];
      if (best < 0 || value > best_value) {
        best = s * 4 + k;
        best_value = value;
      }
    }
  }
  *max_value = best_value;
  return best;
}

absl::Status CheckRoiInputs(const InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Rois"));
  SF_RETURN_IF_ERROR(CheckDtype(context, "BatchIndices", kInt64));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 4, 4));
  SF_RETURN_IF_ERROR(CheckRank(context, "Rois", 2, 2));
  SF_RETURN_IF_ERROR(CheckRank(context, "BatchIndices", 1, 1));
  const VarInfo& rois = context.Input("Rois");
  const VarInfo& indices = context.Input("BatchIndices");
  if (rois.has_dims) {
    SF_CHECK(rois.dims[1] == 4 || rois.dims[1] < 0,
             "%s: expected [num_rois, 4], (x1, y1, x2, y2) a region",
             DescribeInputShape(context, "Rois"));
  }
  if (rois.has_dims && indices.has_dims) {
    SF_CHECK(rois.dims[0] < 0 || indices.dims[0] < 0 ||
                 rois.dims[0] == indices.dims[0],
             "%s and %s: expected one batch index a region",
             DescribeInputShape(context, "Rois"),
             DescribeInputShape(context, "BatchIndices"));
  }
  return absl::OkStatus();
}

absl::Status InferRoiAlign(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckRoiInputs(context));
  const VarInfo& x = context.Input("X");
  const VarInfo& rois = context.Input("Rois");
  const VarInfo& indices = context.Input("BatchIndices");
  int64_t num_rois = rois.has_dims ? rois.dims[0] : -1;
  if (num_rois < 0 && indices.has_dims) num_rois = indices.dims[0];
  context.SetOutput("Out",
                    VarInfo{x.dtype,
                            {num_rois, x.has_dims ? x.dims[1] : -1,
                             context.attrs().Get<int64_t>("output_height"),
                             context.attrs().Get<int64_t>("output_width")},
                            true});
  return absl::OkStatus();
}

// Each region's batch index, checked against X's batch size.
absl::Status CheckBatchIndices(const KernelContext& context, int64_t batch) {
  const Tensor& indices = context.Input("BatchIndices");
  for (int64_t r = 0; r < indices.numel(); ++r) {
    const int64_t b = indices.data<int64_t>()[r];
    SF_CHECK(b >= 0 && b < batch,
             "input \"BatchIndices\" (variable \"%s\") holds %d for region "
             "%d: expected a batch index of input \"X\" (variable \"%s\"), "
             "within [0, %d)",
             context.InputName("BatchIndices"), b, r, context.InputName("X"),
             batch);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status RoiAlignKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& rois = context.Input("Rois");
  const int64_t channels = x.dims()[1], height = x.dims()[2],
                width = x.dims()[3];
  SF_RETURN_IF_ERROR(CheckBatchIndices(context, x.dims()[0]));
  const RoiAlignParams p = ParamsOf(context.attrs());
  const int64_t bins = p.out_h * p.out_w, plane = height * width;
  T* out = context.Output("Out")->data<T>();
  for (int64_t r = 0; r < rois.dims()[0]; ++r) {
    int64_t per_bin = 0;
    const std::vector<Sample<T>> samples =
        RoiSamples(rois.data<T>() + r * 4, p, height, width, &per_bin);
    const int64_t b = context.Input("BatchIndices").data<int64_t>()[r];
    for (int64_t c = 0; c < channels; ++c) {
      const T* image = x.data<T>() + (b * channels + c) * plane;
      T* out_plane = out + (r * channels + c) * bins;
      for (int64_t bin = 0; bin < bins; ++bin) {
        const Sample<T>* bin_samples = samples.data() + bin * per_bin;
        T value = 0;
        if (p.max_mode) {
          ArgMaxCorner(bin_samples, per_bin, image, &value);
        } else {
          for (int64_t s = 0; s < per_bin; ++s) {
            for (int k = 0; k < 4; ++k) {
              value +=
                  bin_samples[s].weight[k] * image[bin_samples[s].offset[k]];
            }
          }
          value /= std::max<int64_t>(per_bin, 1);
        }
        out_plane[bin] = value;
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status RoiAlignGradKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& rois = context.Input("Rois");
  const int64_t channels = x.dims()[1], height = x.dims()[2],
                width = x.dims()[3];
  SF_RETURN_IF_ERROR(CheckBatchIndices(context, x.dims()[0]));
  const RoiAlignParams p = ParamsOf(context.attrs());
  const int64_t bins = p.out_h * p.out_w, plane = height * width;
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const T* out_grad = context.Input("Out@GRAD").data<T>();
  Tensor* x_grad = context.Output("X@GRAD");
  std::fill_n(x_grad->data<T>(), x_grad->numel(), T(0));
  for (int64_t r = 0; r < rois.dims()[0]; ++r) {
    int64_t per_bin = 0;
    const std::vector<Sample<T>> samples =
        RoiSamples(rois.data<T>() + r * 4, p, height, width, &per_bin);
    const int64_t b = context.Input("BatchIndices").data<int64_t>()[r];
    for (int64_t c = 0; c < channels; ++c) {
      const T* image = x.data<T>() + (b * channels + c) * plane;
      T* grad_plane = x_grad->data<T>() + (b * channels + c) * plane;
      const T* out_plane = out_grad + (r * channels + c) * bins;
      for (int64_t bin = 0; bin < bins; ++bin) {
        const Sample<T>* bin_samples = samples.data() + bin * per_bin;
        if (p.max_mode) {
          T unused;
          const int64_t best =
              ArgMaxCorner(bin_samples, per_bin, image, &unused);
          if (best < 0) continue;
          const Sample<T>& sample = bin_samples[best / 4];
          grad_plane[sample.offset[best % 4]] +=
              sample.weight[best % 4] * out_plane[bin];
          continue;
        }
        const T share = out_plane[bin] / std::max<int64_t>(per_bin, 1);
        for (int64_t s = 0; s < per_bin; ++s) {
          for (int k = 0; k < 4; ++k) {
            grad_plane[bin_samples[s].offset[k]] +=
                bin_samples[s].weight[k] * share;
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(roi_align)
    .Input("X")
    .Input("Rois")
    .Input("BatchIndices")
    .Output("Out")
    .Attr("mode", AttrType::kString, AttrValue(std::string("avg")),
          OneOf({"avg", "max"}))
    .Attr("output_height", AttrType::kInt64, AttrValue(int64_t{1}), Positive())
    .Attr("output_width", AttrType::kInt64, AttrValue(int64_t{1}), Positive())
    .Attr("sampling_ratio", AttrType::kInt64, AttrValue(int64_t{0}),
          NonNegative())
    .Attr("spatial_scale", AttrType::kFloat, AttrValue(1.0f), Positive())
    .Attr("coordinate_transformation_mode", AttrType::kString,
          AttrValue(std::string("half_pixel")),
          OneOf({"half_pixel", "output_half_pixel"}))
    .Infer(InferRoiAlign)
    .Grad(GradSpec("roi_align_grad")
              .ReadInput("X")
              .ReadInput("Rois")
              .ReadInput("BatchIndices")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &RoiAlignKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &RoiAlignKernel<double>);

SF_REGISTER_OP(roi_align_grad)
    .Input("X")
    .Input("Rois")
    .Input("BatchIndices")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("mode", AttrType::kString, AttrValue(std::string("avg")),
          OneOf({"avg", "max"}))
    .Attr("output_height", AttrType::kInt64, AttrValue(int64_t{1}), Positive())
    .Attr("output_width", AttrType::kInt64, AttrValue(int64_t{1}), Positive())
    .Attr("sampling_ratio", AttrType::kInt64, AttrValue(int64_t{0}),
          NonNegative())
    .Attr("spatial_scale", AttrType::kFloat, AttrValue(1.0f), Positive())
    .Attr("coordinate_transformation_mode", AttrType::kString,
          AttrValue(std::string("half_pixel")),
          OneOf({"half_pixel", "output_half_pixel"}))
    .Infer(GradsLikeInputs({"X"}))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &RoiAlignGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &RoiAlignGradKernel<double>);

}  // namespace scopeflow
