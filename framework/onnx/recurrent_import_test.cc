// Importing ONNX LSTM, GRU and RNN: one-step values worked from the ONNX
// equations, directions and layouts against each other, what is refused,
// torch.nn exports against torch's own outputs
// (testdata/recurrent/make_recurrent_models.py), and the imported net's
// gradients against central differences.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_tensor.h"
#include "framework/onnx/onnx_test_models.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;
using onnx_testing::AddInitializer;
using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::FloatProto;
using onnx_testing::Int64Proto;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::RunNet;
using onnx_testing::SetFloat;
using onnx_testing::SetInt;
using onnx_testing::SetString;

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

std::vector<float> Values(const Tensor& tensor) {
  return onnx_testing::Values<float>(tensor);
}

void ExpectNear(const Tensor& got, Dims dims, const std::vector<double>& want,
                double tolerance = 1e-6) {
  EXPECT_EQ(got.dims(), dims);
  const std::vector<float> values = Values(got);
  ASSERT_EQ(values.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(values[i], want[i], tolerance) << "element " << i;
  }
}

TEST(RecurrentImportTest, RnnTwoStepsWorkedByHand) {
  // hidden 1: h_t = tanh(0.5 x_t + 0.25 h_{t-1} + 0.1 + 0.2), h_0 = 0.
  onnx::ModelProto model = Model(14);
  AddInput(model, "x", {2, 1, 1});
  AddInitializer(model, FloatProto("W", {1, 1, 1}, {0.5}));
  AddInitializer(model, FloatProto("R", {1, 1, 1}, {0.25}));
  AddInitializer(model, FloatProto("B", {1, 2}, {0.1, 0.2}));
  onnx::NodeProto* node =
      AddNode(model, "RNN", {"x", "W", "R", "B"}, {"y", "y_h"});
  SetInt(node, "hidden_size", 1);
  AddOutput(model, "y");
  AddOutput(model, "y_h");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", MakeTensor<float>({2, 1, 1}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  const double h1 = std::tanh(0.5 + 0.3);
  const double h2 = std::tanh(1.0 + 0.25 * h1 + 0.3);
  ExpectNear((*out)[0], {2, 1, 1, 1}, {h1, h2});
  ExpectNear((*out)[1], {1, 1, 1}, {h2});
}

// One LSTM step (hidden 1, gates i, o, f, c) with W = [1, 2, 3, 4], R =
// [0.5, -0.5, 0.25, 1], Wb = [0.1, 0.2, 0.3, 0.4], Rb = 0, peepholes
// `p` (i, o, f; none if empty); x = 0.5, h0 = 0.2, c0 = -0.3. Outputs
// Y_h, Y_c (Y is left empty).
absl::StatusOr<std::vector<Tensor>> RunLstmStep(const std::vector<float>& p) {
  onnx::ModelProto model = Model(14);
  AddInput(model, "x", {1, 1, 1});
  AddInput(model, "h0", {1, 1, 1});
  AddInput(model, "c0", {1, 1, 1});
  AddInitializer(model, FloatProto("W", {1, 4, 1}, {1, 2, 3, 4}));
  AddInitializer(model, FloatProto("R", {1, 4, 1}, {0.5, -0.5, 0.25, 1}));
  AddInitializer(model, FloatProto("B", {1, 8},
                                   {0.1, 0.2, 0.3, 0.4, 0, 0, 0, 0}));
  std::vector<std::string> inputs = {"x", "W", "R", "B", "", "h0", "c0"};
  if (!p.empty()) {
    AddInitializer(model, FloatProto("P", {1, 3}, p));
    inputs.push_back("P");
  }
  onnx::NodeProto* node = AddNode(model, "LSTM", inputs, {"", "y_h", "y_c"});
  SetInt(node, "hidden_size", 1);
  AddOutput(model, "y_h");
  AddOutput(model, "y_c");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  if (!imported.ok()) return imported.status();
  return RunNet(*imported, {{"x", MakeTensor<float>({1, 1, 1}, {0.5})},
                            {"h0", MakeTensor<float>({1, 1, 1}, {0.2})},
                            {"c0", MakeTensor<float>({1, 1, 1}, {-0.3})}});
}

