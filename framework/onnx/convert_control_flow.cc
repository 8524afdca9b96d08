// Converters of ONNX's control flow (If, Loop, Scan) onto scopeflow's
// control-flow ops (docs/CONTROL_FLOW.md), their subgraphs converted into
// blocks of the net (framework/onnx/subgraph.h).
//
// If (cond, then_branch, else_branch) becomes two conditional_blocks writing
// the same outputs, one running then_branch's block when cond holds and
// one running else_branch's when logical_not(cond) does: exactly one writes
// the outputs, whose shapes may differ between the branches (Prepare joins
// what the two blocks infer; dimensions they disagree on are unknown).
//
// Loop (M, cond, v_initial..., body) becomes a `while` carrying the
// iteration number, the loop-carried values and the condition
//   cond && iteration < M
// (either part absent when M or cond is). The body block copies the carried
// variables into the body graph's inputs, runs the body's ops, copies the
// body's outputs back, counts the iteration and computes the next
// condition; the body's scan outputs become the while's step outputs,
// stacked along a new first axis. A carried value keeps its shape across
// iterations (the while checks it).
//
// Scan (states..., scan inputs..., body) becomes a `recurrent`: scan inputs
// moved to time-major, fed step by step; the states are its states; scan
// outputs stacked time-first and moved to their output axes. Opset 8's
// batched Scan is supported for a batch of one without sequence_lens.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "framework/onnx/subgraph.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// A scalar of `dtype` holding `value`, written to `out`.
OpBuilder Fill(DataType dtype, float value, const std::string& out) {
  return OpBuilder("fill_constant")
      .Out("Out", out)
      .Attr("shape", std::vector<int64_t>{})
      .Attr("dtype", static_cast<int32_t>(dtype))
      .Attr("value", value);
}

std::string Describe(const VarInfo& info) {
  return absl::StrCat(DataTypeName(info.dtype), " ",
                      info.has_dims ? DimsToString(info.dims) : "[?]");
}

// Checks that input `i`, if present, is a one-element tensor of `dtype`.
absl::Status CheckScalarInput(NodeContext& c, int i, DataType dtype,
                              absl::string_view what) {
  if (!c.HasInput(i)) return absl::OkStatus();
  const VarInfo info = c.InputInfo(i);
  SF_CHECK(info.dtype == DATA_TYPE_UNSPECIFIED || info.dtype == dtype,
           "input %d (%s, \"%s\") must be %s, got %s", i, what, c.InputName(i),
           DataTypeName(dtype), DataTypeName(info.dtype));
  if (info.has_dims) {
    int64_t count = 1;
    for (int64_t d : info.dims) count = d < 0 ? -1 : count * d;
    SF_CHECK(count == 1 || count < 0,
             "input %d (%s, \"%s\") must hold one element, got shape %s", i,
             what, c.InputName(i), DimsToString(info.dims));
  }
  return absl::OkStatus();
}

// The node's output i, or a temporary where the node leaves it out.
std::string OutputOrTemp(NodeContext& c, int i, absl::string_view hint) {
  return c.HasOutput(i) ? c.Output(i) : c.Temp(absl::StrCat(hint, i));
}

