#include "operators/nn/nn_test_util.h"

#include "absl/strings/str_cat.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "google/protobuf/text_format.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::StatusOr<VarInfo> InferAtPrepare(const std::string& op_text,
                                       const std::vector<DeclaredVar>& vars,
                                       const std::string& var) {
  NetDef net;
  net.set_format_version(kNetFormatVersion);
  net.set_name("one_op");
  BlockDef* block = net.add_blocks();
  for (const DeclaredVar& declared : vars) {
    VarDef* def = block->add_vars();
    def->set_name(declared.name);
    def->set_dtype(declared.dtype);
    if (declared.has_dims) {
      for (int64_t d : declared.dims) def->add_shape(d);
    }
  }
  SF_CHECK(
      google::protobuf::TextFormat::ParseFromString(op_text, block->add_ops()),
      "test op is not a valid OpDef: %s", op_text);
  SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                      Executor().Prepare(net, 0, CPUPlace()));
  const int index = prepared.VarIndex(var);
  SF_CHECK(index >= 0, "the net has no variable \"%s\"", var);
  return prepared.var_infos()[index];
}

}  // namespace scopeflow