TEST(RecurrentImportTest, LstmOneStepWorkedByHand) {
  absl::StatusOr<std::vector<Tensor>> out = RunLstmStep({});
  ASSERT_TRUE(out.ok()) << out.status();
  const double i = Sigmoid(0.5 * 1 + 0.2 * 0.5 + 0.1);
  const double o = Sigmoid(0.5 * 2 - 0.2 * 0.5 + 0.2);
  const double f = Sigmoid(0.5 * 3 + 0.2 * 0.25 + 0.3);
  const double g = std::tanh(0.5 * 4 + 0.2 * 1 + 0.4);
  const double c = f * -0.3 + i * g;
  ExpectNear((*out)[0], {1, 1, 1}, {o * std::tanh(c)});
  ExpectNear((*out)[1], {1, 1, 1}, {c});
}

TEST(RecurrentImportTest, LstmPeepholesWorkedByHand) {
  // i and f add P * c0, o adds P * c (the new cell state).
  absl::StatusOr<std::vector<Tensor>> out = RunLstmStep({0.3, -0.2, 0.5});
  ASSERT_TRUE(out.ok()) << out.status();
  const double i = Sigmoid(0.5 * 1 + 0.2 * 0.5 + 0.1 + 0.3 * -0.3);
  const double f = Sigmoid(0.5 * 3 + 0.2 * 0.25 + 0.3 + 0.5 * -0.3);
  const double g = std::tanh(0.5 * 4 + 0.2 * 1 + 0.4);
  const double c = f * -0.3 + i * g;
  const double o = Sigmoid(0.5 * 2 - 0.2 * 0.5 + 0.2 - 0.2 * c);
  ExpectNear((*out)[0], {1, 1, 1}, {o * std::tanh(c)});
  ExpectNear((*out)[1], {1, 1, 1}, {c});
}

// A one-step GRU (hidden 1, gates z, r, h): W = [1, 2, 3], R = [0.5, -1,
// 2], Wb = [0.1, 0.2, 0.3], Rb = [0.4, 0.5, 0.6]; x = 0.5, h0 = 0.4.
absl::StatusOr<std::vector<Tensor>> RunGruStep(int64_t linear_before_reset) {
  onnx::ModelProto model = Model(14);
  AddInput(model, "x", {1, 1, 1});
  AddInput(model, "h0", {1, 1, 1});
  AddInitializer(model, FloatProto("W", {1, 3, 1}, {1, 2, 3}));
  AddInitializer(model, FloatProto("R", {1, 3, 1}, {0.5, -1, 2}));
  AddInitializer(model,
                 FloatProto("B", {1, 6}, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}));
  onnx::NodeProto* node =
      AddNode(model, "GRU", {"x", "W", "R", "B", "", "h0"}, {"y"});
  SetInt(node, "hidden_size", 1);
  SetInt(node, "linear_before_reset", linear_before_reset);
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  if (!imported.ok()) return imported.status();
  return RunNet(*imported, {{"x", MakeTensor<float>({1, 1, 1}, {0.5})},
                            {"h0", MakeTensor<float>({1, 1, 1}, {0.4})}});
}

