// Runs ONNX backend node test cases through the ONNX importer and the CPU
// executor, and compares the outputs with the expected ones.
//
//   onnx_conformance [--freeze_constant_inputs] [--markdown] [--skip=...]
//                    [--filter=SUBSTRING] [--rtol=R] [--atol=A]
//                    [--expected=FILE | --write_expected=FILE] DIR
//   onnx_conformance --expected_markdown=FILE
//
// DIR holds one folder per case (the layout of ONNX's
// onnx/backend/test/data/node): model.onnx and test_data_set_0/ with
// input_N.pb and output_N.pb, one per graph input and output (an optional
// tensor input's file is an OptionalProto, fed as the tensor it holds; a
// sequence input's is left unread, the importer refusing it). Each case
// prints one line:
//   PASS         the outputs match: float within atol + rtol * |expected|
//                (NaN matching NaN), integers and bools exactly, dtypes and
//                shapes exactly;
//   FAIL         an output differs (the largest difference is shown), or a
//                supported model fails to prepare or run;
//   UNSUPPORTED  the importer rejects the model as needing what scopeflow
//                lacks (the reasons are shown);
//   SKIP         the case is in --skip: its expected outputs come from
//                numpy's random generator (training-mode dropout).
// Then a summary per op type (multi-node cases under the op types of their
// nodes, joined by "+"). The exit status is 1 if any case FAILs, 2 on a
// usage error, 0 otherwise.
//
// With --freeze_constant_inputs, a case whose import fails because a node
// needs a graph input as a constant (Reshape's shape fed as an input, say)
// is imported again with that input's test value as a constant; its line
// names the frozen inputs.
//
// With --expected=FILE, every case runs in both modes and its outcomes are
// compared with FILE (tools/conformance_expectations.h); the exit status is
// 1 if any case differs from it, a regression or an unexpected pass alike.
// --write_expected=FILE writes FILE from the run instead, and
// --expected_markdown=FILE prints FILE as Markdown for docs/CONFORMANCE.md.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "framework/executor.h"
#include "framework/float16.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/scope.h"
#include "framework/tensor.h"
#include "platform/file.h"
#include "platform/status_macros.h"
#include "tools/conformance_expectations.h"

ABSL_FLAG(bool, freeze_constant_inputs, false,
          "import graph inputs that a node needs as constants with their "
          "test values as constants");
ABSL_FLAG(bool, markdown, false, "print the summary as a Markdown table");
ABSL_FLAG(std::vector<std::string>, skip,
          std::vector<std::string>({"test_training_dropout",
                                    "test_training_dropout_default",
                                    "test_training_dropout_default_mask",
                                    "test_training_dropout_mask"}),
          "cases to skip: by default those whose expected outputs come from "
          "numpy's random generator (see the conformance README)");
ABSL_FLAG(std::string, filter, "", "run only cases whose name contains this");
ABSL_FLAG(double, rtol, 1e-3, "relative tolerance for floating-point outputs");
ABSL_FLAG(double, atol, 1e-5, "absolute tolerance for floating-point outputs");
ABSL_FLAG(std::string, expected, "",
          "compare every case's outcomes in both modes with this "
          "expectations file; exit 1 on any difference");
ABSL_FLAG(std::string, write_expected, "",
          "write every case's outcomes in both modes to this expectations "
          "file");
ABSL_FLAG(std::string, suite_name, "the ONNX node test cases",
          "what --write_expected names as the suite in the file's header");
ABSL_FLAG(std::string, expected_markdown, "",
          "print this expectations file as Markdown and exit (no DIR)");

namespace scopeflow {
namespace {

namespace fs = std::filesystem;

struct CaseResult {
  std::string name;
  std::string group;
  Outcome outcome = Outcome::kFail;
  std::string detail;
};

// The op type of a one-node case; for several nodes, their distinct op
// types (Constant aside, when others remain) joined by "+".
std::string GroupOf(const onnx::ModelProto& model) {
  std::set<std::string> types;
  for (const onnx::NodeProto& node : model.graph().node()) {
    types.insert(node.op_type());
  }
  if (types.size() > 1) types.erase("Constant");
  if (types.empty()) return "(no nodes)";
  if (model.graph().node_size() == 1) return *types.begin();
  return absl::StrCat("multi-node: ", absl::StrJoin(types, "+"));
}

// Element `i` of a float tensor as a double.
double FloatAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case kFloat32:
      return t.data<float>()[i];
    case kFloat64:
      return t.data<double>()[i];
    case kFloat16:
      return HalfToFloat(t.data<float16>()[i]);
    case kBFloat16:
      return BFloat16ToFloat(t.data<bfloat16>()[i]);
    case kFloat8E4M3FN:
      return Float8ToFloat(t.data<float8_e4m3fn>()[i]);
    case kFloat8E4M3FNUZ:
      return Float8ToFloat(t.data<float8_e4m3fnuz>()[i]);
    case kFloat8E5M2:
      return Float8ToFloat(t.data<float8_e5m2>()[i]);
    case kFloat8E5M2FNUZ:
      return Float8ToFloat(t.data<float8_e5m2fnuz>()[i]);
    case kFloat4E2M1:
      return Float4E2M1BitsToFloat(t.data<float4_e2m1>()[i].bits);
    case kFloat8E8M0:
      return Float8E8M0BitsToFloat(t.data<float8_e8m0>()[i].bits);
    default:
      return 0;
  }
}

