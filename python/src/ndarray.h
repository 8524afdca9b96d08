// numpy arrays to and from Tensors, without copying where the layout
// allows: a C-contiguous, aligned, native-endian array of a dtype scopeflow
// has becomes a Tensor viewing its memory; a Tensor on the CPU becomes an
// array viewing its buffer, which the array keeps alive.
#ifndef SCOPEFLOW_PYTHON_SRC_NDARRAY_H_
#define SCOPEFLOW_PYTHON_SRC_NDARRAY_H_

#include <string>
#include <vector>

#include "framework/block_runner.h"
#include "framework/data_type.h"
#include "framework/tensor.h"
#include "pybind11/numpy.h"
#include "pybind11/pybind11.h"

namespace scopeflow::python {

// The numpy dtype of `dtype` (float16 included).
pybind11::dtype NumpyDtype(DataType dtype);

// The DataType of a numpy dtype; InvalidArgument naming `what` and the
// dtypes scopeflow has for any other (complex, object, strings...) or for
// a byte order other than the machine's.
absl::StatusOr<DataType> DataTypeOfNumpy(const pybind11::dtype& dtype,
                                         const std::string& what);

// A Tensor on the CPU viewing `array`'s memory, which it keeps referenced
// (the reference is dropped under the GIL once the last view of the
// tensor is gone, on whatever thread that happens). Errors name `what`:
// an object that is not a numpy array, a dtype scopeflow lacks, an array
// that is not C-contiguous (pass numpy.ascontiguousarray(a)) or aligned.
// Call with the GIL held.
absl::StatusOr<Tensor> ViewOfArray(const pybind11::handle& object,
                                   const std::string& what);

// A Tensor on the CPU holding a copy of `object` (any array-like numpy
// converts, in any layout), for values that outlive the call (variables
// set in a scope). Errors name `what`.
absl::StatusOr<Tensor> CopyOfArray(const pybind11::handle& object,
                                   const std::string& what);

// What to do with a tensor whose buffer something else also views (a
// variable of a scope, a run's kept buffers).
enum class Shared {
  // Hand it over as a read-only array: still no copy.
  kReadOnlyView,
  // Copy it, so that later changes to the variable do not show.
  kCopy,
};

// An array over `tensor`'s elements (pass it with std::move, so that this
// holds the only view a caller has); a tensor on a device is copied to the
// host first. A buffer that only `tensor` views becomes the array's, with
// no copy, writable. Call with the GIL held.
pybind11::array ArrayOfTensor(Tensor tensor, Shared shared);

// Feeds by name from a dict {name: array}, each a view (ViewOfArray).
// Errors name the feed; a key that is not a string is one too.
absl::StatusOr<std::vector<Feed>> FeedsOfDict(const pybind11::dict& feeds);

// A dims tuple with -1 for unknown dimensions.
pybind11::tuple ShapeTuple(const Dims& dims);

}  // namespace scopeflow::python

#endif  // SCOPEFLOW_PYTHON_SRC_NDARRAY_H_
