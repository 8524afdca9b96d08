#include "framework/net_io.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/tokenizer.h"
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
