// Converters of ONNX's recurrent layers (LSTM, GRU, RNN) onto scopeflow's
// `recurrent` op (docs/CONTROL_FLOW.md), so that they differentiate through
// recurrent_grad like any net built from primitive ops (imported with
// ImportOptions::keep_recurrent_step_scopes, which keeps every step's scope).
//
// Per direction d the node becomes, in block 0:
//   xw = X W[d]^T + bias            [T, batch, gates * hidden], all steps at
//                                    once (one large matmul)
//   recurrent(X = xw, InitStates = h0 (, c0), Params = R[d] (, Rb))
// and a step block of primitive ops computing one cell step from xw[t] and
// the previous states (the gate equations of the ONNX operator definitions,
// with ONNX's gate orders: LSTM i, o, f, c; GRU z, r, h). A reverse
// direction runs the same op with `reverse`; Y stacks the directions on
// axis 1 ([T, num_directions, batch, hidden]), Y_h and Y_c on axis 0.
//
// Supported: every direction, optional B, initial_h, initial_c, P, any of the
// outputs, layout 0 and 1, GRU's linear_before_reset 0 and 1, the default
// activations (also when written out, as torch does), and sequence_lens
// when it is a constant equal to the sequence length. Not supported (an
// Unimplemented error): other activations, clip, LSTM's input_forget, and
// sequence_lens of other lengths.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

enum class Cell { kLstm, kGru, kRnn };

struct CellSpec {
  Cell cell;
  int gates;
  std::vector<std::string> activations;
};

CellSpec SpecOf(Cell cell) {
  switch (cell) {
    case Cell::kLstm:
      return {cell, 4, {"Sigmoid", "Tanh", "Tanh"}};
    case Cell::kGru:
      return {cell, 3, {"Sigmoid", "Tanh"}};
    case Cell::kRnn:
      break;
  }
  return {Cell::kRnn, 1, {"Tanh"}};
}

// Everything the step of one direction needs, and what it produces.
struct Direction {
  int index = 0;
  bool reverse = false;
  // Block-0 variables.
  std::string xw;  // [T, batch, gates * hidden], bias included.
  std::string r;   // [gates * hidden, hidden].
  std::string rb;  // GRU: R's bias [gates * hidden], or "" without B.
  std::string h0;  // [batch, hidden].
  std::string c0;  // LSTM.
  // LSTM peepholes [hidden] each, or "" without P.
  std::string p_i;
  std::string p_o;
  std::string p_f;
  // Results.
  std::string y;    // [T, batch, hidden].
  std::string h_n;  // [batch, hidden].
  std::string c_n;
};

// `var` [D, ...] at index d, as [...].
absl::StatusOr<std::string> TakeDirection(NodeContext& c,
                                          const std::string& var, int d,
                                          absl::string_view hint) {
  const std::string sliced = c.Temp(absl::StrCat(hint, "_slice", d));
  SF_RETURN_IF_ERROR(c.Emit(OpBuilder("slice")
                                .In("X", var)
                                .Out("Out", sliced)
                                .Attr("axes", std::vector<int32_t>{0})
                                .Attr("starts", std::vector<int32_t>{d})
                                .Attr("ends", std::vector<int32_t>{d + 1})));
  const std::string out = c.Temp(absl::StrCat(hint, d));
  SF_RETURN_IF_ERROR(c.Emit(OpBuilder("squeeze")
                                .In("X", sliced)
                                .Out("Out", out)
                                .Attr("axes", std::vector<int32_t>{0})));
  return out;
}

// `var`'s elements [begin, end) along `axis`.
absl::StatusOr<std::string> SliceAxis(NodeContext& c, const std::string& var,
                                      int32_t axis, int64_t begin, int64_t end,
                                      absl::string_view hint) {
  const std::string out = c.Temp(hint);
  SF_RETURN_IF_ERROR(
      c.Emit(OpBuilder("slice")
                 .In("X", var)
                 .Out("Out", out)
                 .Attr("axes", std::vector<int32_t>{axis})
                 .Attr("starts", std::vector<int32_t>{static_cast<int32_t>(begin)})
                 .Attr("ends", std::vector<int32_t>{static_cast<int32_t>(end)})));
  return out;
}

