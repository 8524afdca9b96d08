#include "framework/op_test_util.h"

#include "absl/strings/str_cat.h"
#include "framework/net_io.h"
#include "google/protobuf/text_format.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::StatusOr<NetDef> OneOpNet(const std::string& op_text,
                                const std::vector<VarDecl>& vars) {
  NetDef net;
  net.set_format_version(kNetFormatVersion);
  net.set_name("one_op");
  BlockDef* block = net.add_blocks();
  for (const VarDecl& decl : vars) {
    VarDef* var = block->add_vars();
    var->set_name(decl.name);
    var->set_dtype(decl.dtype);
    for (int64_t d : decl.shape) var->add_shape(d);
  }
  if (!google::protobuf::TextFormat::ParseFromString(op_text,
                                                     block->add_ops())) {
    return absl::InvalidArgumentError(
        absl::StrCat("test op is not a valid OpDef: ", op_text));
  }
  return net;
}

// Each feed declared with its own dtype and shape.
std::vector<VarDecl> DeclareFeeds(const std::vector<Feed>& feeds) {
  std::vector<VarDecl> vars;
  for (const Feed& feed : feeds) {
    vars.push_back({feed.name, feed.tensor.dtype(),
                    std::vector<int64_t>(feed.tensor.dims().begin(),
                                         feed.tensor.dims().end())});
  }
  return vars;
}

absl::StatusOr<PreparedNet> PrepareDeclared(const std::string& op_text,
                                            const std::vector<VarDecl>& vars) {
  SF_ASSIGN_OR_RETURN(NetDef net, OneOpNet(op_text, vars));
  return Executor().Prepare(net, 0, CPUPlace());
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunOp(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches) {
  return RunDeclared(op_text, DeclareFeeds(feeds), feeds, fetches);
}

absl::Status PrepareOp(const std::string& op_text,
                       const std::vector<Feed>& feeds) {
  return PrepareDeclared(op_text, DeclareFeeds(feeds)).status();
}

absl::StatusOr<VarInfo> InferAtPrepare(const std::string& op_text,
                                       const std::vector<VarDecl>& vars,
                                       const std::string& var) {
  SF_ASSIGN_OR_RETURN(PreparedNet prepared, PrepareDeclared(op_text, vars));
  const int v = prepared.VarIndex(var);
  SF_CHECK(v >= 0, "the net has no variable \"%s\"", var);
  return prepared.var_infos()[v];
}

absl::StatusOr<std::vector<Tensor>> RunDeclared(
    const std::string& op_text, const std::vector<VarDecl>& vars,
    const std::vector<Feed>& feeds, const std::vector<std::string>& fetches) {
  SF_ASSIGN_OR_RETURN(PreparedNet prepared, PrepareDeclared(op_text, vars));
  Scope scope;
  return Executor().Run(prepared, scope, feeds, fetches);
}

}  // namespace scopeflow
