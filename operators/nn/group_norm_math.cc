#include "operators/nn/group_norm_math.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_format.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace nn {
namespace {

// The mean and 1 / sqrt(variance + epsilon) of `count` values, summed in
// double and in two passes (the variance of values far from zero stays
// exact).
struct Moments {
  double mean = 0;
  double inv_std = 0;
};

template <typename T>
Moments MomentsOf(const T* x, int64_t count, double epsilon) {
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += x[i];
  Moments moments;
  moments.mean = count > 0 ? sum / count : 0;
  double squares = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = x[i] - moments.mean;
    squares += d * d;
  }
  const double variance = count > 0 ? squares / count : 0;
  moments.inv_std = 1.0 / std::sqrt(variance + epsilon);
  return moments;
}

}  // namespace

absl::Status CheckGroupNormInputs(const InferContext& context, int64_t groups,
                                  absl::string_view groups_origin,
                                  bool allow_per_group) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 2, 64));
  const VarInfo& x = context.Input("X");
  const int64_t channels = x.has_dims ? x.dims[1] : -1;
  SF_CHECK(groups > 0, "%s: expected a positive number of groups",
           groups_origin);
  SF_CHECK(channels < 0 || channels % groups == 0,
           "%s: expected it to divide the %d channels of %s", groups_origin,
           channels, DescribeInputShape(context, "X"));
  for (const char* slot : {"Scale", "Bias"}) {
    SF_RETURN_IF_ERROR(CheckRank(context, slot, 1, 1));
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", slot));
    const VarInfo& info = context.Input(slot);
    if (!info.has_dims || info.dims[0] < 0 || channels < 0) continue;
    const int64_t size = info.dims[0];
    if (allow_per_group) {
      SF_CHECK(size == channels || size == groups,
               "%s: expected %d values (one per channel of %s) or %d (one "
               "per group, %s)",
               DescribeInputShape(context, slot), channels,
               DescribeInputShape(context, "X"), groups, groups_origin);
    } else {
      SF_CHECK(size == channels,
               "%s: expected %d values, one per channel of %s",
               DescribeInputShape(context, slot), channels,
               DescribeInputShape(context, "X"));
    }
  }
  const VarInfo& scale = context.Input("Scale");
  const VarInfo& bias = context.Input("Bias");
  SF_CHECK(!scale.has_dims || !bias.has_dims || scale.dims[0] < 0 ||
               bias.dims[0] < 0 || scale.dims[0] == bias.dims[0],
           "%s and %s: expected as many values in each",
           DescribeInputShape(context, "Scale"),
           DescribeInputShape(context, "Bias"));
  return absl::OkStatus();
}

GroupNormShape GroupNormShapeOf(const Dims& x_dims, int64_t groups,
                                int64_t scale_size) {
  GroupNormShape shape;
  shape.batch = x_dims[0];
  shape.channels = x_dims[1];
  for (size_t i = 2; i < x_dims.size(); ++i) shape.spatial *= x_dims[i];
  shape.groups = groups;
  shape.per_group = scale_size != shape.channels;
  return shape;
}

template <typename T>
void GroupNormForward(const GroupNormShape& shape, const T* x, const T* scale,
                      const T* bias, double epsilon, T* y) {
  const int64_t per_group = shape.channels / shape.groups;
  const int64_t count = per_group * shape.spatial;
  for (int64_t n = 0; n < shape.batch; ++n) {
    for (int64_t g = 0; g < shape.groups; ++g) {
      const int64_t begin = (n * shape.channels + g * per_group) * shape.spatial;
      const Moments m = MomentsOf(x + begin, count, epsilon);
      for (int64_t k = 0; k < per_group; ++k) {
        const int64_t p = shape.per_group ? g : g * per_group + k;
        // y = x * a + b, folded per channel.
        const double a = m.inv_std * scale[p];
        const double b = bias[p] - m.mean * a;
        const T* in = x + begin + k * shape.spatial;
        T* out = y + begin + k * shape.spatial;
        for (int64_t s = 0; s < shape.spatial; ++s) {
          out[s] = static_cast<T>(in[s] * a + b);
        }
      }
    }
  }
}

template <typename T>
void GroupNormBackward(const GroupNormShape& shape, const T* x, const T* scale,
                       const T* dy, double epsilon, T* dx, T* dscale,
                       T* dbias) {
  const int64_t per_group = shape.channels / shape.groups;
  const int64_t count = per_group * shape.spatial;
  const int64_t params = shape.per_group ? shape.groups : shape.channels;
  std::vector<double> scale_sum(params, 0.0), bias_sum(params, 0.0);
  for (int64_t n = 0; n < shape.batch; ++n) {
    for (int64_t g = 0; g < shape.groups; ++g) {
      const int64_t begin = (n * shape.channels + g * per_group) * shape.spatial;
      const Moments m = MomentsOf(x + begin, count, epsilon);
      // With xhat = (x - mean) * inv_std and dxhat = dy * scale:
      // dx = inv_std * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
      double sum_dxhat = 0, sum_dxhat_xhat = 0;
      for (int64_t k = 0; k < per_group; ++k) {
        const int64_t p = shape.per_group ? g : g * per_group + k;
        const int64_t row = begin + k * shape.spatial;
        double dy_sum = 0, dy_xhat = 0;
        for (int64_t s = 0; s < shape.spatial; ++s) {
          const double xhat = (x[row + s] - m.mean) * m.inv_std;
          dy_sum += dy[row + s];
          dy_xhat += dy[row + s] * xhat;
        }
        sum_dxhat += dy_sum * scale[p];
        sum_dxhat_xhat += dy_xhat * scale[p];
        scale_sum[p] += dy_xhat;
        bias_sum[p] += dy_sum;
      }
      if (dx == nullptr) continue;
      const double mean_dxhat = count > 0 ? sum_dxhat / count : 0;
      const double mean_dxhat_xhat = count > 0 ? sum_dxhat_xhat / count : 0;
      for (int64_t k = 0; k < per_group; ++k) {
        const int64_t p = shape.per_group ? g : g * per_group + k;
        const int64_t row = begin + k * shape.spatial;
        for (int64_t s = 0; s < shape.spatial; ++s) {
          const double xhat = (x[row + s] - m.mean) * m.inv_std;
          dx[row + s] = static_cast<T>(
              m.inv_std * (dy[row + s] * scale[p] - mean_dxhat -
                           xhat * mean_dxhat_xhat));
        }
      }
    }
  }
  for (int64_t p = 0; p < params; ++p) {
    if (dscale != nullptr) dscale[p] = static_cast<T>(scale_sum[p]);
    if (dbias != nullptr) dbias[p] = static_cast<T>(bias_sum[p]);
  }
}

template void GroupNormForward<float>(const GroupNormShape&, const float*,
                                      const float*, const float*, double,
                                      float*);
template void GroupNormForward<double>(const GroupNormShape&, const double*,
                                       const double*, const double*, double,
                                       double*);
template void GroupNormBackward<float>(const GroupNormShape&, const float*,
                                       const float*, const float*, double,
                                       float*, float*, float*);
template void GroupNormBackward<double>(const GroupNormShape&, const double*,
                                        const double*, const double*, double,
                                        double*, double*, double*);

}  // namespace nn
}  // namespace scopeflow
