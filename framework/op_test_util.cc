#include "framework/op_test_util.h"

#include "absl/strings/str_cat.h"
#include "framework/net_io.h"
#include "google/protobuf/text_format.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::StatusOr<NetDef> OneOpNet(const std::string& op_text,
                                const std::vector<Feed>& feeds) {
  NetDef net;
  net.set_format_version(kNetFormatVersion);
  net.set_name("one_op");
  BlockDef* block = net.add_blocks();
  for (const Feed& feed : feeds) {
    VarDef* var = block->add_vars();
    var->set_name(feed.name);
    var->set_dtype(feed.tensor.dtype());
    for (int64_t d : feed.tensor.dims()) var->add_shape(d);
  }
  if (!google::protobuf::TextFormat::ParseFromString(op_text,
                                                     block->add_ops())) {
    return absl::InvalidArgumentError(
        absl::StrCat("test op is not a valid OpDef: ", op_text));
  }
  return net;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> RunOp(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches) {
  SF_ASSIGN_OR_RETURN(NetDef net, OneOpNet(op_text, feeds));
  Executor executor;
  SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                      executor.Prepare(net, 0, CPUPlace()));
  Scope scope;
  return executor.Run(prepared, scope, feeds, fetches);
}

absl::Status PrepareOp(const std::string& op_text,
                       const std::vector<Feed>& feeds) {
  SF_ASSIGN_OR_RETURN(NetDef net, OneOpNet(op_text, feeds));
  return Executor().Prepare(net, 0, CPUPlace()).status();
}

}  // namespace scopeflow