TEST(RecurrentImportTest, GruOneStepWorkedByHandBothResetForms) {
  const double z = Sigmoid(0.5 * 1 + 0.1 + 0.4 * 0.5 + 0.4);
  const double r = Sigmoid(0.5 * 2 + 0.2 - 0.4 + 0.5);
  // linear_before_reset 0: n = tanh(x Wh + Wbh + (r h) Rh + Rbh).
  const double n0 = std::tanh(0.5 * 3 + 0.3 + r * 0.4 * 2 + 0.6);
  // linear_before_reset 1: n = tanh(x Wh + Wbh + r (h Rh + Rbh)).
  const double n1 = std::tanh(0.5 * 3 + 0.3 + r * (0.4 * 2 + 0.6));
  absl::StatusOr<std::vector<Tensor>> out0 = RunGruStep(0);
  ASSERT_TRUE(out0.ok()) << out0.status();
  ExpectNear((*out0)[0], {1, 1, 1, 1}, {(1 - z) * n0 + z * 0.4});
  absl::StatusOr<std::vector<Tensor>> out1 = RunGruStep(1);
  ASSERT_TRUE(out1.ok()) << out1.status();
  ExpectNear((*out1)[0], {1, 1, 1, 1}, {(1 - z) * n1 + z * 0.4});
}

// An LSTM over x [3, 2, 2] (hidden 2) in `direction` with `layout`, the
// same weights in each direction, no initial state; outputs y, y_h, y_c.
absl::StatusOr<std::vector<Tensor>> RunLstm(const std::string& direction,
                                            int64_t layout, Tensor x) {
  const int64_t d = direction == "bidirectional" ? 2 : 1;
  std::vector<float> w;
  std::vector<float> r;
  std::vector<float> b;
  for (int64_t k = 0; k < d; ++k) {
    for (int i = 0; i < 16; ++i) w.push_back(0.1f * static_cast<float>(i % 7) - 0.3f);
    for (int i = 0; i < 16; ++i) r.push_back(0.05f * static_cast<float>(i % 5) - 0.1f);
    for (int i = 0; i < 16; ++i) b.push_back(0.02f * static_cast<float>(i) - 0.1f);
  }
  onnx::ModelProto model = Model(14);
  AddInput(model, "x", {x.dim(0), x.dim(1), 2});
  AddInitializer(model, FloatProto("W", {d, 8, 2}, w));
  AddInitializer(model, FloatProto("R", {d, 8, 2}, r));
  AddInitializer(model, FloatProto("B", {d, 16}, b));
  onnx::NodeProto* node =
      AddNode(model, "LSTM", {"x", "W", "R", "B"}, {"y", "y_h", "y_c"});
  SetInt(node, "hidden_size", 2);
  SetString(node, "direction", direction);
  if (layout != 0) SetInt(node, "layout", layout);
  AddOutput(model, "y");
  AddOutput(model, "y_h");
  AddOutput(model, "y_c");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  if (!imported.ok()) return imported.status();
  return RunNet(*imported, {{"x", std::move(x)}});
}

const std::vector<float> kSequence = {0.5, -1, 0.25, 2,  -0.5, 1,
                                      1.5, 0,  -2,   1, 0.75, -0.25};

// x [3, 2, 2] with its steps in reverse order.
std::vector<float> Reversed(const std::vector<float>& x) {
  std::vector<float> out;
  for (int t = 2; t >= 0; --t) {
    out.insert(out.end(), x.begin() + t * 4, x.begin() + t * 4 + 4);
  }
  return out;
}

