#include "operators/quantization/quant_params.h"

#include "absl/strings/str_format.h"
#include "framework/float16.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {

std::vector<float> FloatsOf(const Tensor& tensor) {
  std::vector<float> values(tensor.numel());
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    switch (tensor.dtype()) {
      case kFloat16:
        values[i] = HalfToFloat(tensor.data<float16>()[i]);
        break;
      case kFloat64:
        values[i] = static_cast<float>(tensor.data<double>()[i]);
        break;
      default:
        values[i] = tensor.data<float>()[i];
    }
  }
  return values;
}

std::vector<int32_t> IntsOf(const Tensor& tensor) {
  std::vector<int32_t> values(tensor.numel());
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    switch (tensor.dtype()) {
      case kUInt8:
        values[i] = tensor.data<uint8_t>()[i];
        break;
      case kInt8:
        values[i] = tensor.data<int8_t>()[i];
        break;
      case kUInt16:
        values[i] = tensor.data<uint16_t>()[i];
        break;
      case kInt16:
        values[i] = tensor.data<int16_t>()[i];
        break;
      case kInt4:
        values[i] = tensor.data<qint4>()[i].value;
        break;
      case kUInt4:
        values[i] = tensor.data<quint4>()[i].value;
        break;
      case kInt2:
        values[i] = tensor.data<qint2>()[i].value;
        break;
      case kUInt2:
        values[i] = tensor.data<quint2>()[i].value;
        break;
      default:
        values[i] = tensor.data<int32_t>()[i];
    }
  }
  return values;
}

absl::StatusOr<ParamLayout> ParamLayoutOf(const Dims& dims,
                                          const Dims& scale_dims, int64_t axis,
                                          int64_t block_size,
                                          const std::string& what) {
  const int rank = static_cast<int>(dims.size());
  int64_t scale_numel = 1;
  for (int64_t d : scale_dims) scale_numel *= d;
  ParamLayout layout;
  if (block_size <= 0 && scale_numel == 1 && scale_dims.size() <= 1) {
    // Per tensor: one run of every element, all strides 0.
    for (int64_t d : dims) layout.size *= d;
    return layout;
  }
  SF_CHECK(rank > 0,
           "%s: a scalar input takes one scale (a scalar or one element)",
           what);
  SF_ASSIGN_OR_RETURN(const int a, NormalizeAxis(axis, rank));
  const AxisSplit split = SplitAtAxis(dims, a);
  layout.outer = split.outer;
  layout.size = split.size;
  layout.inner = split.inner;
  if (block_size <= 0) {
    SF_CHECK(scale_dims.size() == 1 && scale_dims[0] == dims[a],
             "%s: expected one element (per tensor) or [%d], one per index "
             "of axis %d of the quantized tensor %s (per axis)",
             what, dims[a], a, DimsToString(dims));
    layout.axis_stride = 1;
    return layout;
  }
  Dims expected = dims;
  expected[a] = (dims[a] + block_size - 1) / block_size;
  SF_CHECK(scale_dims == expected,
           "%s: with block_size %d along axis %d of %s, expected %s", what,
           block_size, a, DimsToString(dims), DimsToString(expected));
  layout.block = block_size;
  layout.inner_stride = 1;
  layout.axis_stride = split.inner;
  layout.outer_stride = expected[a] * split.inner;
  return layout;
}

bool IsOneElement(const Dims& dims) {
  return dims.size() <= 1 && (dims.empty() || dims[0] == 1);
}

