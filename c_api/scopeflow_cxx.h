// A header-only C++ wrapper of the C API (scopeflow_c_api.h): RAII types
// that free their handles, and errors as exceptions (sf::Error) raised in
// the caller's code, never inside the library. Needs C++11; everything it
// calls is the C API, so it keeps that API's binary compatibility.
//
//   sf::Predictor predictor("main.pbtxt", "mlp.params");
//   sf::Tensor image = sf::Tensor::Wrap(pixels.data(), {1, 64});
//   std::vector<sf::Tensor> out = predictor.Run({{"image", &image}});
//   const float* probabilities = out[0].data<float>();
//
// Thread safety: as the C API's. A Predictor may run on many threads at
// once; a Tensor is not synchronised.
#ifndef SCOPEFLOW_CXX_H_
#define SCOPEFLOW_CXX_H_

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "scopeflow_c_api.h"

namespace sf {

// A failed call: the status's code and message.
class Error : public std::runtime_error {
 public:
  Error(sf_code code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  sf_code code() const { return code_; }

 private:
  sf_code code_;
};

namespace detail {

// Throws the status (freeing it) unless it is success.
inline void Check(sf_status* status) {
  if (status == nullptr) return;
  const sf_code code = sf_status_code(status);
  std::string message = sf_status_message(status);
  sf_status_free(status);
  throw Error(code, message);
}

template <typename T>
struct DtypeOf;
template <>
struct DtypeOf<float> {
  static constexpr sf_dtype value = SF_FLOAT32;
};
template <>
struct DtypeOf<double> {
  static constexpr sf_dtype value = SF_FLOAT64;
};
template <>
struct DtypeOf<int32_t> {
  static constexpr sf_dtype value = SF_INT32;
};
template <>
struct DtypeOf<int64_t> {
  static constexpr sf_dtype value = SF_INT64;
};
template <>
struct DtypeOf<uint8_t> {
  static constexpr sf_dtype value = SF_UINT8;
};
template <>
struct DtypeOf<int8_t> {
  static constexpr sf_dtype value = SF_INT8;
};
template <>
struct DtypeOf<bool> {
  static constexpr sf_dtype value = SF_BOOL;
};
template <>
struct DtypeOf<int16_t> {
  static constexpr sf_dtype value = SF_INT16;
};
template <>
struct DtypeOf<uint16_t> {
  static constexpr sf_dtype value = SF_UINT16;
};
template <>
struct DtypeOf<uint32_t> {
  static constexpr sf_dtype value = SF_UINT32;
};
template <>
struct DtypeOf<uint64_t> {
  static constexpr sf_dtype value = SF_UINT64;
};

}  // namespace detail

// Throws unless the library serves this header's API version (it is at
// least as new).
inline void CheckApiVersion() {
  if (sf_api_version() < SF_API_VERSION) {
    throw Error(SF_FAILED_PRECONDITION, "libscopeflow has API version " +
                                            std::to_string(sf_api_version()) +
                                            ", older than this header's " +
                                            std::to_string(SF_API_VERSION));
  }
}

// Owns an sf_tensor.
class Tensor {
 public:
  // Zeroed memory the library owns.
  static Tensor Create(sf_dtype dtype, const std::vector<int64_t>& dims) {
    sf_tensor* tensor = nullptr;
    detail::Check(sf_tensor_create(dtype, dims.data(), dims.size(), &tensor));
    return Tensor(tensor);
  }
  // A view of the caller's `data`, which must outlive the Tensor and hold
  // the product of `dims` elements.
  template <typename T>
  static Tensor Wrap(T* data, const std::vector<int64_t>& dims) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    return Wrap(data, count < 0 ? 0 : static_cast<size_t>(count) * sizeof(T),
                detail::DtypeOf<T>::value, dims);
  }
  static Tensor Wrap(void* data, size_t byte_size, sf_dtype dtype,
                     const std::vector<int64_t>& dims) {
    sf_tensor* tensor = nullptr;
    detail::Check(sf_tensor_wrap(data, byte_size, dtype, dims.data(),
                                 dims.size(), &tensor));
    return Tensor(tensor);
  }

  // Takes ownership of `tensor`.
  explicit Tensor(sf_tensor* tensor) : tensor_(tensor) {}
  Tensor(Tensor&& other) noexcept : tensor_(other.release()) {}
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      sf_tensor_free(tensor_);
      tensor_ = other.release();
    }
    return *this;
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { sf_tensor_free(tensor_); }

  sf_dtype dtype() const { return sf_tensor_dtype(tensor_); }
  std::vector<int64_t> shape() const {
    std::vector<int64_t> dims(sf_tensor_rank(tensor_));
    for (size_t i = 0; i < dims.size(); ++i) {
      dims[i] = sf_tensor_dim(tensor_, static_cast<int>(i));
    }
    return dims;
  }
  int64_t num_elements() const { return sf_tensor_num_elements(tensor_); }

  // The elements as T; throws if T is not the dtype.
  template <typename T>
  T* data() {
    CheckDtype(detail::DtypeOf<T>::value);
    return static_cast<T*>(sf_tensor_data(tensor_));
  }
  template <typename T>
  const T* data() const {
    CheckDtype(detail::DtypeOf<T>::value);
    return static_cast<const T*>(sf_tensor_const_data(tensor_));
  }

  sf_tensor* get() const { return tensor_; }
  sf_tensor* release() {
    sf_tensor* tensor = tensor_;
    tensor_ = nullptr;
    return tensor;
  }