TEST(RecurrentImportTest, ReverseAndBidirectionalMatchForwardOnReversedSteps) {
  const Tensor x = MakeTensor<float>({3, 2, 2}, kSequence);
  const Tensor x_reversed = MakeTensor<float>({3, 2, 2}, Reversed(kSequence));
  absl::StatusOr<std::vector<Tensor>> forward = RunLstm("forward", 0, x);
  absl::StatusOr<std::vector<Tensor>> reverse = RunLstm("reverse", 0, x);
  absl::StatusOr<std::vector<Tensor>> reverse_of_reversed =
      RunLstm("reverse", 0, x_reversed);
  absl::StatusOr<std::vector<Tensor>> both = RunLstm("bidirectional", 0, x);
  ASSERT_TRUE(forward.ok()) << forward.status();
  ASSERT_TRUE(reverse.ok()) << reverse.status();
  ASSERT_TRUE(reverse_of_reversed.ok()) << reverse_of_reversed.status();
  ASSERT_TRUE(both.ok()) << both.status();
  const std::vector<float> f = Values((*forward)[0]);
  const std::vector<float> r = Values((*reverse)[0]);
  const std::vector<float> rr = Values((*reverse_of_reversed)[0]);
  const std::vector<float> bi = Values((*both)[0]);
  ASSERT_EQ((*reverse)[0].dims(), (Dims{3, 1, 2, 2}));
  ASSERT_EQ((*both)[0].dims(), (Dims{3, 2, 2, 2}));
  for (int t = 0; t < 3; ++t) {
    for (int k = 0; k < 4; ++k) {  // batch 2 x hidden 2
      // Over the reversed sequence, the reverse direction at time t has
      // seen the original steps 0 ... T-1-t, as the forward one at T-1-t.
      EXPECT_NEAR(rr[t * 4 + k], f[(2 - t) * 4 + k], 1e-6);
      EXPECT_NEAR(bi[t * 8 + k], f[t * 4 + k], 1e-6);
      EXPECT_NEAR(bi[t * 8 + 4 + k], r[t * 4 + k], 1e-6);
    }
  }
  // Y_h: [forward's last step, the reverse direction's step 0].
  const std::vector<float> h = Values((*both)[1]);
  ASSERT_EQ((*both)[1].dims(), (Dims{2, 2, 2}));
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(h[k], f[8 + k], 1e-6);
    EXPECT_NEAR(h[4 + k], r[k], 1e-6);
  }
}

TEST(RecurrentImportTest, LayoutOneIsBatchFirst) {
  absl::StatusOr<std::vector<Tensor>> time_major =
      RunLstm("bidirectional", 0, MakeTensor<float>({3, 2, 2}, kSequence));
  // The same sequences batch-first: x[b][t] = kSequence[t][b].
  std::vector<float> batch_first(12);
  for (int t = 0; t < 3; ++t) {
    for (int b = 0; b < 2; ++b) {
      for (int i = 0; i < 2; ++i) {
        batch_first[(b * 3 + t) * 2 + i] = kSequence[(t * 2 + b) * 2 + i];
      }
    }
  }
  absl::StatusOr<std::vector<Tensor>> batch_major =
      RunLstm("bidirectional", 1, MakeTensor<float>({2, 3, 2}, batch_first));
  ASSERT_TRUE(time_major.ok()) << time_major.status();
  ASSERT_TRUE(batch_major.ok()) << batch_major.status();
  // Y [T, D, B, H] vs [B, T, D, H]; Y_h, Y_c [D, B, H] vs [B, D, H].
  ASSERT_EQ((*batch_major)[0].dims(), (Dims{2, 3, 2, 2}));
  ASSERT_EQ((*batch_major)[1].dims(), (Dims{2, 2, 2}));
  ASSERT_EQ((*batch_major)[2].dims(), (Dims{2, 2, 2}));
  const std::vector<float> y0 = Values((*time_major)[0]);
  const std::vector<float> y1 = Values((*batch_major)[0]);
  for (int t = 0; t < 3; ++t) {
    for (int d = 0; d < 2; ++d) {
      for (int b = 0; b < 2; ++b) {
        for (int h = 0; h < 2; ++h) {
          EXPECT_FLOAT_EQ(y1[((b * 3 + t) * 2 + d) * 2 + h],
                          y0[((t * 2 + d) * 2 + b) * 2 + h]);
        }
      }
    }
  }
  for (int out = 1; out <= 2; ++out) {
    const std::vector<float> s0 = Values((*time_major)[out]);
    const std::vector<float> s1 = Values((*batch_major)[out]);
    for (int d = 0; d < 2; ++d) {
      for (int b = 0; b < 2; ++b) {
        for (int h = 0; h < 2; ++h) {
          EXPECT_FLOAT_EQ(s1[(b * 2 + d) * 2 + h], s0[(d * 2 + b) * 2 + h]);
        }
      }
    }
  }
}