// Element `i` of an integer or bool tensor as an int64.
int64_t IntAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case kInt32:
      return t.data<int32_t>()[i];
    case kInt64:
      return t.data<int64_t>()[i];
    case kUInt8:
      return t.data<uint8_t>()[i];
    case kInt8:
      return t.data<int8_t>()[i];
    case kInt16:
      return t.data<int16_t>()[i];
    case kUInt16:
      return t.data<uint16_t>()[i];
    case kUInt32:
      return t.data<uint32_t>()[i];
    case kUInt64:
      // Two's complement: distinct values stay distinct, as equality needs.
      return static_cast<int64_t>(t.data<uint64_t>()[i]);
    case kBool:
      return t.data<bool>()[i] ? 1 : 0;
    case kInt4:
      return t.data<qint4>()[i].value;
    case kUInt4:
      return t.data<quint4>()[i].value;
    case kInt2:
      return t.data<qint2>()[i].value;
    case kUInt2:
      return t.data<quint2>()[i].value;
    default:
      return 0;
  }
}

bool IsFloat(DataType dtype) {
  return IsFloatDataType(dtype) || dtype == kFloat4E2M1 ||
         dtype == kFloat8E8M0;
}

// The index of flat element `flat` in a tensor of `dims`, e.g. "[1, 0]".
std::string IndexOf(int64_t flat, const Dims& dims) {
  Dims index(dims.size());
  for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
    index[k] = dims[k] == 0 ? 0 : flat % dims[k];
    flat = dims[k] == 0 ? 0 : flat / dims[k];
  }
  return DimsToString(index);
}

// OK if `actual` matches `expected`; otherwise what differs, with the
// largest difference.
absl::Status Compare(const Tensor& actual, const Tensor& expected, double rtol,
                     double atol) {
  SF_CHECK(actual.dtype() == expected.dtype(), "dtype %s, expected %s",
           DataTypeName(actual.dtype()), DataTypeName(expected.dtype()));
  SF_CHECK(actual.dims() == expected.dims(), "shape %s, expected %s",
           DimsToString(actual.dims()), DimsToString(expected.dims()));
  const int64_t n = expected.numel();
  if (IsFloat(expected.dtype())) {
    int64_t worst = -1;
    double worst_excess = 0;
    double worst_diff = 0;
    int64_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double a = FloatAt(actual, i);
      const double e = FloatAt(expected, i);
      if (std::isnan(e) || std::isnan(a)) {
        if (std::isnan(e) && std::isnan(a)) continue;
      } else if (a == e) {
        continue;  // Equal infinities too.
      }
      const double diff = std::fabs(a - e);
      const double allowed = atol + rtol * std::fabs(e);
      // NaN against a number fails (its excess is NaN, caught here).
      if (diff <= allowed) continue;
      ++mismatches;
      const double excess = std::isnan(diff) ? HUGE_VAL : diff - allowed;
      if (worst < 0 || excess > worst_excess) {
        worst = i;
        worst_excess = excess;
        worst_diff = diff;
      }
    }
    SF_CHECK(worst < 0,
             "%d of %d element(s) differ; largest |diff| %.6g at %s (got "
             "%.9g, expected %.9g; allowed %.3g)",
             mismatches, n, worst_diff, IndexOf(worst, expected.dims()),
             FloatAt(actual, worst), FloatAt(expected, worst),
             atol + rtol * std::fabs(FloatAt(expected, worst)));
    return absl::OkStatus();
  }
  int64_t first = -1;
  int64_t mismatches = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (IntAt(actual, i) != IntAt(expected, i)) {
      if (first < 0) first = i;
      ++mismatches;
    }
  }
  SF_CHECK(first < 0,
           "%d of %d element(s) differ; first at %s (got %d, expected %d)",
           mismatches, n, IndexOf(first, expected.dims()), IntAt(actual, first),
           IntAt(expected, first));
  return absl::OkStatus();
}

