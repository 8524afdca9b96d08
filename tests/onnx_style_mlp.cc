#include "tests/onnx_style_mlp.h"

#include <cmath>

#include "framework/op_test_util.h"
#include "gtest/gtest.h"
#include "tests/benchmarks/net_text.h"

namespace scopeflow {

OnnxStyleMlp MakeOnnxStyleMlp() {
  OnnxStyleMlp mlp;
  NetText text;
  text.Var("x", {-1, 6});
  auto parameter = [&](const std::string& name, const Dims& dims,
                       uint32_t seed) {
    text.Var(name, std::vector<int64_t>(dims.begin(), dims.end()), true);
    mlp.parameters.emplace_back(
        name, MakeTensor<float>(dims, RandomFloats(NumElements(dims), seed)));
  };
  const int64_t sizes[] = {6, 5, 3};
  std::string in = "x";
  for (int layer = 0; layer < 2; ++layer) {
    const std::string w = "w" + std::to_string(layer);
    const std::string b = "b" + std::to_string(layer);
    const std::string h = "h" + std::to_string(layer);
    parameter(w, {sizes[layer], sizes[layer + 1]}, 10 + layer);
    parameter(b, {sizes[layer + 1]}, 20 + layer);
    text.Op("matmul", {{"X", in}, {"Y", w}}, h + ".product");
    text.Op("add", {{"X", h + ".product"}, {"Y", b}}, h);
    in = h;
    if (layer == 0) {
      text.Op("relu", {{"X", h}}, h + ".relu");
      in = h + ".relu";
    }
  }
  text.Op("softmax", {{"X", in}}, "probabilities");
  mlp.net = text.Build();
  return mlp;
}

Tensor OnnxStyleMlpInput(int64_t batch) {
  return MakeTensor<float>({batch, 6}, RandomFloats(batch * 6, 7));
}

void ExpectNearTensors(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.dims(), expected.dims());
  const std::vector<float> a = Values<float>(actual);
  const std::vector<float> e = Values<float>(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], e[i], 1e-5 * (1 + std::abs(e[i]))) << "element " << i;
  }
}

std::vector<std::string> PreparedOpTypes(const PreparedNet& prepared) {
  std::vector<std::string> types;
  for (const PreparedOp& op : prepared.ops()) {
    std::string type = op.spec->type();
    if (type == "fc" &&
        op.attrs.Get<std::string>("activation_type") == "relu") {
      type += "+relu";
    }
    types.push_back(type);
  }
  return types;
}

}  // namespace scopeflow