absl::Status ConvertIf(NodeContext& c) {
  SF_RETURN_IF_ERROR(CheckScalarInput(c, 0, kBool, "cond"));
  SF_ASSIGN_OR_RETURN(const std::string cond, c.Input(0));
  SF_ASSIGN_OR_RETURN(const onnx::GraphProto* then_graph,
                      GraphAttr(c, "then_branch"));
  SF_ASSIGN_OR_RETURN(const onnx::GraphProto* else_graph,
                      GraphAttr(c, "else_branch"));
  for (const auto& [name, graph] :
       {std::pair{"then_branch", then_graph}, {"else_branch", else_graph}}) {
    SF_CHECK(graph->input_size() == 0,
             "attribute \"%s\": the subgraph has %d inputs; If's branches "
             "take none (they read enclosing values by name)",
             name, graph->input_size());
    SF_CHECK(graph->output_size() == c.OutputCount(),
             "attribute \"%s\": the subgraph has %d outputs, but the node %d",
             name, graph->output_size(), c.OutputCount());
  }
  SF_ASSIGN_OR_RETURN(Subgraph then_block,
                      ConvertSubgraph(c, "then_branch", *then_graph, {},
                                      /*may_not_run=*/true));
  SF_ASSIGN_OR_RETURN(Subgraph else_block,
                      ConvertSubgraph(c, "else_branch", *else_graph, {},
                                      /*may_not_run=*/true));
  std::vector<std::string> outputs;
  for (int i = 0; i < c.OutputCount(); ++i) {
    const VarInfo& a = then_block.output_infos[i];
    const VarInfo& b = else_block.output_infos[i];
    SF_CHECK(a.dtype == b.dtype || a.dtype == DATA_TYPE_UNSPECIFIED ||
                 b.dtype == DATA_TYPE_UNSPECIFIED,
             "output %d: then_branch makes it %s but else_branch %s", i,
             DataTypeName(a.dtype), DataTypeName(b.dtype));
    outputs.push_back(OutputOrTemp(c, i, "out"));
    for (Subgraph* branch : {&then_block, &else_block}) {
      AppendOp(*branch->block, OpBuilder("assign")
                                   .In("X", branch->outputs[i])
                                   .Out("Out", outputs.back()));
    }
  }
  const std::string not_cond = c.Temp("not_cond");
  SF_RETURN_IF_ERROR(
      c.Emit(OpBuilder("logical_not").In("X", cond).Out("Out", not_cond)));
  for (const auto& [when, branch] :
       {std::pair{cond, &then_block}, {not_cond, &else_block}}) {
    OpBuilder op("conditional_block");
    op.In("Cond", when)
        .In("X", OuterReads(*branch->block, outputs))
        .Out("Out", outputs)
        .BlockAttr("sub_block", branch->index);
    if (c.options().keep_recurrent_step_scopes) {
      op.Out("Scope", c.Temp("scope"));
    }
    SF_RETURN_IF_ERROR(c.Emit(op));
  }
  for (int i = 0; i < c.OutputCount(); ++i) {
    c.SetInfo(outputs[i], JoinInfos(then_block.output_infos[i],
                                    else_block.output_infos[i]));
  }
  return absl::OkStatus();
}

// Whether `graph` reads `name` other than as input 0 of node `except`
// (its nodes, their subgraphs or its outputs).
bool ReadsElsewhere(const onnx::GraphProto& graph, const std::string& name,
                    int except) {
  for (int j = 0; j < graph.node_size(); ++j) {
    const onnx::NodeProto& node = graph.node(j);
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i) == name && !(j == except && i == 0)) return true;
    }
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (!attr.has_g()) continue;
      absl::flat_hash_set<std::string> names;
      CollectValueNames(attr.g(), names);
      if (names.contains(name)) return true;
    }
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (output.name() == name) return true;
  }
  return false;
}

// Turns loop-carried value k, a sequence that starts empty and that the
// body appends one tensor to per iteration (torch's list.append), into a
// scan output of that tensor: removes the body's input and output for it
// and its SequenceInsert, and returns the tensor's name. Unimplemented for
// any other use of a sequence.
absl::StatusOr<std::string> AppendedElement(NodeContext& c,
                                            const onnx::GraphProto& body,
                                            int k) {
  const SequenceValue* seq = c.Sequence(c.InputName(2 + k));
  const std::string& in = body.input(2 + k).name();
  const std::string& out = body.output(1 + k).name();
  const std::string why = absl::StrFormat(
      "loop-carried value %d (\"%s\") is a sequence: scopeflow converts only "
      "one that starts empty and that the body appends one tensor to "
      "(SequenceInsert at the end), as a scan output",
      k, c.InputName(2 + k));
  if (!seq->stacked.empty()) return Unsupported(why);
  for (int j = 0; j < body.node_size(); ++j) {
    const onnx::NodeProto& node = body.node(j);
    if (node.op_type() != "SequenceInsert" || node.input_size() != 2 ||
        node.input(0) != in || node.output_size() != 1 ||
        node.output(0) != out) {
      continue;
    }
    onnx::GraphProto rest = body;
    rest.mutable_output()->erase(rest.mutable_output()->begin() + 1 + k);
    if (ReadsElsewhere(body, in, j) || ReadsElsewhere(rest, out, -1)) {
      return Unsupported(why);
    }
    return node.input(1);
  }
  return Unsupported(why);
}

