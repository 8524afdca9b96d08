// unique (ONNX Unique, numpy.unique): the distinct elements of X, or with
// "flatten" false its distinct slices along "axis", with optional outputs
// "Indices" (where each first occurs in X), "InverseIndices" (which one
// each element or slice of X is) and "Counts" (how often each occurs), all
// int64. "sorted" (the default) orders them ascending, slices
// lexicographically in row-major order as numpy does; otherwise in the
// order they first occur. NaNs equal each other and sort last.
//
// How many there are depends on X's values: inference counts them at run
// time and leaves the count unknown (-1) at Prepare. No gradient: Out is
// X's elements reordered while they are distinct, and where two tie (where
// unique merges anything) it is not differentiable.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kUniqueDtypes[] = {kFloat32, kFloat64, kInt32,
                                      kInt64,   kUInt8,   kInt8};

template <typename T>
bool Less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename T>
bool Same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) && std::isnan(b)) return true;
  }
  return a == b;
}

// X seen as [outer, count, inner] around the axis (flattened: [1, numel,
// 1]); slice j is X[o, j, i] for every o, i in row-major order.
struct Slices {
  int64_t outer = 1;
  int64_t count = 0;
  int64_t inner = 1;
};

absl::StatusOr<Slices> SlicesOf(const Dims& dims, const Attributes& attrs,
                                const std::string& x) {
  Slices slices;
  if (attrs.Get<bool>("flatten")) {
    slices.count = 1;
    for (int64_t d : dims) slices.count *= d;
    return slices;
  }
  const int rank = static_cast<int>(dims.size());
  const int64_t axis = attrs.Get<int32_t>("axis");
  SF_CHECK(axis >= -rank && axis < rank,
           "attribute \"axis\" = %d is out of range for %s: expected [%d, %d)",
           axis, x, -rank, rank);
  const AxisSplit split =
      SplitAtAxis(dims, static_cast<int>(axis < 0 ? axis + rank : axis));
  slices.outer = split.outer;
  slices.count = split.size;
  slices.inner = split.inner;
  return slices;
}

// The distinct slices: `first` holds where each first occurs, in output
// order; `inverse` which of them each slice of X is; `counts` how many.
struct Groups {
  std::vector<int64_t> first;
  std::vector<int64_t> inverse;
  std::vector<int64_t> counts;
};

template <typename T>
Groups GroupSlices(const T* x, const Slices& s, bool sorted) {
  auto element = [&](int64_t j, int64_t e) {
    return x[((e / s.inner) * s.count + j) * s.inner + e % s.inner];
  };
  const int64_t size = s.outer * s.inner;
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t e = 0; e < size; ++e) {
      const T u = element(a, e);
      const T v = element(b, e);
      if (Less(u, v)) return true;
      if (Less(v, u)) return false;
    }
    return false;
  };
  auto same = [&](int64_t a, int64_t b) {
    for (int64_t e = 0; e < size; ++e) {
      if (!Same(element(a, e), element(b, e))) return false;
    }
    return true;
  };
  std::vector<int64_t> order(s.count);
  std::iota(order.begin(), order.end(), 0);
  // Stable: within a group, the first occurrence comes first.
  std::stable_sort(order.begin(), order.end(), less);
  Groups groups;
  groups.inverse.resize(s.count);
  for (int64_t k = 0; k < s.count; ++k) {
    if (k == 0 || !same(order[k - 1], order[k])) {
      groups.first.push_back(order[k]);
      groups.counts.push_back(0);
    }
    groups.inverse[order[k]] = static_cast<int64_t>(groups.first.size()) - 1;
    ++groups.counts.back();
  }
  if (!sorted) {
    // Renumber the groups by first occurrence.
    const int64_t n = static_cast<int64_t>(groups.first.size());
    std::vector<int64_t> by_first(n);
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
      return groups.first[a] < groups.first[b];
    });
    std::vector<int64_t> position(n);
    Groups renumbered;
    for (int64_t g = 0; g < n; ++g) {
      position[by_first[g]] = g;
      renumbered.first.push_back(groups.first[by_first[g]]);
      renumbered.counts.push_back(groups.counts[by_first[g]]);
    }
    renumbered.inverse = groups.inverse;
    for (int64_t& g : renumbered.inverse) g = position[g];
    return renumbered;
  }
  return groups;
}

Groups GroupSlicesOf(const Tensor& x, const Slices& s, bool sorted) {
  switch (x.dtype()) {
    case kFloat32:
      return GroupSlices(x.data<float>(), s, sorted);
    case kFloat64:
      return GroupSlices(x.data<double>(), s, sorted);
    case kInt32:
      return GroupSlices(x.data<int32_t>(), s, sorted);
    case kUInt8:
      return GroupSlices(x.data<uint8_t>(), s, sorted);
    case kInt8:
      return GroupSlices(x.data<int8_t>(), s, sorted);
    default:
      return GroupSlices(x.data<int64_t>(), s, sorted);
  }
}