// Builds a step block's ops; temporaries take node-unique names so that
// none shadows or writes a variable of block 0.
class StepBuilder {
 public:
  explicit StepBuilder(NodeContext& context) : context_(context) {}

  void Declare(const std::string& name, DataType dtype, int64_t batch,
               int64_t width) {
    VarDef* var = block_.add_vars();
    var->set_name(name);
    var->set_dtype(dtype);
    var->add_shape(batch);
    var->add_shape(width);
  }
  std::string Op(const std::string& type, std::vector<std::string> inputs,
                 absl::string_view hint) {
    const std::string out = context_.Temp(hint);
    OpDef* op = block_.add_ops();
    op->set_type(type);
    static const char* const kSlots[] = {"X", "Y"};
    for (size_t i = 0; i < inputs.size(); ++i) {
      OpSlot* slot = op->add_inputs();
      slot->set_slot(kSlots[i]);
      slot->add_vars(inputs[i]);
    }
    OpSlot* slot = op->add_outputs();
    slot->set_slot("Out");
    slot->add_vars(out);
    return out;
  }
  // x h^T (a matmul against a [gates * hidden, hidden] weight).
  std::string MatMulT(const std::string& x, const std::string& w,
                      absl::string_view hint) {
    const std::string out = Op("matmul", {x, w}, hint);
    AttrDef* attr = block_.mutable_ops(block_.ops_size() - 1)->add_attrs();
    attr->set_name("transpose_y");
    attr->set_b(true);
    return out;
  }
  std::vector<std::string> Split(const std::string& x, int parts,
                                 absl::string_view hint) {
    OpDef* op = block_.add_ops();
    op->set_type("split");
    OpSlot* in = op->add_inputs();
    in->set_slot("X");
    in->add_vars(x);
    OpSlot* out = op->add_outputs();
    out->set_slot("Out");
    std::vector<std::string> names;
    for (int i = 0; i < parts; ++i) {
      names.push_back(context_.Temp(absl::StrCat(hint, i)));
      out->add_vars(names.back());
    }
    AttrDef* axis = op->add_attrs();
    axis->set_name("axis");
    axis->set_i(1);
    AttrDef* num = op->add_attrs();
    num->set_name("num");
    num->set_i(parts);
    return names;
  }
  BlockDef& block() { return block_; }

 private:
  NodeContext& context_;
  BlockDef block_;
};

