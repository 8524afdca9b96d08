// Converter of ONNX's TfIdfVectorizer onto the tfidf_vectorizer op.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// TfIdfVectorizer (9): integer pools only (scopeflow has no strings).
absl::Status ConvertTfIdfVectorizer(NodeContext& context) {
  SF_CHECK(context.opset() >= 9,
           "ONNX %s exists from opset 9 on: the model imports opset %d",
           context.op_type(), context.opset());
  SF_CHECK_CODE(!context.HasAttr("pool_strings"),
                absl::StatusCode::kUnimplemented,
                "TfIdfVectorizer with pool_strings: scopeflow has no string "
                "tensors (integer pools, pool_int64s, only)");
  SF_ASSIGN_OR_RETURN(const int64_t min, context.IntAttr("min_gram_length"));
  SF_ASSIGN_OR_RETURN(const int64_t max, context.IntAttr("max_gram_length"));
  SF_ASSIGN_OR_RETURN(const int64_t skip, context.IntAttr("max_skip_count"));
  SF_ASSIGN_OR_RETURN(const std::string mode, context.StringAttr("mode"));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> counts,
                      context.IntsAttr("ngram_counts"));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> indexes,
                      context.IntsAttr("ngram_indexes"));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> pool,
                      context.IntsAttr("pool_int64s"));
  SF_ASSIGN_OR_RETURN(const std::vector<float> weights,
                      context.FloatsAttr("weights", std::vector<float>()));
  SF_ASSIGN_OR_RETURN(const int32_t min32, ToInt32(min, "min_gram_length"));
  SF_ASSIGN_OR_RETURN(const int32_t max32, ToInt32(max, "max_gram_length"));
  SF_ASSIGN_OR_RETURN(const int32_t skip32, ToInt32(skip, "max_skip_count"));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("tfidf_vectorizer")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("min_gram_length", min32)
                          .Attr("max_gram_length", max32)
                          .Attr("max_skip_count", skip32)
                          .Attr("mode", mode)
                          .Attr("ngram_counts", counts)
                          .Attr("ngram_indexes", indexes)
                          .Attr("pool", pool)
                          .Attr("weights", weights));
}

}  // namespace

void AddTfIdfConverters(ConverterMap& map) {
  map["TfIdfVectorizer"] = &ConvertTfIdfVectorizer;
}

}  // namespace onnx_import
}  // namespace scopeflow