std::string DescribeX(const std::string& var, const Dims& dims) {
  return absl::StrFormat("input \"X\" (variable \"%s\", shape %s)", var,
                         DimsToString(dims));
}

absl::Status InferUnique(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kUniqueDtypes));
  const VarInfo& x = context.Input("X");
  const bool flatten = context.attrs().Get<bool>("flatten");
  int64_t distinct = -1;
  int64_t slices = -1;
  Dims out_dims = {-1};
  if (x.has_dims) {
    const bool known = std::none_of(x.dims.begin(), x.dims.end(),
                                    [](int64_t d) { return d < 0; });
    if (known) {
      SF_ASSIGN_OR_RETURN(const Slices s,
                          SlicesOf(x.dims, context.attrs(),
                                   DescribeX(context.InputName("X"), x.dims)));
      slices = s.count;
      if (const Tensor* value = context.InputValue("X")) {
        SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(*value));
        distinct = static_cast<int64_t>(
            GroupSlicesOf(host, s, context.attrs().Get<bool>("sorted"))
                .first.size());
      }
    }
    if (!flatten) {
      const int rank = static_cast<int>(x.dims.size());
      const int64_t axis = context.attrs().Get<int32_t>("axis");
      SF_CHECK(axis >= -rank && axis < rank,
               "attribute \"axis\" = %d is out of range for %s: expected [%d, "
               "%d)",
               axis, DescribeX(context.InputName("X"), x.dims), -rank, rank);
      const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
      out_dims = x.dims;
      slices = x.dims[a];
      out_dims[a] = distinct;
    } else {
      out_dims = {distinct};
    }
  }
  context.SetOutput("Out", VarInfo{x.dtype, out_dims, x.has_dims || flatten});
  if (context.HasOutput("Indices")) {
    context.SetOutput("Indices", 0, kInt64, {distinct});
  }
  if (context.HasOutput("InverseIndices")) {
    context.SetOutput("InverseIndices", 0, kInt64, {slices});
  }
  if (context.HasOutput("Counts")) {
    context.SetOutput("Counts", 0, kInt64, {distinct});
  }
  return absl::OkStatus();
}

void CopyInts(const std::vector<int64_t>& values, Tensor* out) {
  std::copy(values.begin(), values.end(), out->data<int64_t>());
}

template <typename T>
absl::Status UniqueKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const Slices s,
                      SlicesOf(x.dims(), context.attrs(),
                               DescribeX(context.InputName("X"), x.dims())));
  const Groups groups =
      GroupSlices(x.data<T>(), s, context.attrs().Get<bool>("sorted"));
  const int64_t distinct = static_cast<int64_t>(groups.first.size());
  Tensor* out = context.Output("Out");
  // Inference grouped the same values (every run: Prepare cannot know how
  // many there are).
  SF_CHECK_CODE(out->numel() == distinct * s.outer * s.inner,
                absl::StatusCode::kInternal,
                "output \"Out\" (variable \"%s\") was allocated as %s for %d "
                "distinct slices of input \"X\" (variable \"%s\")",
                context.OutputName("Out"), DimsToString(out->dims()), distinct,
                context.InputName("X"));
  const T* src = x.data<T>();
  T* dst = out->data<T>();
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t g = 0; g < distinct; ++g) {
      const T* from = src + (o * s.count + groups.first[g]) * s.inner;
      std::copy(from, from + s.inner, dst + (o * distinct + g) * s.inner);
    }
  }
  if (context.HasOutput("Indices")) {
    CopyInts(groups.first, context.Output("Indices"));
  }
  if (context.HasOutput("InverseIndices")) {
    CopyInts(groups.inverse, context.Output("InverseIndices"));
  }
  if (context.HasOutput("Counts")) {
    CopyInts(groups.counts, context.Output("Counts"));
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(unique)
    .Input("X")
    .Output("Out")
    .Output("Indices", /*optional=*/true)
    .Output("InverseIndices", /*optional=*/true)
    .Output("Counts", /*optional=*/true)
    .Attr("flatten", AttrType::kBool, AttrValue(true))
    .Attr("axis", AttrType::kInt, AttrValue(0))
    .Attr("sorted", AttrType::kBool, AttrValue(true))
    .Infer(InferUnique)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &UniqueKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &UniqueKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &UniqueKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &UniqueKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kUInt8, &UniqueKernel<uint8_t>)
    .Kernel(DeviceType::kCPU, kInt8, &UniqueKernel<int8_t>);

}  // namespace scopeflow