// Emits direction `dir`'s recurrent op, with its step block.
absl::Status EmitDirection(NodeContext& c, const CellSpec& spec,
                           bool linear_before_reset, int64_t hidden,
                           Direction& dir) {
  const VarInfo xw_info = c.Info(dir.xw);
  const int64_t batch =
      xw_info.has_dims && xw_info.dims.size() == 3 ? xw_info.dims[1] : -1;
  const DataType dtype = xw_info.dtype;
  StepBuilder step(c);
  const std::string x_t = c.Temp("x_t");
  const std::string h_prev = c.Temp("h_prev");
  step.Declare(x_t, dtype, batch, spec.gates * hidden);
  step.Declare(h_prev, dtype, batch, hidden);
  std::vector<std::string> params = {dir.r};
  std::vector<std::string> ex_states = {h_prev};
  std::vector<std::string> init = {dir.h0};
  std::string h;
  std::string cell_state;
  switch (spec.cell) {
    case Cell::kRnn: {
      const std::string hr = step.MatMulT(h_prev, dir.r, "hr");
      h = step.Op("tanh", {step.Op("add", {x_t, hr}, "pre")}, "h");
      break;
    }
    case Cell::kLstm: {
      const std::string c_prev = c.Temp("c_prev");
      step.Declare(c_prev, dtype, batch, hidden);
      ex_states.push_back(c_prev);
      init.push_back(dir.c0);
      const std::string hr = step.MatMulT(h_prev, dir.r, "hr");
      const std::string pre = step.Op("add", {x_t, hr}, "pre");
      const std::vector<std::string> g = step.Split(pre, 4, "gate");
      std::string i_pre = g[0];
      std::string o_pre = g[1];
      std::string f_pre = g[2];
      const bool peepholes = !dir.p_i.empty();
      if (peepholes) {
        // i and f see the previous cell state, o the new one.
        i_pre = step.Op("add", {i_pre, step.Op("mul", {dir.p_i, c_prev}, "pic")},
                        "i_pre");
        f_pre = step.Op("add", {f_pre, step.Op("mul", {dir.p_f, c_prev}, "pfc")},
                        "f_pre");
        params.insert(params.end(), {dir.p_i, dir.p_o, dir.p_f});
      }
      const std::string i = step.Op("sigmoid", {i_pre}, "i");
      const std::string f = step.Op("sigmoid", {f_pre}, "f");
      const std::string cand = step.Op("tanh", {g[3]}, "cand");
      cell_state = step.Op("add",
                           {step.Op("mul", {f, c_prev}, "fc"),
                            step.Op("mul", {i, cand}, "ic")},
                           "c");
      if (peepholes) {
        o_pre = step.Op(
            "add", {o_pre, step.Op("mul", {dir.p_o, cell_state}, "poc")},
            "o_pre");
      }
      const std::string o = step.Op("sigmoid", {o_pre}, "o");
      h = step.Op("mul", {o, step.Op("tanh", {cell_state}, "tanh_c")}, "h");
      break;
    }
    case Cell::kGru: {
      const std::vector<std::string> x = step.Split(x_t, 3, "xg");
      std::string z_pre;
      std::string r_pre;
      std::string n_pre;
      if (linear_before_reset) {
        // n = tanh(xh + r * (h Rh^T + Rbh)).
        std::string hr = step.MatMulT(h_prev, dir.r, "hr");
        if (!dir.rb.empty()) {
          hr = step.Op("add", {hr, dir.rb}, "hrb");
          params.push_back(dir.rb);
        }
        const std::vector<std::string> hg = step.Split(hr, 3, "hg");
        z_pre = step.Op("add", {x[0], hg[0]}, "z_pre");
        r_pre = step.Op("add", {x[1], hg[1]}, "r_pre");
        const std::string r = step.Op("sigmoid", {r_pre}, "r");
        n_pre = step.Op("add", {x[2], step.Op("mul", {r, hg[2]}, "rh")},
                        "n_pre");
      } else {
        // n = tanh(xh + (r * h) Rh^T + Rbh).
        SF_ASSIGN_OR_RETURN(const std::string r_zr,
                            SliceAxis(c, dir.r, 0, 0, 2 * hidden, "R_zr"));
        SF_ASSIGN_OR_RETURN(
            const std::string r_h,
            SliceAxis(c, dir.r, 0, 2 * hidden, 3 * hidden, "R_h"));
        params = {r_zr, r_h};
        std::string hzr = step.MatMulT(h_prev, r_zr, "hzr");
        std::string rb_h;
        if (!dir.rb.empty()) {
          SF_ASSIGN_OR_RETURN(const std::string rb_zr,
                              SliceAxis(c, dir.rb, 0, 0, 2 * hidden, "Rb_zr"));
          SF_ASSIGN_OR_RETURN(
              rb_h, SliceAxis(c, dir.rb, 0, 2 * hidden, 3 * hidden, "Rb_h"));
          params.push_back(rb_zr);
          params.push_back(rb_h);
          hzr = step.Op("add", {hzr, rb_zr}, "hzrb");
        }
        const std::vector<std::string> hg = step.Split(hzr, 2, "hg");
        z_pre = step.Op("add", {x[0], hg[0]}, "z_pre");
        r_pre = step.Op("add", {x[1], hg[1]}, "r_pre");
        const std::string r = step.Op("sigmoid", {r_pre}, "r");
        std::string rh =
            step.MatMulT(step.Op("mul", {r, h_prev}, "r_h"), r_h, "rhR");
        if (!rb_h.empty()) rh = step.Op("add", {rh, rb_h}, "rhRb");
        n_pre = step.Op("add", {x[2], rh}, "n_pre");
      }
      const std::string z = step.Op("sigmoid", {z_pre}, "z");
      const std::string n = step.Op("tanh", {n_pre}, "n");
      // h = (1 - z) n + z h_prev = n + z (h_prev - n).
      h = step.Op("add",
                  {n, step.Op("mul", {z, step.Op("sub", {h_prev, n}, "hmn")},
                              "zd")},
                  "h");
      break;
    }
  }
  std::vector<std::string> states = {h};
  std::vector<std::string> finals = {dir.h_n};
  if (spec.cell == Cell::kLstm) {
    states.push_back(cell_state);
    finals.push_back(dir.c_n);
  }
  const int32_t block = c.AddBlock(std::move(step.block()));
  OpBuilder op("recurrent");
  op.In("X", dir.xw)
      .In("InitStates", init)
      .In("Params", params)
      .Out("Out", dir.y)
      .Out("FinalStates", finals)
      .BlockAttr("sub_block", block)
      .Attr("step_inputs", std::vector<std::string>{x_t})
      .Attr("ex_states", ex_states)
      .Attr("states", states)
      .Attr("step_outputs", std::vector<std::string>{h})
      .Attr("reverse", dir.reverse);
  if (c.options().keep_recurrent_step_scopes) {
    // recurrent_grad reads the steps' values in their kept scopes; the
    // executor drops them when a run ends.
    op.Out("StepScopes", c.Temp("step_scopes"));
  }
  return c.Emit(op);
}

