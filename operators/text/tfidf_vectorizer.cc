// tfidf_vectorizer: n-gram counts of integer token sequences, as ONNX's
// TfIdfVectorizer (9) defines them. Input "X" is int32 or int64, [C] (one
// sequence) or [B, C] (B sequences); Out is float32, [size] or [B, size]
// with size = max(ngram_indexes) + 1.
//
// The vocabulary is "pool": its first n-grams are the unigrams, from
// ngram_counts[0] on, the bigrams from ngram_counts[1] on, and so on; the
// i-th n-gram of the pool (counting every size) is counted at output
// position ngram_indexes[i]. N-grams of sizes min_gram_length to
// max_gram_length are counted: each occurrence of x[s], x[s + d], ...,
// x[s + (n - 1) d] for every skip distance d = 1 .. max_skip_count + 1
// (unigrams once, whatever d). "mode" turns counts into Out: TF the
// counts, IDF weights[j] (or 1 without weights) where count j is nonzero,
// TFIDF weights[j] times the count (or the count).
//
// No gradient: the input is integer tokens.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kTokenDtypes[] = {kInt32, kInt64};

// The pool's n-grams of the sizes counted, each to its output position.
// Built from the attributes for each run; read-only after.
struct Vocabulary {
  // Keyed by the n-gram's tokens; an n-gram listed twice counts at the
  // later position, as ONNX's reference has it.
  absl::flat_hash_map<std::vector<int64_t>, int64_t> positions;
  int64_t output_size = 0;
  int min_size = 1;
  int max_size = 1;
  int max_skip = 0;
};

absl::StatusOr<Vocabulary> VocabularyOf(const Attributes& attrs) {
  Vocabulary vocabulary;
  vocabulary.min_size = attrs.Get<int32_t>("min_gram_length");
  vocabulary.max_size = attrs.Get<int32_t>("max_gram_length");
  vocabulary.max_skip = attrs.Get<int32_t>("max_skip_count");
  const auto& counts = attrs.Get<std::vector<int64_t>>("ngram_counts");
  const auto& indexes = attrs.Get<std::vector<int64_t>>("ngram_indexes");
  const auto& pool = attrs.Get<std::vector<int64_t>>("pool");
  const auto& weights = attrs.Get<std::vector<float>>("weights");
  SF_CHECK(
      vocabulary.min_size >= 1 && vocabulary.min_size <= vocabulary.max_size,
      "min_gram_length %d and max_gram_length %d: expected 1 <= min <= "
      "max",
      vocabulary.min_size, vocabulary.max_size);
  SF_CHECK(!indexes.empty(),
           "ngram_indexes is empty: expected an output "
           "position per n-gram of the pool");
  for (int64_t index : indexes) {
    SF_CHECK(index >= 0, "ngram_indexes holds %d: expected positions >= 0",
             index);
  }
  vocabulary.output_size =
      *std::max_element(indexes.begin(), indexes.end()) + 1;
  SF_CHECK(weights.empty() ||
               static_cast<int64_t>(weights.size()) >= vocabulary.output_size,
           "weights has %d values: expected one per output position (%d)",
           weights.size(), vocabulary.output_size);
  const int64_t pool_size = static_cast<int64_t>(pool.size());
  int64_t id = 0;  // the pool's n-gram count so far, every size
  for (size_t size_index = 0; size_index < counts.size(); ++size_index) {
    const int64_t size = static_cast<int64_t>(size_index) + 1;
    const int64_t begin = counts[size_index];
    const int64_t end =
        size_index + 1 < counts.size() ? counts[size_index + 1] : pool_size;
    SF_CHECK(0 <= begin && begin <= end && end <= pool_size &&
                 (end - begin) % size == 0,
             "ngram_counts[%d] = %d: the %d-grams' part of the pool, [%d, "
             "%d) of %d values, must be whole %d-grams",
             size_index, begin, size, begin, end, pool_size, size);
    for (int64_t at = begin; at < end; at += size, ++id) {
      if (size < vocabulary.min_size || size > vocabulary.max_size) continue;
      SF_CHECK(id < static_cast<int64_t>(indexes.size()),
               "the pool holds more n-grams than ngram_indexes has positions "
               "(%d)",
               indexes.size());
      vocabulary.positions[std::vector<int64_t>(
          pool.begin() + at, pool.begin() + at + size)] = indexes[id];
    }
  }
  return vocabulary;
}

absl::Status InferTfIdf(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kTokenDtypes));
  SF_RETURN_IF_ERROR(CheckRank(context, "X", 1, 2));
  SF_ASSIGN_OR_RETURN(const Vocabulary vocabulary,
                      VocabularyOf(context.attrs()));
  const VarInfo& x = context.Input("X");
  if (x.has_dims && x.dims.size() == 2) {
    context.SetOutput("Out", 0, kFloat32, {x.dims[0], vocabulary.output_size});
  } else {
    context.SetOutput("Out", 0, kFloat32, {vocabulary.output_size});
  }
  return absl::OkStatus();
}

// Adds one to counts[position] for each n-gram of `row` found.
template <typename T>
void CountRow(const T* row, int64_t length, const Vocabulary& vocabulary,
              std::vector<int64_t>& counts) {
  std::vector<int64_t> key;
  for (int64_t n = vocabulary.min_size; n <= vocabulary.max_size; ++n) {
    const int64_t max_distance = n == 1 ? 1 : vocabulary.max_skip + 1;
    for (int64_t d = 1; d <= max_distance; ++d) {
      for (int64_t s = 0; s + (n - 1) * d < length; ++s) {
        key.clear();
        for (int64_t k = 0; k < n; ++k) key.push_back(row[s + k * d]);
        const auto found = vocabulary.positions.find(key);
        if (found != vocabulary.positions.end()) ++counts[found->second];
      }
    }
  }
}

template <typename T>
absl::Status TfIdfKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const Vocabulary vocabulary,
                      VocabularyOf(context.attrs()));
  const Tensor& x = context.Input("X");
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t length = x.rank() == 2 ? x.dim(1) : x.dim(0);
  const std::string& mode = context.attrs().Get<std::string>("mode");
  const auto& weights = context.attrs().Get<std::vector<float>>("weights");
  float* out = context.Output("Out")->data<float>();
  std::vector<int64_t> counts(vocabulary.output_size);
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0);
    CountRow(x.data<T>() + r * length, length, vocabulary, counts);
    float* row_out = out + r * vocabulary.output_size;
    for (int64_t j = 0; j < vocabulary.output_size; ++j) {
      const float weight = weights.empty() ? 1.0f : weights[j];
      const float count = static_cast<float>(counts[j]);
      if (mode == "TF") {
        row_out[j] = count;
      } else if (mode == "IDF") {
        row_out[j] = counts[j] > 0 ? weight : 0.0f;
      } else {
        row_out[j] = weight * count;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(tfidf_vectorizer)
    .Input("X")
    .Output("Out")
    .Attr("min_gram_length", AttrType::kInt)
    .Attr("max_gram_length", AttrType::kInt)
    .Attr("max_skip_count", AttrType::kInt, NonNegative())
    .Attr("mode", AttrType::kString, OneOf({"TF", "IDF", "TFIDF"}))
    .Attr("ngram_counts", AttrType::kInt64s)
    .Attr("ngram_indexes", AttrType::kInt64s)
    .Attr("pool", AttrType::kInt64s)
    .Attr("weights", AttrType::kFloats, AttrValue(std::vector<float>()))
    .Infer(InferTfIdf)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kInt32, &TfIdfKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &TfIdfKernel<int64_t>);

}  // namespace scopeflow
