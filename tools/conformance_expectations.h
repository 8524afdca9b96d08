// The expected outcome of every ONNX node test case, as a file kept in the
// repository (tests/conformance/onnx_node_v1.22_expected.tsv) that CI holds
// the conformance runner to: a case that passes where the file says it
// does not, or the other way round, is a difference, so the file stays true.
//
// The file is tab-separated text, one case a line, `#` lines are comments:
//   case  outcome  outcome_frozen  op_type  reason
// outcome is PASS, FAIL, UNSUPPORTED or SKIP for the model as written;
// outcome_frozen the same with --freeze_constant_inputs; reason says why a
// case does not pass (empty for a pass). Only the outcomes are compared:
// the reason and op type document the case (docs/CONFORMANCE.md lists
// them, see ExpectationsMarkdown).
//
// Plain functions over values; nothing is shared, all are thread-compatible.
#ifndef SCOPEFLOW_TOOLS_CONFORMANCE_EXPECTATIONS_H_
#define SCOPEFLOW_TOOLS_CONFORMANCE_EXPECTATIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scopeflow {

enum class Outcome { kPass, kFail, kUnsupported, kSkip };

// "PASS", "FAIL", "UNSUPPORTED" or "SKIP".
const char* OutcomeName(Outcome outcome);
absl::StatusOr<Outcome> ParseOutcome(absl::string_view name);

// One case's outcomes in both runner modes.
struct CaseRecord {
  std::string name;
  std::string op_type;
  Outcome outcome = Outcome::kFail;
  Outcome outcome_frozen = Outcome::kFail;
  std::string reason;
};

// Parses the file's text; errors name the line and what is wrong with it.
absl::StatusOr<std::vector<CaseRecord>> ParseExpectations(
    absl::string_view text);

// The file's text for `records` (sorted by name), with a header comment
// naming `suite` and how to regenerate the file.
std::string FormatExpectations(std::vector<CaseRecord> records,
                               absl::string_view suite);

// One line per case whose outcomes differ from the expected ones (a
// regression or an unexpected pass), per case the run has and the file
// lacks, and per case the file has and the run lacks. Empty when the run
// matches the file.
std::vector<std::string> ExpectationDifferences(
    const std::vector<CaseRecord>& expected,
    const std::vector<CaseRecord>& actual);

// Markdown for docs/CONFORMANCE.md: the counts in both modes, then a
// table of every case that does not pass as written, with its reason.
std::string ExpectationsMarkdown(const std::vector<CaseRecord>& records);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_CONFORMANCE_EXPECTATIONS_H_
