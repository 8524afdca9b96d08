// The names and sizes of the C API's dtypes, for both the engine and the
// loader (which links nothing of the framework).
#ifndef SCOPEFLOW_C_API_DTYPE_NAMES_H_
#define SCOPEFLOW_C_API_DTYPE_NAMES_H_

#include <cstddef>

#include "c_api/scopeflow_c_api.h"

namespace scopeflow {
namespace c_api {

inline bool IsDtype(sf_dtype dtype) {
  return dtype > SF_DTYPE_UNSPECIFIED && dtype <= SF_FLOAT8E5M2FNUZ;
}

inline const char* DtypeName(sf_dtype dtype) {
  static const char* const kNames[] = {
      "unspecified", "float32",       "float64",      "float16",
      "int32",       "int64",         "uint8",        "bool",
      "int8",        "int16",         "uint16",       "uint32",
      "uint64",      "bfloat16",      "float8e4m3fn", "float8e4m3fnuz",
      "float8e5m2",  "float8e5m2fnuz"};
  return IsDtype(dtype) ? kNames[dtype] : kNames[0];
}

inline size_t DtypeSize(sf_dtype dtype) {
  static const size_t kSizes[] = {0, 4, 8, 2, 4, 8, 1, 1, 1,
                                  2, 2, 4, 8, 2, 1, 1, 1, 1};
  return IsDtype(dtype) ? kSizes[dtype] : 0;
}

}  // namespace c_api
}  // namespace scopeflow

#endif  // SCOPEFLOW_C_API_DTYPE_NAMES_H_