// What a graph value of a type other than a tensor is declared to be.
std::string DeclaredKind(const onnx::TypeProto& type) {
  if (type.has_sequence_type()) return "sequence";
  if (type.has_optional_type()) return "optional";
  return "map or sparse tensor";
}

// Every problem's reason, for an UNSUPPORTED line.
std::string Reasons(const ImportReport& report) {
  std::vector<std::string> reasons;
  for (const ImportProblem& problem : report.problems) {
    if (problem.node_index >= 0) {
      reasons.push_back(absl::StrFormat("%s node %d: %s", problem.op_type,
                                        problem.node_index, problem.reason));
    } else {
      reasons.push_back(absl::StrFormat("%s \"%s\": %s", problem.op_type,
                                        problem.node_name, problem.reason));
    }
  }
  return absl::StrJoin(reasons, "; ");
}

bool AllUnimplemented(const ImportReport& report) {
  for (const ImportProblem& problem : report.problems) {
    if (problem.code != absl::StatusCode::kUnimplemented) return false;
  }
  return !report.problems.empty();
}

// Imports, runs and checks one case.
CaseResult RunCase(const fs::path& dir, const std::set<std::string>& skip,
                   bool freeze, double rtol, double atol) {
  CaseResult result;
  result.name = dir.filename().string();
  absl::StatusOr<onnx::ModelProto> model =
      ReadOnnxModel((dir / "model.onnx").string());
  if (!model.ok()) {
    result.detail = std::string(model.status().message());
    return result;
  }
  result.group = GroupOf(*model);
  if (skip.count(result.name) > 0) {
    result.outcome = Outcome::kSkip;
    result.detail =
        "expected outputs come from numpy's random generator (--skip)";
    return result;
  }
  const fs::path data = dir / "test_data_set_0";
  const onnx::GraphProto& graph = model->graph();
  std::map<std::string, Tensor> inputs;
  for (int i = 0; i < graph.input_size(); ++i) {
    const onnx::TypeProto& type = graph.input(i).type();
    const std::string path =
        (data / absl::StrCat("input_", i, ".pb")).string();
    // An optional tensor (an OptionalProto file) is fed as the tensor it
    // holds, which the importer makes a required input.
    if (type.has_optional_type() &&
        type.optional_type().elem_type().has_tensor_type()) {
      absl::StatusOr<std::optional<Tensor>> held =
          ReadOnnxOptionalTensor(path);
      if (!held.ok()) {
        result.detail = std::string(held.status().message());
        return result;
      }
      if (!held->has_value()) {
        result.detail = absl::StrFormat(
            "input %d (\"%s\") is an empty optional, which scopeflow "
            "cannot feed (it imports an optional tensor input as a "
            "required tensor)",
            i, graph.input(i).name());
        return result;
      }
      inputs[graph.input(i).name()] = **std::move(held);
      continue;
    }
    // Sequence values (SequenceProto files) are no tensors: the importer
    // refuses such graph inputs, saying so.
    if (!type.has_tensor_type()) continue;
    absl::StatusOr<Tensor> tensor = ReadOnnxTensor(path);
    if (!tensor.ok()) {
      result.detail = std::string(tensor.status().message());
      return result;
    }
    inputs[graph.input(i).name()] = *std::move(tensor);
  }

  ImportOptions options;
  ImportReport report;
  absl::StatusOr<ImportedModel> imported = ImportOnnx(*model, options, &report);
  // Freezing some inputs may reveal that others are needed too (a mode
  // input that decides whether a ratio input matters): repeat while each
  // try freezes more.
  std::vector<std::string> frozen;
  while (!imported.ok() && freeze) {
    bool more = false;
    for (const std::string& name : report.inputs_needed_as_constants) {
      if (options.constant_inputs.contains(name)) continue;
      options.constant_inputs[name] = inputs[name];
      frozen.push_back(name);
      more = true;
    }
    if (!more) break;
    imported = ImportOnnx(*model, options, &report);
  }
  const std::string note =
      frozen.empty()
          ? ""
          : absl::StrCat(" (frozen inputs: ", absl::StrJoin(frozen, ", "), ")");
  if (!imported.ok()) {
    result.outcome =
        AllUnimplemented(report) ? Outcome::kUnsupported : Outcome::kFail;
    result.detail = result.outcome == Outcome::kUnsupported
                        ? Reasons(report)
                        : std::string(imported.status().message());
    return result;
  }

  const Executor executor;
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(imported->net, 0, CPUPlace());
  if (!prepared.ok()) {
    result.detail = absl::StrCat("prepare: ", prepared.status().message());
    return result;
  }
  Scope root;
  absl::Status added = AddParamsToScope(*imported, root);
  if (!added.ok()) {
    result.detail = std::string(added.message());
    return result;
  }
  std::vector<Feed> feeds;
  for (const std::string& name : prepared->input_names()) {
    feeds.push_back({name, inputs[name]});
  }
  absl::StatusOr<std::vector<Tensor>> outputs =
      executor.Run(*prepared, root, feeds, imported->outputs);
  if (!outputs.ok()) {
    result.detail = absl::StrCat("run: ", outputs.status().message());
    return result;
  }
  std::vector<std::string> mismatches;
  for (size_t i = 0; i < outputs->size(); ++i) {
    if (static_cast<int>(i) < graph.output_size() &&
        !graph.output(i).type().has_tensor_type()) {
      result.detail = absl::StrFormat(
          "output %d \"%s\" is declared a %s, which the runner does not "
          "compare (it compares tensors)",
          i, graph.output(i).name(), DeclaredKind(graph.output(i).type()));
      return result;
    }
    absl::StatusOr<Tensor> expected =
        ReadOnnxTensor((data / absl::StrCat("output_", i, ".pb")).string());
    if (!expected.ok()) {
      result.detail = std::string(expected.status().message());
      return result;
    }
    absl::Status same = Compare((*outputs)[i], *expected, rtol, atol);
    if (!same.ok()) {
      mismatches.push_back(absl::StrFormat(
          "output %d \"%s\": %s", i, imported->outputs[i], same.message()));
    }
  }
  if (!mismatches.empty()) {
    result.detail = absl::StrCat(absl::StrJoin(mismatches, "; "), note);
    return result;
  }
  result.outcome = Outcome::kPass;
  result.detail = note.empty() ? "" : note.substr(1);
  return result;
}

