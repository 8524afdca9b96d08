#include "framework/variable.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/str_format.h"

namespace scopeflow {

std::string ReadableTypeName(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled != nullptr ? demangled.get() : type.name();
}

std::string Variable::TypeName() const {
  return holder_ == nullptr ? "nothing" : ReadableTypeName(holder_->type());
}

absl::Status Variable::WrongType(const std::type_info& asked) const {
  return absl::FailedPreconditionError(
      absl::StrFormat("variable holds %s, not the %s asked for", TypeName(),
                      ReadableTypeName(asked)));
}

}  // namespace scopeflow