 private:
  void CheckDtype(sf_dtype wanted) const {
    if (dtype() != wanted) {
      throw Error(SF_INVALID_ARGUMENT, std::string("the tensor holds ") +
                                           sf_dtype_name(dtype()) + ", not " +
                                           sf_dtype_name(wanted));
    }
  }

  sf_tensor* tensor_;
};

// An input or output of a model; a dimension of -1 is known only at run
// time, and rank -1 means not even the rank is known.
struct TensorInfo {
  std::string name;
  sf_dtype dtype;
  int rank;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
};

// Owns an sf_options.
class Options {
 public:
  Options() { detail::Check(sf_options_create(&options_)); }
  Options(Options&& other) noexcept : options_(other.options_) {
    other.options_ = nullptr;
  }
  Options& operator=(Options&& other) noexcept {
    std::swap(options_, other.options_);
    return *this;
  }
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;
  ~Options() { sf_options_free(options_); }

  Options& set_place(const std::string& place) {
    detail::Check(sf_options_set_place(options_, place.c_str()));
    return *this;
  }
  Options& add_output(const std::string& name) {
    detail::Check(sf_options_add_output(options_, name.c_str()));
    return *this;
  }
  const sf_options* get() const { return options_; }

 private:
  sf_options* options_ = nullptr;
};

// Owns an sf_predictor.
class Predictor {
 public:
  // An input of a run: its name and the tensor (read during the run only).
  using Input = std::pair<std::string, const Tensor*>;

  // Loads a model (see sf_predictor_load); `params` "" for none.
  explicit Predictor(const std::string& model, const std::string& params = "",
                     const Options* options = nullptr) {
    detail::Check(sf_predictor_load(
        model.c_str(), params.empty() ? nullptr : params.c_str(),
        options == nullptr ? nullptr : options->get(), &predictor_));
  }
  Predictor(Predictor&& other) noexcept : predictor_(other.predictor_) {
    other.predictor_ = nullptr;
  }
  Predictor& operator=(Predictor&& other) noexcept {
    std::swap(predictor_, other.predictor_);
    return *this;
  }
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;
  ~Predictor() { sf_predictor_free(predictor_); }

  // Shares the loaded model; see sf_predictor_clone.
  Predictor Clone() const {
    sf_predictor* clone = nullptr;
    detail::Check(sf_predictor_clone(predictor_, &clone));
    return Predictor(clone);
  }

  std::string name() const { return sf_predictor_name(predictor_); }

  std::vector<TensorInfo> inputs() const {
    std::vector<TensorInfo> infos;
    for (size_t i = 0; i < sf_predictor_num_inputs(predictor_); ++i) {
      infos.push_back(Info(sf_predictor_input(predictor_, i)));
    }
    return infos;
  }
  std::vector<TensorInfo> outputs() const {
    std::vector<TensorInfo> infos;
    for (size_t i = 0; i < sf_predictor_num_outputs(predictor_); ++i) {
      infos.push_back(Info(sf_predictor_output(predictor_, i)));
    }
    return infos;
  }

  // The outputs, in outputs()' order, as new tensors.
  std::vector<Tensor> Run(const std::vector<Input>& inputs) const {
    std::vector<const char*> names;
    std::vector<const sf_tensor*> tensors;
    Unzip(inputs, names, tensors);
    std::vector<sf_tensor*> raw(sf_predictor_num_outputs(predictor_), nullptr);
    detail::Check(sf_predictor_run(predictor_, names.data(), tensors.data(),
                                   tensors.size(), raw.data(), raw.size()));
    std::vector<Tensor> outputs;
    outputs.reserve(raw.size());
    for (sf_tensor* tensor : raw) outputs.emplace_back(tensor);
    return outputs;
  }

  // The outputs written into `outputs`, one per output, each of the dtype
  // and shape the run computes.
  void RunInto(const std::vector<Input>& inputs,
               const std::vector<Tensor*>& outputs) const {
    std::vector<const char*> names;
    std::vector<const sf_tensor*> tensors;
    Unzip(inputs, names, tensors);
    std::vector<sf_tensor*> raw;
    for (Tensor* output : outputs) {
      raw.push_back(output == nullptr ? nullptr : output->get());
    }
    detail::Check(sf_predictor_run_into(predictor_, names.data(),
                                        tensors.data(), tensors.size(),
                                        raw.data(), raw.size()));
  }

  const sf_predictor* get() const { return predictor_; }

 private:
  explicit Predictor(sf_predictor* predictor) : predictor_(predictor) {}

  static TensorInfo Info(const sf_tensor_info* info) {
    TensorInfo result{sf_tensor_info_name(info),
                      sf_tensor_info_dtype(info),
                      sf_tensor_info_rank(info),
                      {},
                      {}};
    for (int axis = 0; axis < result.rank; ++axis) {
      result.dims.push_back(sf_tensor_info_dim(info, axis));
      result.dim_names.push_back(sf_tensor_info_dim_name(info, axis));
    }
    return result;
  }

  static void Unzip(const std::vector<Input>& inputs,
                    std::vector<const char*>& names,
                    std::vector<const sf_tensor*>& tensors) {
    for (const Input& input : inputs) {
      names.push_back(input.first.c_str());
      tensors.push_back(input.second == nullptr ? nullptr
                                                : input.second->get());
    }
  }

  sf_predictor* predictor_ = nullptr;
};

}  // namespace sf

#endif  // SCOPEFLOW_CXX_H_
