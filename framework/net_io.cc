#include "framework/net_io.h"

#include <cfloat>
#include <cmath>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"
#include "platform/file.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Collects the text parser's messages instead of logging them.
class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    errors_.push_back(absl::StrFormat("line %d column %d: %s", line + 1,
                                      column + 1, message));
  }
  void AddWarning(int line, int column, const std::string& message) override {}

  std::string Joined() const { return absl::StrJoin(errors_, "; "); }

 private:
  std::vector<std::string> errors_;
};

bool IsTextPath(const std::string& path) {
  return absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".txt");
}

absl::Status WithPath(const absl::Status& status, const std::string& path) {
  return absl::Status(status.code(),
                      absl::StrCat("net file ", path, ": ", status.message()));
}

// The text parser stores a literal beyond float32's range (3.5e38) as inf
// and one too small for it (1e-50) as 0, silently. Every floating-point
// field of a NetDef is a float32, so every such literal is refused, with
// its line and column. (inf and nan, written as words, are allowed.)
absl::Status CheckFloatLiterals(absl::string_view text) {
  google::protobuf::io::ArrayInputStream input(text.data(),
                                               static_cast<int>(text.size()));
  CollectErrors errors;
  // Configured as TextFormat's own tokenizer.
  google::protobuf::io::Tokenizer tokenizer(&input, &errors);
  tokenizer.set_allow_f_after_float(true);
  tokenizer.set_comment_style(
      google::protobuf::io::Tokenizer::SH_COMMENT_STYLE);
  tokenizer.set_require_space_after_number(false);
  tokenizer.set_allow_multiline_strings(true);
  while (tokenizer.Next()) {
    const google::protobuf::io::Tokenizer::Token& token = tokenizer.current();
    if (token.type != google::protobuf::io::Tokenizer::TYPE_FLOAT) continue;
    const double value =
        google::protobuf::io::Tokenizer::ParseFloat(token.text);
    const float stored = static_cast<float>(value);
    SF_CHECK(std::isfinite(stored) && (stored != 0 || value == 0),
             "line %d column %d: %s is outside the range of float32 "
             "(magnitudes %g to %g); it would be stored as %g",
             token.line + 1, token.column + 1, token.text, FLT_TRUE_MIN,
             FLT_MAX, static_cast<double>(stored));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckNetFormatVersion(const NetDef& net) {
  SF_CHECK(
      net.format_version() == kNetFormatVersion,
      "net \"%s\" has format_version %d; this build reads version %d%s",
      net.name(), net.format_version(), kNetFormatVersion,
      net.format_version() == 0 ? " (is `format_version: 1` missing?)" : "");
  return absl::OkStatus();
}

absl::StatusOr<NetDef> ParseNetText(absl::string_view text) {
  NetDef net;
  CollectErrors errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &net)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a valid text NetDef: ", errors.Joined()));
  }
  SF_RETURN_IF_ERROR(CheckFloatLiterals(text));
  SF_RETURN_IF_ERROR(CheckNetFormatVersion(net));
  return net;
}

absl::StatusOr<NetDef> ParseNetBinary(absl::string_view bytes) {
  NetDef net;
  if (!net.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "not a valid binary NetDef (%d bytes): truncated or not a net",
        bytes.size()));
  }
  SF_RETURN_IF_ERROR(CheckNetFormatVersion(net));
  return net;
}

absl::StatusOr<NetDef> LoadNet(const std::string& path) {
  SF_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  absl::StatusOr<NetDef> net =
      IsTextPath(path) ? ParseNetText(contents) : ParseNetBinary(contents);
  if (!net.ok()) return WithPath(net.status(), path);
  return net;
}

absl::Status SaveNet(const NetDef& net, const std::string& path) {
  std::string contents;
  const bool written =
      IsTextPath(path)
          ? google::protobuf::TextFormat::PrintToString(net, &contents)
          : net.SerializeToString(&contents);
  SF_CHECK_CODE(written, absl::StatusCode::kInternal,
                "cannot serialise net \"%s\" for %s", net.name(), path);
  return WriteFileAtomically(path, contents);
}

}  // namespace scopeflow
