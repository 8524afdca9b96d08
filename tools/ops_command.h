// scopeflow ops: the reference of every registered op, generated from the
// registries (op specs, kernels, gradients, the ONNX importer's table).
#ifndef SCOPEFLOW_TOOLS_OPS_COMMAND_H_
#define SCOPEFLOW_TOOLS_OPS_COMMAND_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/op_spec.h"

namespace scopeflow {

struct OpsCommandOptions {
  // "" for every op, one line each; else that op in full.
  std::string name;
  // Every op in full as Markdown: docs/OPS.md.
  bool markdown = false;
};

absl::Status OpsCommand(const OpsCommandOptions& options);

// What an attribute's check says a value must be ("must be positive",
// "must be one of max, avg"): the check's messages for values that checks
// refuse (the most negative integer, NaN, a control character, an empty
// list), "" where there is no check or every such value passes.
std::string AllowedValues(const AttrSpec& attr);

// The texts OpsCommand prints.
std::string OpLine(const OpSpec& spec);
absl::StatusOr<std::string> OpDetails(const std::string& name);
std::string OpsMarkdown();

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_OPS_COMMAND_H_