// A forward RNN node (hidden 1) with `edit` applied, imported.
template <typename Edit>
absl::Status ImportRnn(Edit edit, const std::string& op_type = "RNN") {
  const int64_t gates = op_type == "LSTM" ? 4 : op_type == "GRU" ? 3 : 1;
  onnx::ModelProto model = Model(14);
  AddInput(model, "x", {2, 1, 1});
  AddInitializer(model, FloatProto("W", {1, gates, 1},
                                   std::vector<float>(gates, 0.5f)));
  AddInitializer(model, FloatProto("R", {1, gates, 1},
                                   std::vector<float>(gates, 0.5f)));
  onnx::NodeProto* node = AddNode(model, op_type, {"x", "W", "R"}, {"y"},
                                  "the_" + op_type);
  SetInt(node, "hidden_size", 1);
  edit(model, *node);
  AddOutput(model, "y");
  return ImportOnnx(model).status();
}

TEST(RecurrentImportTest, SequenceLensEqualToTheLengthIsAccepted) {
  const absl::Status status =
      ImportRnn([](onnx::ModelProto& model, onnx::NodeProto& node) {
        AddInitializer(model, Int64Proto("lens", {1}, {2}));
        node.add_input("");
        node.add_input("lens");
      });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(RecurrentImportTest, RefusesWhatItCannotExpressNamingTheNode) {
  struct Case {
    std::string op_type;
    void (*edit)(onnx::ModelProto&, onnx::NodeProto&);
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"RNN",
       [](onnx::ModelProto& model, onnx::NodeProto& node) {
         AddInitializer(model, Int64Proto("lens", {1}, {1}));
         node.add_input("");
         node.add_input("lens");
       },
       "sequence_lens (\"lens\") = [1]"},
      {"RNN",
       [](onnx::ModelProto&, onnx::NodeProto& node) {
         SetFloat(&node, "clip", 3);
       },
       "attribute clip"},
      {"RNN",
       [](onnx::ModelProto&, onnx::NodeProto& node) {
         onnx::AttributeProto* attr = node.add_attribute();
         attr->set_name("activations");
         attr->set_type(onnx::AttributeProto::STRINGS);
         attr->add_strings("Relu");
       },
       "activations [Relu] are not supported"},
      {"GRU",
       [](onnx::ModelProto&, onnx::NodeProto& node) {
         onnx::AttributeProto* attr = node.add_attribute();
         attr->set_name("activations");
         attr->set_type(onnx::AttributeProto::STRINGS);
         attr->add_strings("Sigmoid");
         attr->add_strings("Relu");
       },
       "activations [Sigmoid, Relu] are not supported"},
      {"LSTM",
       [](onnx::ModelProto&, onnx::NodeProto& node) {
         SetInt(&node, "input_forget", 1);
       },
       "input_forget"},
      {"RNN",
       [](onnx::ModelProto&, onnx::NodeProto& node) {
         SetInt(&node, "layout", 2);
       },
       "layout 2"},
  };
  for (const Case& c : cases) {
    const absl::Status status = ImportRnn(c.edit, c.op_type);
    EXPECT_FALSE(status.ok()) << c.reason;
    EXPECT_THAT(status.message(), HasSubstr(c.reason));
    EXPECT_THAT(status.message(), HasSubstr("the_" + c.op_type));
  }
}

TEST(RecurrentImportTest, ExplicitDefaultActivationsAreAccepted) {
  // torch writes RNN's activations out: ["Tanh"].
  const absl::Status status =
      ImportRnn([](onnx::ModelProto&, onnx::NodeProto& node) {
        onnx::AttributeProto* attr = node.add_attribute();
        attr->set_name("activations");
        attr->set_type(onnx::AttributeProto::STRINGS);
        attr->add_strings("Tanh");
      });
  EXPECT_TRUE(status.ok()) << status;
}

// torch.nn exports (dynamic batch and sequence length) against torch's
// outputs at two batch sizes and two lengths.
absl::StatusOr<Tensor> ReadTensor(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError("cannot parse " + path);
  }
  return onnx_import::TensorFromOnnx(proto);
}

