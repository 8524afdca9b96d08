// The header-only C++ wrapper: RAII handles, errors as sf::Error with the
// library's code and message.
#include <vector>

#include "c_api/c_api_test_util.h"
#include "c_api/scopeflow_cxx.h"
#include "framework/serving/mlp_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

std::vector<double> Reference(const std::vector<float>& pixels) {
  Tensor image;
  EXPECT_TRUE(image
                  .Allocate(CPUPlace(), kFloat32,
                            {static_cast<int64_t>(pixels.size() / 64), 64})
                  .ok());
  std::copy(pixels.begin(), pixels.end(), image.data<float>());
  absl::StatusOr<std::unique_ptr<Scope>> parameters = MlpParameters();
  EXPECT_TRUE(parameters.ok());
  return ReferenceMlp(**parameters, image);
}

TEST(CxxTest, LoadsRunsAndFrees) {
  sf::CheckApiVersion();
  const sf::Predictor predictor(kMlpNet, c_api_testing::MlpParamsPath());
  EXPECT_EQ(predictor.name(), "mlp");
  const std::vector<sf::TensorInfo> inputs = predictor.inputs();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].name, "image");
  EXPECT_EQ(inputs[0].dtype, SF_FLOAT32);
  EXPECT_THAT(inputs[0].dims, ElementsAre(-1, 64));
  EXPECT_THAT(predictor.outputs()[0].dims, ElementsAre(-1, 10));

  const Tensor input = MlpInput(2, 9);
  std::vector<float> pixels(input.data<float>(),
                            input.data<float>() + input.numel());
  const sf::Tensor image = sf::Tensor::Wrap(pixels.data(), {2, 64});
  const std::vector<double> expected = Reference(pixels);

  const sf::Predictor clone = predictor.Clone();
  std::vector<sf::Tensor> outputs = clone.Run({{"image", &image}});
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_THAT(outputs[0].shape(), ElementsAre(2, 10));
  for (int i = 0; i < 20; ++i) {
    EXPECT_NEAR(outputs[0].data<float>()[i], expected[i], 1e-5);
  }

  sf::Tensor into = sf::Tensor::Create(SF_FLOAT32, {2, 10});
  predictor.RunInto({{"image", &image}}, {&into});
  for (int i = 0; i < 20; ++i) {
    EXPECT_NEAR(into.data<float>()[i], expected[i], 1e-5);
  }
  sf::Tensor moved = std::move(into);
  EXPECT_EQ(into.get(), nullptr);
  EXPECT_EQ(moved.num_elements(), 20);
}

TEST(CxxTest, ErrorsAreExceptionsWithTheLibrarysMessage) {
  try {
    sf::Predictor predictor("no/such/net.pbtxt");
    FAIL() << "loaded a missing file";
  } catch (const sf::Error& e) {
    EXPECT_NE(e.code(), SF_OK);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("no/such/net.pbtxt"));
  }
  const sf::Predictor predictor(kMlpNet, c_api_testing::MlpParamsPath());
  sf::Tensor wrong = sf::Tensor::Create(SF_INT64, {1, 64});
  try {
    predictor.Run({{"image", &wrong}});
    FAIL() << "ran on int64";
  } catch (const sf::Error& e) {
    EXPECT_EQ(e.code(), SF_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(),
                 "input \"image\": expected dtype float32, got int64");
  }
  EXPECT_THROW(wrong.data<float>(), sf::Error);
  sf::Options options;
  EXPECT_THROW(options.set_place("tpu:0"), sf::Error);
}

}  // namespace
}  // namespace scopeflow