absl::Status ConvertLoop(NodeContext& c) {
  SF_ASSIGN_OR_RETURN(const onnx::GraphProto* body, GraphAttr(c, "body"));
  SF_CHECK(c.InputCount() >= 2,
           "Loop takes inputs M, cond and the loop-carried values; the node "
           "lists %d inputs",
           c.InputCount());
  int carried = c.InputCount() - 2;
  SF_CHECK(body->input_size() == carried + 2,
           "attribute \"body\": the subgraph has %d inputs, expected %d (the "
           "iteration number, the condition and %d loop-carried values)",
           body->input_size(), carried + 2, carried);
  const int scans = body->output_size() - 1 - carried;
  SF_CHECK(scans >= 0,
           "attribute \"body\": the subgraph has %d outputs, expected at "
           "least %d (the condition and %d loop-carried values)",
           body->output_size(), carried + 1, carried);
  SF_CHECK(c.OutputCount() <= carried + scans,
           "the node lists %d outputs, but the loop makes %d (%d "
           "loop-carried values and %d scan outputs)",
           c.OutputCount(), carried + scans, carried, scans);
  SF_RETURN_IF_ERROR(CheckScalarInput(c, 0, kInt64, "M"));
  SF_RETURN_IF_ERROR(CheckScalarInput(c, 1, kBool, "cond"));

  // Block 0: the initial iteration number and condition, and the step. Made
  // by ops rather than parameters, so that Prepare knows them as scalars.
  const std::string iter0 = c.Temp("iter_init");
  const std::string step = c.Temp("iter_step");
  SF_RETURN_IF_ERROR(c.Emit(Fill(kInt64, 0, iter0)));
  SF_RETURN_IF_ERROR(c.Emit(Fill(kInt64, 1, step)));
  std::string cond0;
  if (c.HasInput(1)) {
    SF_ASSIGN_OR_RETURN(cond0, c.Input(1));
  } else {
    cond0 = c.Temp("cond_init");
    SF_RETURN_IF_ERROR(c.Emit(Fill(kBool, 1, cond0)));
  }
  std::string trip;
  const std::string cond = c.Temp("cond");
  if (c.HasInput(0)) {
    SF_ASSIGN_OR_RETURN(trip, c.Input(0));
    const std::string below = c.Temp("below_trip_count");
    SF_RETURN_IF_ERROR(c.Emit(
        OpBuilder("less").In("X", iter0).In("Y", trip).Out("Out", below)));
    SF_RETURN_IF_ERROR(c.Emit(OpBuilder("logical_and")
                                  .In("X", cond0)
                                  .In("Y", below)
                                  .Out("Out", cond)));
  } else {
    SF_RETURN_IF_ERROR(
        c.Emit(OpBuilder("assign").In("X", cond0).Out("Out", cond)));
  }

  // Appended-to sequences become scan outputs, after the body's own.
  onnx::GraphProto loop_body = *body;
  std::vector<int> kept;
  std::vector<int> appended;
  std::vector<std::string> elements;
  for (int k = 0; k < carried; ++k) {
    if (c.Sequence(c.InputName(2 + k)) == nullptr) {
      kept.push_back(k);
      continue;
    }
    SF_ASSIGN_OR_RETURN(std::string element, AppendedElement(c, *body, k));
    appended.push_back(k);
    elements.push_back(std::move(element));
  }
  for (auto k = appended.rbegin(); k != appended.rend(); ++k) {
    auto* nodes = loop_body.mutable_node();
    for (int j = 0; j < nodes->size(); ++j) {
      if (nodes->Get(j).op_type() == "SequenceInsert" &&
          nodes->Get(j).input(0) == body->input(2 + *k).name()) {
        nodes->erase(nodes->begin() + j);
        break;
      }
    }
    loop_body.mutable_input()->erase(loop_body.mutable_input()->begin() + 2 +
                                     *k);
    loop_body.mutable_output()->erase(loop_body.mutable_output()->begin() +
                                      1 + *k);
  }
  for (const std::string& element : elements) {
    loop_body.add_output()->set_name(element);
  }

  // The carried variables: the iteration number, the loop-carried values
  // (the node's outputs), the condition.
  const std::string iter = c.Temp("iter");
  std::vector<std::string> init = {iter0};
  std::vector<std::string> out = {iter};
  std::vector<SubgraphInput> inputs = {{c.Info(iter0), iter},
                                       {c.Info(cond), cond}};
  for (int k : kept) {
    SF_ASSIGN_OR_RETURN(const std::string v, c.Input(2 + k));
    init.push_back(v);
    out.push_back(OutputOrTemp(c, k, "carried"));
    inputs.push_back({c.Info(v), out.back()});
  }
  out.push_back(cond);
  SF_ASSIGN_OR_RETURN(Subgraph sub,
                      ConvertSubgraph(c, "body", loop_body, inputs));
  // From here on, "carried" counts the loop-carried tensors.
  const int sequences = static_cast<int>(appended.size());
  const int body_carried = carried;
  carried = static_cast<int>(kept.size());

  // The body's end: carried values back, the iteration counted, the next
  // condition.
  BlockDef& block = *sub.block;
  for (int k = 0; k < carried; ++k) {
    const VarInfo& before = c.Info(init[1 + k]);
    const VarInfo& after = sub.output_infos[1 + k];
    bool same_shape = true;
    if (before.has_dims && after.has_dims) {
      same_shape = before.dims.size() == after.dims.size();
      for (size_t d = 0; same_shape && d < before.dims.size(); ++d) {
        same_shape = before.dims[d] < 0 || after.dims[d] < 0 ||
                     before.dims[d] == after.dims[d];
      }
    }
    SF_CHECK(before.dtype == after.dtype ||
                 after.dtype == DATA_TYPE_UNSPECIFIED,
             "loop-carried value %d enters the loop as %s but the body makes "
             "it %s",
             k, DataTypeName(before.dtype), DataTypeName(after.dtype));
    if (!same_shape) {
      return Unsupported(absl::StrFormat(
          "loop-carried value %d enters the loop as %s but the body makes it "
          "%s: scopeflow's while keeps a carried variable's shape",
          k, Describe(before), Describe(after)));
    }
    AppendOp(block, OpBuilder("assign")
                        .In("X", sub.outputs[1 + k])
                        .Out("Out", out[1 + k]));
  }
  AppendOp(block,
           OpBuilder("add").In("X", iter).In("Y", step).Out("Out", iter));
  if (!trip.empty()) {
    const std::string below = c.Temp("below_trip_count");
    AppendOp(block,
             OpBuilder("less").In("X", iter).In("Y", trip).Out("Out", below));
    AppendOp(block, OpBuilder("logical_and")
                        .In("X", sub.outputs[0])
                        .In("Y", below)
                        .Out("Out", cond));
  } else {
    AppendOp(block,
             OpBuilder("assign").In("X", sub.outputs[0]).Out("Out", cond));
  }

  std::vector<std::string> scan_names;
  std::vector<std::string> scan_outputs;
  for (int j = 0; j < scans + sequences; ++j) {
    scan_names.push_back(sub.outputs[1 + carried + j]);
    scan_outputs.push_back(j < scans
                               ? OutputOrTemp(c, body_carried + j, "scan")
                               : c.Temp("appended"));
  }
  OpBuilder op("while");
  op.In("Condition", cond)
      .In("X", OuterReads(block, out))
      .In("Init", init)
      .Out("Out", out)
      .BlockAttr("sub_block", sub.index);
  if (!scan_outputs.empty()) {
    op.Out("StepOutputs", scan_outputs).Attr("step_outputs", scan_names);
  }
  if (c.options().keep_recurrent_step_scopes) {
    op.Out("StepScopes", c.Temp("step_scopes"));
  }
  SF_RETURN_IF_ERROR(c.Emit(op));
  // The iteration count is known only when it is a constant M and cond
  // does not stop the loop early; left unknown.
  for (int j = 0; j < scans + sequences; ++j) {
    VarInfo info = sub.output_infos[1 + carried + j];
    if (info.has_dims) info.dims.insert(info.dims.begin(), -1);
    c.Declare(scan_outputs[j], info);
  }
  for (int s = 0; s < sequences; ++s) {
    const int k = appended[s];
    if (!c.HasOutput(k)) continue;
    c.SetSequenceOutput(
        k, {sub.output_infos[1 + carried + scans + s].dtype,
            scan_outputs[scans + s]});
  }
  return absl::OkStatus();
}


