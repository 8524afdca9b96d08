#include "tools/conformance_expectations.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace scopeflow {
namespace {

constexpr Outcome kAllOutcomes[] = {Outcome::kPass, Outcome::kFail,
                                    Outcome::kUnsupported, Outcome::kSkip};

// A field of the file or a Markdown table cell: one line, no tabs.
std::string OneLine(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"\t", " "}, {"\n", " "}, {"\r", " "}});
}

struct Counts {
  std::map<Outcome, int> of;
  int total = 0;
  void Add(Outcome outcome) {
    ++of[outcome];
    ++total;
  }
};

}  // namespace

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "PASS";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kUnsupported:
      return "UNSUPPORTED";
    case Outcome::kSkip:
      return "SKIP";
  }
  return "?";
}

absl::StatusOr<Outcome> ParseOutcome(absl::string_view name) {
  for (Outcome outcome : kAllOutcomes) {
    if (name == OutcomeName(outcome)) return outcome;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "outcome \"%s\": expected PASS, FAIL, UNSUPPORTED or SKIP", name));
}

absl::StatusOr<std::vector<CaseRecord>> ParseExpectations(
    absl::string_view text) {
  std::vector<CaseRecord> records;
  std::map<std::string, int> line_of;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripSuffix(line, "\r");
    if (line.empty() || line[0] == '#') continue;
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::MaxSplits('\t', 4));
    if (fields.size() < 4) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "expectations line %d has %d tab-separated field(s): expected "
          "case, outcome, outcome_frozen, op_type and an optional reason",
          line_number, fields.size()));
    }
    CaseRecord record;
    record.name = std::string(fields[0]);
    absl::StatusOr<Outcome> outcome = ParseOutcome(fields[1]);
    absl::StatusOr<Outcome> frozen = ParseOutcome(fields[2]);
    for (const absl::StatusOr<Outcome>* parsed : {&outcome, &frozen}) {
      if (!parsed->ok()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("expectations line %d (case %s): %s", line_number,
                            record.name, parsed->status().message()));
      }
    }
    record.outcome = *outcome;
    record.outcome_frozen = *frozen;
    record.op_type = std::string(fields[3]);
    if (fields.size() == 5) record.reason = std::string(fields[4]);
    const auto [previous, inserted] = line_of.emplace(record.name, line_number);
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrFormat("expectations line %d: case %s is already on line %d",
                          line_number, record.name, previous->second));
    }
    records.push_back(std::move(record));
  }
  return records;
}

std::string FormatExpectations(std::vector<CaseRecord> records,
                               absl::string_view suite) {
  std::sort(
      records.begin(), records.end(),
      [](const CaseRecord& a, const CaseRecord& b) { return a.name < b.name; });
  std::string text = absl::StrCat(
      "# Expected outcome of every case of ", suite,
      ",\n# checked by //tests/conformance:onnx_conformance_test. Generated: "
      "regenerate with\n#   tools/update_conformance_expected.sh\n"
      "# case\toutcome\toutcome_frozen\top_type\treason\n");
  for (const CaseRecord& r : records) {
    absl::StrAppend(&text, r.name, "\t", OutcomeName(r.outcome), "\t",
                    OutcomeName(r.outcome_frozen), "\t", OneLine(r.op_type),
                    "\t", OneLine(r.reason), "\n");
  }
  return text;
}

std::vector<std::string> ExpectationDifferences(
    const std::vector<CaseRecord>& expected,
    const std::vector<CaseRecord>& actual) {
  std::map<std::string, const CaseRecord*> expected_by_name;
  for (const CaseRecord& r : expected) expected_by_name[r.name] = &r;
  std::vector<std::string> differences;
  auto compare = [&](const std::string& name, const char* mode, Outcome want,
                     Outcome got, const std::string& reason) {
    if (want == got) return;
    const char* kind = got == Outcome::kPass    ? "unexpected pass"
                       : want == Outcome::kPass ? "regression"
                                                : "changed outcome";
    std::string line =
        absl::StrFormat("%s (%s): %s, expected %s (%s)", name, mode,
                        OutcomeName(got), OutcomeName(want), kind);
    if (!reason.empty()) absl::StrAppend(&line, ": ", reason);
    differences.push_back(std::move(line));
  };
  for (const CaseRecord& r : actual) {
    auto it = expected_by_name.find(r.name);
    if (it == expected_by_name.end()) {
      differences.push_back(
          absl::StrFormat("%s: %s, but the expectations have no such case",
                          r.name, OutcomeName(r.outcome)));
      continue;
    }
    compare(r.name, "as written", it->second->outcome, r.outcome, r.reason);
    compare(r.name, "--freeze_constant_inputs", it->second->outcome_frozen,
            r.outcome_frozen, r.reason);
    expected_by_name.erase(it);
  }
  for (const auto& [name, record] : expected_by_name) {
    differences.push_back(
        absl::StrFormat("%s: expected %s, but the run has no such case", name,
                        OutcomeName(record->outcome)));
  }
  return differences;
}

std::string ExpectationsMarkdown(const std::vector<CaseRecord>& records) {
  Counts written;
  Counts frozen;
  for (const CaseRecord& r : records) {
    written.Add(r.outcome);
    frozen.Add(r.outcome_frozen);
  }
  std::string md =
      "| mode | cases | pass | fail | unsupported | skip |\n"
      "|---|---:|---:|---:|---:|---:|\n";
  for (const auto& [mode, counts] :
       {std::pair<const char*, Counts*>{"default (inputs fed as written)",
                                        &written},
        {"`--freeze_constant_inputs`", &frozen}}) {
    absl::StrAppendFormat(
        &md, "| %s | %d | %d | %d | %d | %d |\n", mode, counts->total,
        counts->of[Outcome::kPass], counts->of[Outcome::kFail],
        counts->of[Outcome::kUnsupported], counts->of[Outcome::kSkip]);
  }
  std::vector<const CaseRecord*> left_out;
  for (const CaseRecord& r : records) {
    if (r.outcome != Outcome::kPass) left_out.push_back(&r);
  }
  std::sort(left_out.begin(), left_out.end(),
            [](const CaseRecord* a, const CaseRecord* b) {
              return std::tie(a->op_type, a->name) <
                     std::tie(b->op_type, b->name);
            });
  absl::StrAppendFormat(&md,
                        "\nThe %d cases that do not pass as written, by op "
                        "type:\n\n| op type | case | outcome | reason |\n"
                        "|---|---|---|---|\n",
                        left_out.size());
  for (const CaseRecord* r : left_out) {
    std::string outcome = OutcomeName(r->outcome);
    if (r->outcome_frozen != r->outcome) {
      absl::StrAppend(&outcome, " (", OutcomeName(r->outcome_frozen),
                      " frozen)");
    }
    absl::StrAppendFormat(
        &md, "| %s | %s | %s | %s |\n",
        absl::StrReplaceAll(OneLine(r->op_type), {{"|", "\\|"}}), r->name,
        outcome, absl::StrReplaceAll(OneLine(r->reason), {{"|", "\\|"}}));
  }
  return md;
}

}  // namespace scopeflow