void CheckTorchExport(const std::string& name,
                      const std::vector<std::string>& inputs,
                      const std::vector<std::string>& outputs) {
  const std::string dir = "framework/onnx/testdata/recurrent/";
  absl::StatusOr<onnx::ModelProto> model = ReadOnnxModel(dir + name + ".onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<ImportedModel> imported = ImportOnnx(*model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  for (const char* shape : {"T2_B1", "T5_B3"}) {
    SCOPED_TRACE(absl::StrCat(name, " ", shape));
    const std::string prefix = absl::StrCat(dir, name, "_", shape, "_");
    std::vector<Feed> feeds;
    for (const std::string& input : inputs) {
      absl::StatusOr<Tensor> value = ReadTensor(prefix + input + ".pb");
      ASSERT_TRUE(value.ok()) << value.status();
      feeds.push_back({input, *std::move(value)});
    }
    absl::StatusOr<std::vector<Tensor>> out = RunNet(*imported, feeds);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      absl::StatusOr<Tensor> want = ReadTensor(prefix + outputs[i] + ".pb");
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_EQ((*out)[i].dims(), want->dims()) << outputs[i];
      const std::vector<float> got = Values((*out)[i]);
      const std::vector<float> expected = Values(*want);
      for (size_t k = 0; k < got.size(); ++k) {
        EXPECT_NEAR(got[k], expected[k], 1e-5) << outputs[i] << "[" << k << "]";
      }
    }
  }
}

TEST(RecurrentImportTest, TorchLstmTwoLayersBidirectionalMatchesTorch) {
  CheckTorchExport("lstm", {"x", "h0", "c0"}, {"y", "h_n", "c_n"});
}

TEST(RecurrentImportTest, TorchGruBidirectionalMatchesTorch) {
  CheckTorchExport("gru", {"x", "h0"}, {"y", "h_n"});
}

TEST(RecurrentImportTest, TorchRnnTwoLayersMatchesTorch) {
  CheckTorchExport("rnn", {"x", "h0"}, {"y", "h_n"});
}

// Gradients of the imported net.

onnx::TensorProto DoubleProto(const std::string& name, const Dims& dims) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnx::TensorProto::DOUBLE);
  int64_t n = 1;
  for (int64_t d : dims) {
    proto.add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) {
    proto.add_double_data(0.3 * std::sin(1.7 * static_cast<double>(i) + 0.4));
  }
  return proto;
}

// A bidirectional LSTM (input 2, hidden 2, with peepholes) in float64 whose
// x, h0 and c0 are inputs; `weights_as_inputs` makes W, R, B and P inputs
// too (otherwise
// initializers, i.e. parameters).
onnx::ModelProto GradLstm(bool weights_as_inputs) {
  onnx::ModelProto model = Model(14);
  const int32_t f64 = onnx::TensorProto::DOUBLE;
  AddInput(model, "x", {3, 2, 2}, f64);
  AddInput(model, "h0", {2, 2, 2}, f64);
  AddInput(model, "c0", {2, 2, 2}, f64);
  const std::vector<std::pair<std::string, Dims>> weights = {
      {"W", {2, 8, 2}}, {"R", {2, 8, 2}}, {"B", {2, 16}}, {"P", {2, 6}}};
  for (const auto& [name, dims] : weights) {
    if (weights_as_inputs) {
      AddInput(model, name, {dims.begin(), dims.end()}, f64);
    } else {
      AddInitializer(model, DoubleProto(name, dims));
    }
  }
  onnx::NodeProto* node =
      AddNode(model, "LSTM", {"x", "W", "R", "B", "", "h0", "c0", "P"},
              {"y", "y_h", "y_c"});
  SetInt(node, "hidden_size", 2);
  SetString(node, "direction", "bidirectional");
  AddOutput(model, "y");
  AddOutput(model, "y_h");
  AddOutput(model, "y_c");
  return model;
}