struct Counts {
  int pass = 0;
  int fail = 0;
  int unsupported = 0;
  int skip = 0;
  int total() const { return pass + fail + unsupported + skip; }
  void Add(Outcome outcome) {
    switch (outcome) {
      case Outcome::kPass:
        ++pass;
        break;
      case Outcome::kFail:
        ++fail;
        break;
      case Outcome::kUnsupported:
        ++unsupported;
        break;
      case Outcome::kSkip:
        ++skip;
        break;
    }
  }
};

void PrintSummary(const std::vector<CaseResult>& results, bool markdown) {
  std::map<std::string, Counts> groups;
  Counts all;
  for (const CaseResult& r : results) {
    groups[r.group].Add(r.outcome);
    all.Add(r.outcome);
  }
  auto row = [&](const std::string& name, const Counts& c) {
    if (markdown) {
      std::printf("| %s | %d | %d | %d | %d | %d |\n", name.c_str(), c.total(),
                  c.pass, c.fail, c.unsupported, c.skip);
    } else {
      std::printf("%-56s %5d %5d %5d %11d %5d\n", name.c_str(), c.total(),
                  c.pass, c.fail, c.unsupported, c.skip);
    }
  };
  std::printf("\nsummary per op type:\n");
  if (markdown) {
    std::printf("| op type | cases | pass | fail | unsupported | skip |\n");
    std::printf("|---|---|---|---|---|---|\n");
  } else {
    std::printf("%-56s %5s %5s %5s %11s %5s\n", "op type", "cases", "pass",
                "fail", "unsupported", "skip");
  }
  for (const auto& [name, counts] : groups) row(name, counts);
  row(markdown ? "**total**" : "total", all);
}

// Relative paths are taken from where the user ran `bazel run`, not from
// the runfiles folder bazel runs the binary in.
fs::path ResolvePath(const std::string& arg) {
  fs::path path(arg);
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.is_relative() && cwd != nullptr) path = fs::path(cwd) / path;
  return path;
}

// `detail` without the cases' folder, so that expectations and messages do
// not depend on where the suite was unpacked.
std::string WithoutRoot(const std::string& detail, const fs::path& root) {
  return absl::StrReplaceAll(detail, {{root.string() + "/", ""}});
}

int PrintExpectationsMarkdown(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  absl::StatusOr<std::vector<CaseRecord>> records =
      text.ok() ? ParseExpectations(*text)
                : absl::StatusOr<std::vector<CaseRecord>>(text.status());
  if (!records.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(),
                 std::string(records.status().message()).c_str());
    return 2;
  }
  std::printf("%s", ExpectationsMarkdown(*records).c_str());
  return 0;
}