absl::Status CheckScaleAndZeroPoint(const InferContext& context,
                                    absl::string_view data_slot,
                                    absl::string_view scale_slot,
                                    absl::string_view zero_point_slot,
                                    int64_t axis, int64_t block_size) {
  const VarInfo& scale = context.Input(scale_slot);
  if (context.HasInput(zero_point_slot)) {
    const VarInfo& zero_point = context.Input(zero_point_slot);
    SF_CHECK(!scale.has_dims || !zero_point.has_dims ||
                 scale.dims == zero_point.dims ||
                 (IsOneElement(scale.dims) && IsOneElement(zero_point.dims)),
             "%s: expected the shape of %s",
             DescribeInputShape(context, zero_point_slot),
             DescribeInputShape(context, scale_slot));
  }
  const VarInfo& data = context.Input(data_slot);
  if (!data.has_dims || !scale.has_dims) return absl::OkStatus();
  for (int64_t d : data.dims) {
    if (d < 0) return absl::OkStatus();
  }
  for (int64_t d : scale.dims) {
    if (d < 0) return absl::OkStatus();
  }
  return ParamLayoutOf(data.dims, scale.dims, axis, block_size,
                       DescribeInputShape(context, scale_slot))
      .status();
}

absl::Status CheckPerTensor(const InferContext& context,
                            absl::string_view slot) {
  if (!context.HasInput(slot)) return absl::OkStatus();
  const VarInfo& info = context.Input(slot);
  if (!info.has_dims) return absl::OkStatus();
  SF_CHECK(info.dims.empty() || (info.dims.size() == 1 && info.dims[0] <= 1),
           "%s: expected one element (a scalar or [1])",
           DescribeInputShape(context, slot));
  return absl::OkStatus();
}

absl::Status CheckZeroPointDtype(const InferContext& context,
                                 absl::string_view zero_slot,
                                 absl::string_view data_slot) {
  if (!context.HasInput(zero_slot)) return absl::OkStatus();
  const DataType zero = context.Input(zero_slot).dtype;
  const DataType data = context.Input(data_slot).dtype;
  SF_CHECK(zero == data,
           "%s has dtype %s: a zero point must have the dtype of input "
           "\"%s\" (variable \"%s\"), %s",
           DescribeInputShape(context, zero_slot), DataTypeName(zero),
           data_slot, context.InputName(data_slot), DataTypeName(data));
  return absl::OkStatus();
}

absl::Status CheckOneOrVector(const InferContext& context,
                              absl::string_view slot, int64_t count,
                              absl::string_view per) {
  if (!context.HasInput(slot)) return absl::OkStatus();
  const VarInfo& info = context.Input(slot);
  if (!info.has_dims) return absl::OkStatus();
  const bool one =
      info.dims.empty() || (info.dims.size() == 1 && info.dims[0] == 1);
  const bool vector = info.dims.size() == 1 &&
                      (count < 0 || info.dims[0] < 0 || info.dims[0] == count);
  SF_CHECK(one || vector, "%s: expected one element or [%d], one per %s",
           DescribeInputShape(context, slot), count, per);
  return absl::OkStatus();
}

namespace {

template <typename T, typename Read>
absl::StatusOr<std::vector<T>> ValuesPer(const KernelContext& context,
                                         absl::string_view slot, int64_t count,
                                         T absent, Read read) {
  if (!context.HasInput(slot)) return std::vector<T>(count, absent);
  const Tensor& tensor = context.Input(slot);
  std::vector<T> values = read(tensor);
  if (values.size() == 1) return std::vector<T>(count, values[0]);
  SF_CHECK(tensor.rank() == 1 && tensor.numel() == count,
           "input \"%s\" (variable \"%s\") is %s: expected one element or %d",
           slot, context.InputName(slot), tensor.DebugString(), count);
  return values;
}

}  // namespace

absl::StatusOr<std::vector<float>> FloatsPer(const KernelContext& context,
                                             absl::string_view slot,
                                             int64_t count) {
  return ValuesPer<float>(context, slot, count, 1.0f, &FloatsOf);
}

absl::StatusOr<std::vector<int32_t>> IntsPer(const KernelContext& context,
                                             absl::string_view slot,
                                             int64_t count) {
  return ValuesPer<int32_t>(context, slot, count, 0, &IntsOf);
}

float HalfMultiplier(float a, float b, float c) {
  const float ab = HalfToFloat(FloatToHalf(a * b));
  return HalfToFloat(FloatToHalf(ab / c));
}

float Multiplier(DataType scale_dtype, float a, float b, float y) {
  if (scale_dtype == kFloat16) return HalfMultiplier(a, b, y);
  return a * b / y;
}

}  // namespace scopeflow
