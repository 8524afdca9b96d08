// The release of libscopeflow, as sf_version_string() reports it and
// tools/install.sh writes it into the pkg-config and CMake files.
#ifndef SCOPEFLOW_C_API_VERSION_H_
#define SCOPEFLOW_C_API_VERSION_H_

namespace scopeflow {

inline constexpr char kLibraryVersion[] = "0.1.0";

}  // namespace scopeflow

#endif  // SCOPEFLOW_C_API_VERSION_H_