// Stacks `parts` (each [...]) along a new axis, writing `out`.
absl::Status Stack(NodeContext& c, const std::vector<std::string>& parts,
                   int32_t axis, const std::string& out) {
  if (parts.size() == 1) {
    return c.Emit(OpBuilder("unsqueeze")
                      .In("X", parts[0])
                      .Out("Out", out)
                      .Attr("axes", std::vector<int32_t>{axis}));
  }
  std::vector<std::string> expanded;
  for (const std::string& part : parts) {
    expanded.push_back(c.Temp("stacked"));
    SF_RETURN_IF_ERROR(c.Emit(OpBuilder("unsqueeze")
                                  .In("X", part)
                                  .Out("Out", expanded.back())
                                  .Attr("axes", std::vector<int32_t>{axis})));
  }
  return c.Emit(OpBuilder("concat")
                    .In("X", expanded)
                    .Out("Out", out)
                    .Attr("axis", axis));
}

// Writes output `i`, [D, ...] stacked from `parts` (or, with layout 1 and
// `perm`, transposed from it).
absl::Status EmitStacked(NodeContext& c, int i,
                         const std::vector<std::string>& parts, int32_t axis,
                         bool batch_first, const std::vector<int32_t>& perm) {
  if (!batch_first) return Stack(c, parts, axis, c.Output(i));
  const std::string stacked = c.Temp("stacked");
  SF_RETURN_IF_ERROR(Stack(c, parts, axis, stacked));
  return c.Emit(OpBuilder("transpose")
                    .In("X", stacked)
                    .Out("Out", c.Output(i))
                    .Attr("perm", perm));
}

absl::Status CheckActivations(NodeContext& c, const CellSpec& spec,
                              int directions) {
  const onnx::AttributeProto* activations = c.Attr("activations");
  if (activations != nullptr) {
    std::vector<std::string> expected;
    for (int d = 0; d < directions; ++d) {
      expected.insert(expected.end(), spec.activations.begin(),
                      spec.activations.end());
    }
    std::vector<std::string> given(activations->strings().begin(),
                                   activations->strings().end());
    bool same = given.size() == expected.size();
    for (size_t k = 0; same && k < given.size(); ++k) {
      same = absl::AsciiStrToLower(given[k]) ==
             absl::AsciiStrToLower(expected[k]);
    }
    if (!same) {
      return Unsupported(absl::StrFormat(
          "activations [%s] are not supported: scopeflow converts only the "
          "defaults [%s] per direction",
          absl::StrJoin(given, ", "), absl::StrJoin(spec.activations, ", ")));
    }
  }
  for (const char* name : {"activation_alpha", "activation_beta"}) {
    if (c.Attr(name) != nullptr) {
      return Unsupported(absl::StrFormat(
          "attribute %s is not supported (only the default activations are)",
          name));
    }
  }
  return absl::OkStatus();
}