Tensor DoubleTensor(Dims dims, double phase) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) {
    values.push_back(0.5 * std::cos(0.9 * static_cast<double>(i) + phase));
  }
  return MakeTensor<double>(std::move(dims), values);
}

// Training differentiates with respect to the model's own initializers:
// folding would make the weights the converter derives from them (sliced,
// transposed) the parameters instead.
ImportOptions Differentiable() {
  ImportOptions options;
  options.keep_recurrent_step_scopes = true;
  options.fold_constants = false;
  return options;
}

TEST(RecurrentImportTest, StepScopesAreKeptOnlyWhenAskedFor) {
  absl::StatusOr<ImportedModel> inference = ImportOnnx(GradLstm(true));
  absl::StatusOr<ImportedModel> training =
      ImportOnnx(GradLstm(true), Differentiable());
  ASSERT_TRUE(inference.ok()) << inference.status();
  ASSERT_TRUE(training.ok()) << training.status();
  auto binds_step_scopes = [](const ImportedModel& model) {
    const OpDef* op = onnx_testing::FindOp(model, "recurrent");
    EXPECT_NE(op, nullptr);
    if (op == nullptr) return false;
    for (const OpSlot& slot : op->outputs()) {
      if (slot.slot() == "StepScopes") return true;
    }
    return false;
  };
  EXPECT_FALSE(binds_step_scopes(*inference));
  EXPECT_TRUE(binds_step_scopes(*training));
  // Without them the net runs, but differentiating it says what is missing.
  NetDef net = inference->net;
  absl::StatusOr<std::vector<VarGrad>> grads =
      AppendGradients(net, {"y"}, {}, {"W"});
  ASSERT_FALSE(grads.ok());
  EXPECT_THAT(grads.status().message(), HasSubstr("StepScopes"));
}

TEST(RecurrentImportTest, LstmGradientsMatchNumeric) {
  absl::StatusOr<ImportedModel> imported =
      ImportOnnx(GradLstm(true), Differentiable());
  ASSERT_TRUE(imported.ok()) << imported.status();
  const std::vector<Feed> feeds = {
      {"x", DoubleTensor({3, 2, 2}, 0.1)},  {"h0", DoubleTensor({2, 2, 2}, 1)},
      {"c0", DoubleTensor({2, 2, 2}, 2)},   {"W", DoubleTensor({2, 8, 2}, 3)},
      {"R", DoubleTensor({2, 8, 2}, 4)},    {"B", DoubleTensor({2, 16}, 5)},
      {"P", DoubleTensor({2, 6}, 6)}};
  const absl::Status status =
      CheckNetGradient(imported->net, feeds, {"y", "y_h", "y_c"});
  EXPECT_TRUE(status.ok()) << status;
}