// Holds `records` to the expectations file at `path`: 0 when they match, 1
// on any difference, 2 when the file cannot be read.
int CheckExpectations(const std::string& path,
                      const std::vector<CaseRecord>& records) {
  absl::StatusOr<std::string> text = ReadFile(path);
  absl::StatusOr<std::vector<CaseRecord>> expected =
      text.ok() ? ParseExpectations(*text)
                : absl::StatusOr<std::vector<CaseRecord>>(text.status());
  if (!expected.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(),
                 std::string(expected.status().message()).c_str());
    return 2;
  }
  const std::vector<std::string> differences =
      ExpectationDifferences(*expected, records);
  if (differences.empty()) {
    std::printf(
        "\nall %zu cases have their expected outcomes in both modes "
        "(%s)\n",
        records.size(), path.c_str());
    return 0;
  }
  std::printf(
      "\n%zu difference(s) from the expected outcomes (%s); if "
      "intended, regenerate it with "
      "tools/update_conformance_expected.sh:\n",
      differences.size(), path.c_str());
  for (const std::string& line : differences) {
    std::printf("  %s\n", line.c_str());
  }
  return 1;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "onnx_conformance [flags] DIR: imports and runs each ONNX node test "
      "case in DIR on the CPU and compares its outputs");
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string markdown_of = absl::GetFlag(FLAGS_expected_markdown);
  if (!markdown_of.empty() && args.size() == 1) {
    return PrintExpectationsMarkdown(ResolvePath(markdown_of).string());
  }
  const std::string expected = absl::GetFlag(FLAGS_expected);
  const std::string write_expected = absl::GetFlag(FLAGS_write_expected);
  if (args.size() != 2 || !markdown_of.empty() ||
      (!expected.empty() && !write_expected.empty())) {
    std::fprintf(stderr,
                 "usage: onnx_conformance [flags] DIR, or "
                 "onnx_conformance --expected_markdown=FILE; --expected and "
                 "--write_expected exclude each other\n");
    return 2;
  }
  const bool both_modes = !expected.empty() || !write_expected.empty();
  const fs::path root = ResolvePath(args[1]);
  std::error_code error;
  if (!fs::is_directory(root, error)) {
    std::fprintf(stderr, "%s is not a directory\n", root.string().c_str());
    return 2;
  }
  std::vector<fs::path> cases;
  for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || !fs::exists(entry.path() / "model.onnx")) {
      continue;
    }
    if (name.find(absl::GetFlag(FLAGS_filter)) == std::string::npos) continue;
    cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  const std::vector<std::string> skip_list = absl::GetFlag(FLAGS_skip);
  const std::set<std::string> skip(skip_list.begin(), skip_list.end());
  const double rtol = absl::GetFlag(FLAGS_rtol);
  const double atol = absl::GetFlag(FLAGS_atol);
  std::vector<CaseResult> results;
  std::vector<CaseRecord> records;
  for (const fs::path& dir : cases) {
    CaseResult result = RunCase(
        dir, skip, absl::GetFlag(FLAGS_freeze_constant_inputs) && !both_modes,
        rtol, atol);
    result.detail = WithoutRoot(result.detail, root);
    std::printf("%-11s  %s  [%s]%s%s\n", OutcomeName(result.outcome),
                result.name.c_str(), result.group.c_str(),
                result.detail.empty() ? "" : "  ", result.detail.c_str());
    if (both_modes) {
      // Freezing changes nothing for a case that imports as written.
      const Outcome frozen =
          result.outcome == Outcome::kPass
              ? Outcome::kPass
              : RunCase(dir, skip, /*freeze=*/true, rtol, atol).outcome;
      records.push_back(
          {result.name, result.group, result.outcome, frozen, result.detail});
    }
    results.push_back(std::move(result));
  }
  PrintSummary(results, absl::GetFlag(FLAGS_markdown));
  if (!write_expected.empty()) {
    const std::string path = ResolvePath(write_expected).string();
    absl::Status written = WriteFileAtomically(
        path, FormatExpectations(records, absl::GetFlag(FLAGS_suite_name)));
    if (!written.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(),
                   std::string(written.message()).c_str());
      return 2;
    }
    std::printf("\nwrote the outcomes of %zu cases to %s\n", records.size(),
                path.c_str());
    return 0;
  }
  if (!expected.empty()) {
    return CheckExpectations(ResolvePath(expected).string(), records);
  }
  for (const CaseResult& r : results) {
    if (r.outcome == Outcome::kFail) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace scopeflow

int main(int argc, char** argv) { return scopeflow::Main(argc, argv); }