template <Cell kCell>
absl::Status ConvertRecurrent(NodeContext& c) {
  const CellSpec spec = SpecOf(kCell);
  SF_ASSIGN_OR_RETURN(const std::string direction,
                      c.StringAttr("direction", "forward"));
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "direction \"%s\" is none of forward, reverse, bidirectional",
        direction));
  }
  const int directions = direction == "bidirectional" ? 2 : 1;
  SF_RETURN_IF_ERROR(CheckActivations(c, spec, directions));
  if (c.Attr("clip") != nullptr) {
    return Unsupported("attribute clip (cell clipping) is not supported");
  }
  SF_ASSIGN_OR_RETURN(const int64_t layout, c.IntAttr("layout", 0));
  if (layout != 0 && layout != 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("layout %d is neither 0 nor 1", layout));
  }
  const bool batch_first = layout == 1;
  bool linear_before_reset = false;
  if (kCell == Cell::kGru) {
    SF_ASSIGN_OR_RETURN(const int64_t lbr, c.IntAttr("linear_before_reset", 0));
    linear_before_reset = lbr != 0;
  }
  if (kCell == Cell::kLstm) {
    SF_ASSIGN_OR_RETURN(const int64_t input_forget,
                        c.IntAttr("input_forget", 0));
    if (input_forget != 0) {
      return Unsupported("input_forget = 1 (coupled gates) is not supported");
    }
  }

  const VarInfo w_info = c.InputInfo(1);
  const VarInfo r_info = c.InputInfo(2);
  int64_t hidden = -1;
  if (r_info.has_dims && r_info.dims.size() == 3) hidden = r_info.dims[2];
  SF_ASSIGN_OR_RETURN(hidden, c.IntAttr("hidden_size", hidden));
  if (hidden <= 0) {
    return Unsupported(
        "hidden_size is not given and R's shape is unknown at import");
  }
  const int64_t gate_width = spec.gates * hidden;
  if (w_info.has_dims &&
      (w_info.dims.size() != 3 || w_info.dims[0] != directions ||
       (w_info.dims[1] >= 0 && w_info.dims[1] != gate_width))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "W (\"%s\") has shape %s; expected [%d, %d, input_size]",
        c.InputName(1), IntsToString({w_info.dims.begin(), w_info.dims.end()}), directions, gate_width));
  }
  if (r_info.has_dims &&
      (r_info.dims.size() != 3 || r_info.dims[0] != directions ||
       r_info.dims[1] != gate_width || r_info.dims[2] != hidden)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "R (\"%s\") has shape %s; expected [%d, %d, %d]", c.InputName(2),
        IntsToString({r_info.dims.begin(), r_info.dims.end()}), directions, gate_width, hidden));
  }

  SF_ASSIGN_OR_RETURN(std::string x, c.Input(0));
  if (batch_first) {
    const std::string time_major = c.Temp("X_time_major");
    SF_RETURN_IF_ERROR(c.Emit(OpBuilder("transpose")
                                  .In("X", x)
                                  .Out("Out", time_major)
                                  .Attr("perm", std::vector<int32_t>{1, 0, 2})));
    x = time_major;
  }
  const VarInfo x_info = c.Info(x);
  if (x_info.has_dims && x_info.dims.size() != 3) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "X (\"%s\") has rank %d; expected [seq_length, batch_size, "
        "input_size]%s",
        c.InputName(0), x_info.dims.size(),
        batch_first ? " (after layout 1's transpose)" : ""));
  }
  if (c.HasInput(4)) {
    const int64_t seq = x_info.has_dims ? x_info.dims[0] : -1;
    absl::StatusOr<std::vector<int64_t>> lens = c.ConstantInts(
        4, "scopeflow runs every sequence of a batch for the full length");
    if (!lens.ok()) return lens.status();
    for (int64_t len : *lens) {
      if (seq < 0 || len != seq) {
        return Unsupported(absl::StrFormat(
            "sequence_lens (\"%s\") = %s: scopeflow runs every sequence for "
            "the full length of X (%s), so sequence_lens must equal it",
            c.InputName(4), IntsToString(*lens),
            seq < 0 ? "not known at import" : absl::StrCat(seq)));
      }
    }
  }
  // Initial states [D, batch, hidden] (layout 1: [batch, D, hidden]).
  auto initial = [&](int i) -> absl::StatusOr<std::string> {
    if (!c.HasInput(i)) return std::string();
    SF_ASSIGN_OR_RETURN(std::string var, c.Input(i));
    if (!batch_first) return var;
    const std::string time_major = c.Temp("state_direction_major");
    SF_RETURN_IF_ERROR(c.Emit(OpBuilder("transpose")
                                  .In("X", var)
                                  .Out("Out", time_major)
                                  .Attr("perm", std::vector<int32_t>{1, 0, 2})));
    return time_major;
  };
  SF_ASSIGN_OR_RETURN(const std::string initial_h, initial(5));
  std::string initial_c;
  if (kCell == Cell::kLstm) {
    SF_ASSIGN_OR_RETURN(initial_c, initial(6));
  }
  SF_ASSIGN_OR_RETURN(const std::string w, c.Input(1));
  SF_ASSIGN_OR_RETURN(const std::string r, c.Input(2));
  std::string b;
  if (c.HasInput(3)) {
    SF_ASSIGN_OR_RETURN(b, c.Input(3));
  }

  std::string p;
  if (kCell == Cell::kLstm && c.HasInput(7)) {
    SF_ASSIGN_OR_RETURN(p, c.Input(7));
  }

  std::vector<Direction> dirs(directions);
  for (int d = 0; d < directions; ++d) {
    Direction& dir = dirs[d];
    dir.index = d;
    dir.reverse = direction == "reverse" || d == 1;
    SF_ASSIGN_OR_RETURN(const std::string w_d, TakeDirection(c, w, d, "W"));
    SF_ASSIGN_OR_RETURN(dir.r, TakeDirection(c, r, d, "R"));
    dir.xw = c.Temp(absl::StrCat("XW", d));
    SF_RETURN_IF_ERROR(c.Emit(OpBuilder("matmul")
                                  .In("X", x)
                                  .In("Y", w_d)
                                  .Out("Out", dir.xw)
                                  .Attr("transpose_y", true)));
    if (!b.empty()) {
      SF_ASSIGN_OR_RETURN(const std::string b_d, TakeDirection(c, b, d, "B"));
      SF_ASSIGN_OR_RETURN(const std::string wb,
                          SliceAxis(c, b_d, 0, 0, gate_width, "Wb"));
      SF_ASSIGN_OR_RETURN(const std::string rb,
                          SliceAxis(c, b_d, 0, gate_width, 2 * gate_width, "Rb"));
      std::string bias = wb;
      if (kCell == Cell::kGru) {
        // R's bias of the h gate lies inside the reset gate's product.
        dir.rb = rb;
      } else {
        bias = c.Temp("bias");
        SF_RETURN_IF_ERROR(c.Emit(
            OpBuilder("add").In("X", wb).In("Y", rb).Out("Out", bias)));
      }
      const std::string biased = c.Temp(absl::StrCat("XWb", d));
      SF_RETURN_IF_ERROR(c.Emit(
          OpBuilder("add").In("X", dir.xw).In("Y", bias).Out("Out", biased)));
      dir.xw = biased;
    }
    std::string zeros;
    if (initial_h.empty() || (kCell == Cell::kLstm && initial_c.empty())) {
      // [batch, hidden] zeros, shaped after xw[0] (the batch is known only
      // at run time).
      const std::string first = c.Temp("first_step");
      SF_RETURN_IF_ERROR(
          c.Emit(OpBuilder("slice")
                     .In("X", dir.xw)
                     .Out("Out", first)
                     .Attr("axes", std::vector<int32_t>{0, 2})
                     .Attr("starts", std::vector<int32_t>{0, 0})
                     .Attr("ends", std::vector<int32_t>{
                                       1, static_cast<int32_t>(hidden)})));
      const std::string squeezed = c.Temp("first_step_squeezed");
      SF_RETURN_IF_ERROR(c.Emit(OpBuilder("squeeze")
                                    .In("X", first)
                                    .Out("Out", squeezed)
                                    .Attr("axes", std::vector<int32_t>{0})));
      zeros = c.Temp("zero_state");
      SF_RETURN_IF_ERROR(c.Emit(OpBuilder("fill_any_like")
                                    .In("X", squeezed)
                                    .Out("Out", zeros)
                                    .Attr("value", 0.0f)));
    }
    if (initial_h.empty()) {
      dir.h0 = zeros;
    } else {
      SF_ASSIGN_OR_RETURN(dir.h0, TakeDirection(c, initial_h, d, "initial_h"));
    }
    if (kCell == Cell::kLstm) {
      if (initial_c.empty()) {
        dir.c0 = zeros;
      } else {
        SF_ASSIGN_OR_RETURN(dir.c0,
                            TakeDirection(c, initial_c, d, "initial_c"));
      }
    }
    if (!p.empty()) {
      // P [D, 3 * hidden]: i, o, f.
      SF_ASSIGN_OR_RETURN(const std::string p_d, TakeDirection(c, p, d, "P"));
      SF_ASSIGN_OR_RETURN(dir.p_i, SliceAxis(c, p_d, 0, 0, hidden, "P_i"));
      SF_ASSIGN_OR_RETURN(dir.p_o,
                          SliceAxis(c, p_d, 0, hidden, 2 * hidden, "P_o"));
      SF_ASSIGN_OR_RETURN(dir.p_f,
                          SliceAxis(c, p_d, 0, 2 * hidden, 3 * hidden, "P_f"));
    }
    dir.y = c.Temp(absl::StrCat("Y", d));
    dir.h_n = c.Temp(absl::StrCat("Y_h", d));
    dir.c_n = c.Temp(absl::StrCat("Y_c", d));
    SF_RETURN_IF_ERROR(
        EmitDirection(c, spec, linear_before_reset, hidden, dir));
  }

  std::vector<std::string> ys;
  std::vector<std::string> hs;
  std::vector<std::string> cs;
  for (const Direction& dir : dirs) {
    ys.push_back(dir.y);
    hs.push_back(dir.h_n);
    cs.push_back(dir.c_n);
  }
  // Y [T, D, batch, hidden] (layout 1: [batch, T, D, hidden]); Y_h, Y_c
  // [D, batch, hidden] (layout 1: [batch, D, hidden]).
  if (c.HasOutput(0)) {
    SF_RETURN_IF_ERROR(EmitStacked(c, 0, ys, 1, batch_first, {2, 0, 1, 3}));
  }
  if (c.HasOutput(1)) {
    SF_RETURN_IF_ERROR(EmitStacked(c, 1, hs, 0, batch_first, {1, 0, 2}));
  }
  if (kCell == Cell::kLstm && c.HasOutput(2)) {
    SF_RETURN_IF_ERROR(EmitStacked(c, 2, cs, 0, batch_first, {1, 0, 2}));
  }
  return absl::OkStatus();
}

}  // namespace

void AddRecurrentConverters(ConverterMap& map) {
  map["LSTM"] = &ConvertRecurrent<Cell::kLstm>;
  map["GRU"] = &ConvertRecurrent<Cell::kGru>;
  map["RNN"] = &ConvertRecurrent<Cell::kRnn>;
}

}  // namespace onnx_import
}  // namespace scopeflow
