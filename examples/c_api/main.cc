// The MLP example of main.c, through the header-only C++ wrapper
// (scopeflow_cxx.h): the same output, with RAII handles and exceptions.
// Built by CMakeLists.txt, beside main.c.
#include <scopeflow_cxx.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// A 2-D little-endian float32 .npy file (version 1, C order).
std::vector<float> ReadNpy(const std::string& path,
                           std::vector<int64_t>& dims) {
  std::ifstream file(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)),
                          std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 7, "\x93NUMPY\x01") != 0) {
    throw std::runtime_error(path + ": not a .npy file of version 1");
  }
  const size_t header_size = static_cast<unsigned char>(bytes[8]) |
                             static_cast<unsigned char>(bytes[9]) << 8;
  const std::string header = bytes.substr(10, header_size);
  long long rows = 0, cols = 0;
  const size_t shape = header.find("'shape': (");
  if (header.find("'descr': '<f4'") == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos ||
      shape == std::string::npos ||
      std::sscanf(header.c_str() + shape, "'shape': (%lld, %lld)", &rows,
                  &cols) != 2 ||
      bytes.size() != 10 + header_size + rows * cols * sizeof(float)) {
    throw std::runtime_error(path + ": not a 2-D float32 .npy file");
  }
  std::vector<float> values(rows * cols);
  std::memcpy(values.data(), bytes.data() + 10 + header_size,
              values.size() * sizeof(float));
  dims = {rows, cols};
  return values;
}

void PrintInfo(const char* kind, const sf::TensorInfo& info) {
  std::printf("%s %s: %s [", kind, info.name.c_str(),
              sf_dtype_name(info.dtype));
  for (size_t axis = 0; axis < info.dims.size(); ++axis) {
    std::printf(axis == 0 ? "%lld" : ", %lld",
                static_cast<long long>(info.dims[axis]));
  }
  std::printf("]\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s NET PARAMS INPUT.npy\n", argv[0]);
    return 2;
  }
  try {
    sf::CheckApiVersion();
    std::vector<int64_t> dims;
    std::vector<float> pixels = ReadNpy(argv[3], dims);
    const sf::Predictor predictor(argv[1], argv[2]);
    std::printf("engine %s\n", sf_engine_name());
    const std::vector<sf::TensorInfo> inputs = predictor.inputs();
    PrintInfo("input", inputs[0]);
    PrintInfo("output", predictor.outputs()[0]);
    // The predictor reads the pixels where they lie, without a copy.
    const sf::Tensor image = sf::Tensor::Wrap(pixels.data(), dims);
    const std::vector<sf::Tensor> outputs =
        predictor.Run({{inputs[0].name, &image}});
    const std::vector<int64_t> shape = outputs[0].shape();
    const float* probabilities = outputs[0].data<float>();
    for (int64_t r = 0; r < shape[0]; ++r) {
      std::printf("probabilities[%lld]:", static_cast<long long>(r));
      for (int64_t c = 0; c < shape[1]; ++c) {
        std::printf(" %.9g", probabilities[r * shape[1] + c]);
      }
      std::printf("\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlp_cxx: %s\n", e.what());
    return 1;
  }
  return 0;
}