TEST(RecurrentImportTest, GruAndRnnGradientsMatchNumeric) {
  for (const std::string op_type : {"GRU", "RNN"}) {
    for (int64_t linear_before_reset : {0, 1}) {
      if (op_type == "RNN" && linear_before_reset == 1) continue;
      SCOPED_TRACE(absl::StrCat(op_type, " ", linear_before_reset));
      const int64_t gates = op_type == "GRU" ? 3 : 1;
      onnx::ModelProto model = Model(14);
      const int32_t f64 = onnx::TensorProto::DOUBLE;
      AddInput(model, "x", {3, 1, 2}, f64);
      AddInput(model, "W", {1, gates * 2, 2}, f64);
      AddInput(model, "R", {1, gates * 2, 2}, f64);
      AddInput(model, "B", {1, gates * 4}, f64);
      onnx::NodeProto* node =
          AddNode(model, op_type, {"x", "W", "R", "B"}, {"y", "y_h"});
      SetInt(node, "hidden_size", 2);
      SetString(node, "direction", "reverse");
      if (op_type == "GRU") {
        SetInt(node, "linear_before_reset", linear_before_reset);
      }
      AddOutput(model, "y");
      AddOutput(model, "y_h");
      absl::StatusOr<ImportedModel> imported =
          ImportOnnx(model, Differentiable());
      ASSERT_TRUE(imported.ok()) << imported.status();
      const std::vector<Feed> feeds = {
          {"x", DoubleTensor({3, 1, 2}, 0.1)},
          {"W", DoubleTensor({1, gates * 2, 2}, 3)},
          {"R", DoubleTensor({1, gates * 2, 2}, 4)},
          {"B", DoubleTensor({1, gates * 4}, 5)}};
      const absl::Status status =
          CheckNetGradient(imported->net, feeds, {"y", "y_h"});
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

TEST(RecurrentImportTest, AppendBackwardFindsTheImportedWeights) {
  // The weights are parameters (initializers): AppendBackward
  // differentiates a loss with respect to them without being told.
  absl::StatusOr<ImportedModel> imported =
      ImportOnnx(GradLstm(false), Differentiable());
  ASSERT_TRUE(imported.ok()) << imported.status();
  NetDef net = imported->net;
  OpDef* loss = net.mutable_blocks(0)->add_ops();
  loss->set_type("reduce_sum");
  OpSlot* in = loss->add_inputs();
  in->set_slot("X");
  in->add_vars("y");
  OpSlot* out = loss->add_outputs();
  out->set_slot("Out");
  out->add_vars("loss");
  absl::StatusOr<std::vector<VarGrad>> grads = AppendBackward(net, "loss");
  ASSERT_TRUE(grads.ok()) << grads.status();
  std::vector<std::string> params;
  for (const VarGrad& grad : *grads) params.push_back(grad.var);
  EXPECT_THAT(params, ::testing::UnorderedElementsAre("W", "R", "B", "P"));

  // Each gradient against a central difference of the loss.
  const Executor executor;
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  absl::StatusOr<PreparedNet> forward =
      executor.Prepare(imported->net, 0, CPUPlace());
  ASSERT_TRUE(forward.ok()) << forward.status();
  const std::vector<Feed> feeds = {{"x", DoubleTensor({3, 2, 2}, 0.1)},
                                   {"h0", DoubleTensor({2, 2, 2}, 1)},
                                   {"c0", DoubleTensor({2, 2, 2}, 2)}};
  Scope scope;
  ASSERT_TRUE(AddParamsToScope(*imported, scope).ok());
  std::vector<std::string> fetches;
  for (const VarGrad& grad : *grads) fetches.push_back(grad.grad);
  absl::StatusOr<std::vector<Tensor>> analytic =
      executor.Run(*prepared, scope, feeds, fetches);
  ASSERT_TRUE(analytic.ok()) << analytic.status();
  auto loss_of = [&](Scope& s) {
    absl::StatusOr<std::vector<Tensor>> y =
        executor.Run(*forward, s, feeds, {"y"});
    EXPECT_TRUE(y.ok()) << y.status();
    double sum = 0;
    for (double v : onnx_testing::Values<double>((*y)[0])) sum += v;
    return sum;
  };
  for (size_t p = 0; p < grads->size(); ++p) {
    Tensor* param = scope.FindVar((*grads)[p].var)->GetMutable<Tensor>().value();
    const std::vector<double> got =
        onnx_testing::Values<double>((*analytic)[p]);
    ASSERT_EQ(static_cast<int64_t>(got.size()), param->numel());
    for (int64_t k = 0; k < param->numel(); ++k) {
      const double saved = param->data<double>()[k];
      param->data<double>()[k] = saved + 1e-6;
      const double up = loss_of(scope);
      param->data<double>()[k] = saved - 1e-6;
      const double down = loss_of(scope);
      param->data<double>()[k] = saved;
      EXPECT_NEAR(got[k], (up - down) / 2e-6, 1e-6)
          << (*grads)[p].var << "[" << k << "]";
    }
  }
}

}  // namespace
}  // namespace scopeflow
