#include "python/src/ndarray.h"

#include <Python.h>

#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "platform/status_macros.h"
#include "python/src/errors.h"

namespace scopeflow::python {
namespace {

namespace py = pybind11;
using NumpyApi = py::detail::npy_api;

// A reference to a Python object that a Tensor's release callback holds,
// dropped under the GIL from whichever thread lets the last view go. After
// the interpreter has ended there is nothing left to drop it from.
class PythonReference {
 public:
  explicit PythonReference(py::handle object) : object_(object.inc_ref()) {}
  ~PythonReference() {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE state = PyGILState_Ensure();
    object_.dec_ref();
    PyGILState_Release(state);
  }
  PythonReference(const PythonReference&) = delete;
  PythonReference& operator=(const PythonReference&) = delete;

 private:
  py::handle object_;
};

std::string TypeName(py::handle object) {
  return py::type::handle_of(object).attr("__name__").cast<std::string>();
}

int ArrayFlags(const py::array& array) {
  return py::detail::array_proxy(array.ptr())->flags;
}

Dims DimsOf(const py::array& array) {
  return Dims(array.shape(), array.shape() + array.ndim());
}

}  // namespace

py::dtype NumpyDtype(DataType dtype) {
  if (dtype == kBFloat16 || (SizeOf(dtype) == 1 && IsFloatDataType(dtype))) {
    // numpy has no bfloat16 or float8; a net that feeds or returns one casts
    // it.
    throw py::type_error(absl::StrCat(
        "dtype ", DataTypeName(dtype),
        " has no numpy dtype: cast the tensor to float32 in the net (a cast "
        "op) to read or feed it"));
  }
  return py::dtype(DataTypeName(dtype));
}

absl::StatusOr<DataType> DataTypeOfNumpy(const py::dtype& dtype,
                                         const std::string& what) {
  const char kind = dtype.kind();
  const py::ssize_t size = dtype.itemsize();
  DataType found = DATA_TYPE_UNSPECIFIED;
  if (!dtype.has_fields()) {
    if (kind == 'f' && size == 4) found = kFloat32;
    if (kind == 'f' && size == 8) found = kFloat64;
    if (kind == 'f' && size == 2) found = kFloat16;
    if (kind == 'i' && size == 4) found = kInt32;
    if (kind == 'i' && size == 8) found = kInt64;
    if (kind == 'i' && size == 1) found = kInt8;
    if (kind == 'i' && size == 2) found = kInt16;
    if (kind == 'u' && size == 1) found = kUInt8;
    if (kind == 'u' && size == 2) found = kUInt16;
    if (kind == 'u' && size == 4) found = kUInt32;
    if (kind == 'u' && size == 8) found = kUInt64;
    if (kind == 'b' && size == 1) found = kBool;
  }
  const std::string name = dtype.attr("name").cast<std::string>();
  SF_CHECK(found != DATA_TYPE_UNSPECIFIED,
           "%s: numpy dtype %s has no scopeflow dtype (scopeflow has "
           "float32, float64, float16, int8, int16, int32, int64, uint8, "
           "uint16, uint32, uint64, bool)",
           what, name);
  SF_CHECK(dtype.attr("isnative").cast<bool>(),
           "%s: numpy dtype %s is not in this machine's byte order (convert "
           "it with a.astype(a.dtype.newbyteorder('=')))",
           what, name);
  return found;
}

absl::StatusOr<Tensor> ViewOfArray(const py::handle& object,
                                   const std::string& what) {
  SF_CHECK(py::isinstance<py::array>(object),
           "%s: expected a numpy array, got %s", what, TypeName(object));
  py::array array = py::reinterpret_borrow<py::array>(object);
  SF_ASSIGN_OR_RETURN(DataType dtype, DataTypeOfNumpy(array.dtype(), what));
  const int flags = ArrayFlags(array);
  if ((flags & NumpyApi::NPY_ARRAY_C_CONTIGUOUS_) == 0) {
    std::vector<py::ssize_t> strides(array.strides(),
                                     array.strides() + array.ndim());
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the array is not C-contiguous (strides [",
        absl::StrJoin(strides, ", "),
        "] bytes); pass numpy.ascontiguousarray(a), which copies it"));
  }
  SF_CHECK((flags & NumpyApi::NPY_ARRAY_ALIGNED_) != 0,
           "%s: the array's memory is not aligned for its dtype; pass "
           "a.copy()",
           what);
  auto reference = std::make_shared<PythonReference>(array);
  return Tensor::FromExternal(const_cast<void*>(array.data()), dtype,
                              DimsOf(array), CPUPlace(),
                              [reference] {});
}

absl::StatusOr<Tensor> CopyOfArray(const py::handle& object,
                                   const std::string& what) {
  py::array array;
  try {
    array = py::module_::import("numpy").attr("ascontiguousarray")(object);
  } catch (py::error_already_set& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": cannot make an array of a ", TypeName(object), ": ",
        e.what()));
  }
  SF_ASSIGN_OR_RETURN(DataType dtype, DataTypeOfNumpy(array.dtype(), what));
  Tensor tensor;
  SF_RETURN_IF_ERROR(tensor.Allocate(CPUPlace(), dtype, DimsOf(array)));
  if (tensor.nbytes() > 0) {
    std::memcpy(tensor.raw_data(), array.data(), tensor.nbytes());
  }
  return tensor;
}

py::array ArrayOfTensor(Tensor tensor, Shared shared) {
  if (!tensor.place().is_cpu()) {
    tensor = ValueOrThrow(tensor.CopyTo(CPUPlace()));
  }
  const py::dtype dtype = NumpyDtype(tensor.dtype());
  const std::vector<py::ssize_t> shape(tensor.dims().begin(),
                                       tensor.dims().end());
  if (!tensor.initialized() || tensor.numel() == 0) {
    return py::array(dtype, shape);
  }
  const bool alone = tensor.OwnsBufferAlone();
  const Tensor& source = tensor;
  if (!alone && shared == Shared::kCopy) {
    py::array copy(dtype, shape);
    std::memcpy(copy.mutable_data(), source.raw_data(), source.nbytes());
    return copy;
  }
  auto* owner = new Tensor(std::move(tensor));
  py::capsule base(owner,
                   [](void* kept) { delete static_cast<Tensor*>(kept); });
  const Tensor& kept = *owner;
  py::array view(dtype, shape, kept.raw_data(), base);
  if (!alone) view.attr("setflags")(py::arg("write") = false);
  return view;
}

absl::StatusOr<std::vector<Feed>> FeedsOfDict(const py::dict& feeds) {
  std::vector<Feed> result;
  result.reserve(feeds.size());
  for (const auto& [key, value] : feeds) {
    SF_CHECK(py::isinstance<py::str>(key),
             "feeds: names must be strings, got a %s", TypeName(key));
    std::string name = py::str(key);
    SF_ASSIGN_OR_RETURN(Tensor tensor,
                        ViewOfArray(value, absl::StrCat("feed \"", name, "\"")));
    result.push_back({std::move(name), std::move(tensor)});
  }
  return result;
}

py::tuple ShapeTuple(const Dims& dims) {
  py::tuple shape(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    shape[d] = py::int_(dims[d]);
  }
  return shape;
}

}  // namespace scopeflow::python
