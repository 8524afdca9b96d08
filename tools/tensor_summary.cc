#include "tools/tensor_summary.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace scopeflow {
namespace {

double ElementAsDouble(const Tensor& tensor, int64_t i) {
  switch (tensor.dtype()) {
    case DATA_TYPE_FLOAT32:
      return tensor.data<float>()[i];
    case DATA_TYPE_FLOAT64:
      return tensor.data<double>()[i];
    case DATA_TYPE_FLOAT16:
      return HalfToFloat(tensor.data<float16>()[i]);
    case DATA_TYPE_INT32:
      return tensor.data<int32_t>()[i];
    case DATA_TYPE_INT64:
      return static_cast<double>(tensor.data<int64_t>()[i]);
    case DATA_TYPE_UINT8:
      return tensor.data<uint8_t>()[i];
    case DATA_TYPE_INT8:
      return tensor.data<int8_t>()[i];
    case DATA_TYPE_INT16:
      return tensor.data<int16_t>()[i];
    case DATA_TYPE_UINT16:
      return tensor.data<uint16_t>()[i];
    case DATA_TYPE_UINT32:
      return tensor.data<uint32_t>()[i];
    case DATA_TYPE_UINT64:
      return static_cast<double>(tensor.data<uint64_t>()[i]);
    case DATA_TYPE_BFLOAT16:
      return BFloat16ToFloat(tensor.data<bfloat16>()[i]);
    case DATA_TYPE_FLOAT8E4M3FN:
      return Float8ToFloat(tensor.data<float8_e4m3fn>()[i]);
    case DATA_TYPE_FLOAT8E4M3FNUZ:
      return Float8ToFloat(tensor.data<float8_e4m3fnuz>()[i]);
    case DATA_TYPE_FLOAT8E5M2:
      return Float8ToFloat(tensor.data<float8_e5m2>()[i]);
    case DATA_TYPE_FLOAT8E5M2FNUZ:
      return Float8ToFloat(tensor.data<float8_e5m2fnuz>()[i]);
    case DATA_TYPE_BOOL:
      return tensor.data<bool>()[i] ? 1 : 0;
    case DATA_TYPE_INT4:
      return tensor.data<qint4>()[i].value;
    case DATA_TYPE_UINT4:
      return tensor.data<quint4>()[i].value;
    case DATA_TYPE_INT2:
      return tensor.data<qint2>()[i].value;
    case DATA_TYPE_UINT2:
      return tensor.data<quint2>()[i].value;
    case DATA_TYPE_FLOAT4E2M1:
      return Float4E2M1BitsToFloat(tensor.data<float4_e2m1>()[i].bits);
    case DATA_TYPE_FLOAT8E8M0:
      return Float8E8M0BitsToFloat(tensor.data<float8_e8m0>()[i].bits);
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace

std::string SummarizeTensor(const Tensor& tensor, int max_values) {
  std::string out = absl::StrCat(DataTypeName(tensor.dtype()), " ",
                                 DimsToString(tensor.dims()));
  if (tensor.numel() == 0 || !tensor.initialized()) return out + " (empty)";
  std::vector<std::string> shown;
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  double sum = 0;
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    const double value = ElementAsDouble(tensor, i);
    if (i < max_values) shown.push_back(absl::StrFormat("%.6g", value));
    low = std::min(low, value);
    high = std::max(high, value);
    sum += value;
  }
  if (tensor.numel() > max_values) shown.push_back("...");
  absl::StrAppendFormat(&out, " values [%s] min %.6g max %.6g mean %.6g",
                        absl::StrJoin(shown, ", "), low, high,
                        sum / static_cast<double>(tensor.numel()));
  return out;
}

}  // namespace scopeflow