// `axis` of a rank-`rank` tensor, negative counting from the end.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int64_t rank,
                                  absl::string_view what) {
  SF_CHECK(axis >= -rank && axis < rank,
           "%s = %d is out of range for rank %d", what, axis, rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// A transpose of `var` moving axis `from` to position `to`.
absl::Status MoveAxis(NodeContext& c, const std::string& var, int64_t rank,
                      int from, int to, const std::string& out) {
  std::vector<int32_t> perm;
  for (int i = 0; i < rank; ++i) {
    if (i != from) perm.push_back(i);
  }
  perm.insert(perm.begin() + to, from);
  return c.Emit(
      OpBuilder("transpose").In("X", var).Out("Out", out).Attr("perm", perm));
}

// What Scan's converter works with once opset 8's batch axis is gone.
struct ScanSpec {
  std::vector<std::string> states;        // Initial values.
  std::vector<std::string> scan_inputs;   // As the node gives them.
  std::vector<int64_t> input_axes;        // Their sequence axes.
  std::vector<int64_t> input_directions;  // 0 forward, 1 reverse.
  std::vector<int64_t> output_axes;
  std::vector<int64_t> output_directions;
  std::vector<std::string> final_states;  // Where the results go.
  std::vector<std::string> scan_outputs;
};

absl::Status EmitScan(NodeContext& c, const onnx::GraphProto& body,
                      const ScanSpec& spec) {
  const int n = static_cast<int>(spec.states.size());
  const int m = static_cast<int>(spec.scan_inputs.size());
  const int k = static_cast<int>(spec.scan_outputs.size());
  SF_CHECK(m > 0, "Scan needs at least one scan input (num_scan_inputs)");
  SF_CHECK(body.input_size() == n + m,
           "attribute \"body\": the subgraph has %d inputs, expected %d (%d "
           "states and %d scan input elements)",
           body.input_size(), n + m, n, m);
  SF_CHECK(body.output_size() == n + k,
           "attribute \"body\": the subgraph has %d outputs, expected %d (%d "
           "states and %d scan outputs)",
           body.output_size(), n + k, n, k);
  // recurrent runs every sequence one way, and stacks each step's values
  // at its step's position.
  const int64_t reverse = spec.input_directions[0];
  for (int64_t d : spec.input_directions) {
    SF_CHECK(d == 0 || d == 1, "a scan direction is %d: expected 0 or 1", d);
    if (d != reverse) {
      return Unsupported(
          "scan inputs run in different directions: scopeflow's recurrent "
          "runs all its sequences one way");
    }
  }
  for (int64_t d : spec.output_directions) {
    SF_CHECK(d == 0 || d == 1, "a scan direction is %d: expected 0 or 1", d);
    if (d != reverse) {
      return Unsupported(absl::StrFormat(
          "a scan output's direction (%d) differs from the scan inputs' "
          "(%d): scopeflow's recurrent stacks each step's value at its "
          "input's position",
          d, reverse));
    }
  }
  std::vector<SubgraphInput> inputs;
  for (const std::string& state : spec.states) {
    inputs.push_back({c.Info(state), ""});
  }
  std::vector<std::string> sequences;
  int64_t steps = -1;
  for (int j = 0; j < m; ++j) {
    const std::string& x = spec.scan_inputs[j];
    VarInfo info = c.Info(x);
    SF_CHECK(info.has_dims,
             "scan input %d (\"%s\") has an unknown rank: the conversion "
             "needs it to find the sequence axis",
             j, x);
    const int64_t rank = static_cast<int64_t>(info.dims.size());
    SF_ASSIGN_OR_RETURN(
        const int axis,
        NormalizeAxis(spec.input_axes[j], rank,
                      absl::StrFormat("scan_input_axes[%d]", j)));
    std::string sequence = x;
    if (axis != 0) {
      sequence = c.Temp(absl::StrCat("time_major", j));
      SF_RETURN_IF_ERROR(MoveAxis(c, x, rank, axis, 0, sequence));
    }
    if (info.dims[axis] >= 0) steps = info.dims[axis];
    sequences.push_back(sequence);
    info.dims.erase(info.dims.begin() + axis);
    inputs.push_back({info, ""});
  }
  SF_ASSIGN_OR_RETURN(Subgraph sub, ConvertSubgraph(c, "body", body, inputs));
  std::vector<std::string> ex_states, step_inputs, states, step_outputs;
  for (int i = 0; i < n; ++i) {
    ex_states.push_back(body.input(i).name());
    states.push_back(sub.outputs[i]);
  }
  for (int j = 0; j < m; ++j) step_inputs.push_back(body.input(n + j).name());
  std::vector<std::string> stacked;
  std::vector<int> out_axes;
  for (int j = 0; j < k; ++j) {
    step_outputs.push_back(sub.outputs[n + j]);
    const VarInfo& info = sub.output_infos[n + j];
    int axis = 0;
    if (spec.output_axes[j] != 0) {
      SF_CHECK(info.has_dims,
               "scan output %d has an unknown rank: the conversion needs it "
               "to place the sequence axis (scan_output_axes)",
               j);
      SF_ASSIGN_OR_RETURN(
          axis, NormalizeAxis(spec.output_axes[j],
                              static_cast<int64_t>(info.dims.size()) + 1,
                              absl::StrFormat("scan_output_axes[%d]", j)));
    }
    out_axes.push_back(axis);
    stacked.push_back(axis == 0 ? spec.scan_outputs[j]
                                : c.Temp(absl::StrCat("stacked", j)));
  }
  OpBuilder op("recurrent");
  op.In("X", sequences)
      .In("InitStates", spec.states)
      .In("Params", OuterReads(*sub.block, {}))
      .Out("Out", stacked)
      .Out("FinalStates", spec.final_states)
      .BlockAttr("sub_block", sub.index)
      .Attr("step_inputs", step_inputs)
      .Attr("ex_states", ex_states)
      .Attr("states", states)
      .Attr("step_outputs", step_outputs)
      .Attr("reverse", reverse == 1);
  if (c.options().keep_recurrent_step_scopes) {
    op.Out("StepScopes", c.Temp("step_scopes"));
  }
  SF_RETURN_IF_ERROR(c.Emit(op));
  for (int j = 0; j < k; ++j) {
    VarInfo info = sub.output_infos[n + j];
    if (info.has_dims) info.dims.insert(info.dims.begin(), steps);
    c.Declare(stacked[j], info);
    if (out_axes[j] != 0) {
      SF_RETURN_IF_ERROR(MoveAxis(c, stacked[j],
                                  static_cast<int64_t>(info.dims.size()), 0,
                                  out_axes[j], spec.scan_outputs[j]));
    }
  }
  return absl::OkStatus();
}

absl::Status ConvertScan(NodeContext& c) {
  SF_ASSIGN_OR_RETURN(const onnx::GraphProto* body, GraphAttr(c, "body"));
  SF_ASSIGN_OR_RETURN(const int64_t m, c.IntAttr("num_scan_inputs"));
  // Opset 8 puts sequence_lens first and a batch axis on every input.
  const bool batched = c.opset() < 9;
  const int first = batched ? 1 : 0;
  const int n = c.InputCount() - first - static_cast<int>(m);
  SF_CHECK(m >= 1 && n >= 0,
           "num_scan_inputs = %d, but the node lists %d inputs", m,
           c.InputCount());
  SF_CHECK(c.OutputCount() >= n,
           "the node lists %d outputs, fewer than its %d states",
           c.OutputCount(), n);
  const int k = body->output_size() - n;
  ScanSpec spec;
  for (int i = 0; i < n; ++i) {
    SF_ASSIGN_OR_RETURN(const std::string state, c.Input(first + i));
    spec.states.push_back(state);
    spec.final_states.push_back(OutputOrTemp(c, i, "final_state"));
  }
  for (int j = 0; j < m; ++j) {
    SF_ASSIGN_OR_RETURN(const std::string x, c.Input(first + n + j));
    spec.scan_inputs.push_back(x);
  }
  for (int j = 0; j < k; ++j) {
    spec.scan_outputs.push_back(OutputOrTemp(c, n + j, "scan_output"));
  }
  auto sized = [](std::vector<int64_t> values, int64_t count,
                  absl::string_view name) -> absl::StatusOr<std::vector<int64_t>> {
    if (values.empty()) values.assign(count, 0);
    SF_CHECK(static_cast<int64_t>(values.size()) == count,
             "attribute \"%s\" has %d values, expected %d", name,
             values.size(), count);
    return values;
  };
  if (!batched) {
    SF_ASSIGN_OR_RETURN(std::vector<int64_t> a, c.IntsAttr("scan_input_axes", std::vector<int64_t>{}));
    SF_ASSIGN_OR_RETURN(spec.input_axes, sized(a, m, "scan_input_axes"));
    SF_ASSIGN_OR_RETURN(a, c.IntsAttr("scan_input_directions", std::vector<int64_t>{}));
    SF_ASSIGN_OR_RETURN(spec.input_directions,
                        sized(a, m, "scan_input_directions"));
    SF_ASSIGN_OR_RETURN(a, c.IntsAttr("scan_output_axes", std::vector<int64_t>{}));
    SF_ASSIGN_OR_RETURN(spec.output_axes, sized(a, k, "scan_output_axes"));
    SF_ASSIGN_OR_RETURN(a, c.IntsAttr("scan_output_directions", std::vector<int64_t>{}));
    SF_ASSIGN_OR_RETURN(spec.output_directions,
                        sized(a, k, "scan_output_directions"));
    return EmitScan(c, *body, spec);
  }
  // Opset 8: the body sees one batch element; supported for a batch of
  // one, whose axis is dropped around a scan of the rest.
  if (c.HasInput(0)) {
    return Unsupported(
        "input 0 (sequence_lens) is given: scopeflow's recurrent runs every "
        "sequence to its full length");
  }
  SF_ASSIGN_OR_RETURN(std::vector<int64_t> directions,
                      c.IntsAttr("directions", std::vector<int64_t>{}));
  SF_ASSIGN_OR_RETURN(spec.input_directions,
                      sized(directions, m, "directions"));
  spec.input_axes.assign(m, 0);
  spec.output_axes.assign(k, 0);
  spec.output_directions.assign(k, spec.input_directions[0]);
  ScanSpec inner = spec;
  auto drop_batch = [&](std::string& var) -> absl::Status {
    const VarInfo info = c.Info(var);
    if (!info.has_dims || info.dims.empty() || info.dims[0] != 1) {
      return Unsupported(absl::StrFormat(
          "\"%s\" has batch axis %s: opset 8's Scan is supported for a "
          "batch of one",
          var, info.has_dims ? DimsToString(info.dims) : "[?]"));
    }
    const std::string squeezed = c.Temp("unbatched");
    SF_RETURN_IF_ERROR(c.Emit(OpBuilder("squeeze")
                                  .In("X", var)
                                  .Out("Out", squeezed)
                                  .Attr("axes", std::vector<int32_t>{0})));
    var = squeezed;
    return absl::OkStatus();
  };
  for (std::string& var : inner.states) SF_RETURN_IF_ERROR(drop_batch(var));
  for (std::string& var : inner.scan_inputs) {
    SF_RETURN_IF_ERROR(drop_batch(var));
  }
  for (std::string& var : inner.final_states) var = c.Temp("final_unbatched");
  for (std::string& var : inner.scan_outputs) var = c.Temp("scan_unbatched");
  SF_RETURN_IF_ERROR(EmitScan(c, *body, inner));
  std::vector<std::pair<std::string, std::string>> batched_outputs;
  for (int i = 0; i < n; ++i) {
    batched_outputs.push_back({inner.final_states[i], spec.final_states[i]});
  }
  for (int j = 0; j < k; ++j) {
    batched_outputs.push_back({inner.scan_outputs[j], spec.scan_outputs[j]});
  }
  for (const auto& [unbatched, out] : batched_outputs) {
    SF_RETURN_IF_ERROR(c.Emit(OpBuilder("unsqueeze")
                                  .In("X", unbatched)
                                  .Out("Out", out)
                                  .Attr("axes", std::vector<int32_t>{0})));
  }
  return absl::OkStatus();
}

}  // namespace

void AddControlFlowConverters(ConverterMap& map) {
  map["If"] = ConvertIf;
  map["Loop"] = ConvertLoop;
  map["Scan"] = ConvertScan;
}

}  // namespace onnx_import
}  // namespace scopeflow
