#include "operators/nn/onednn.h"

#include <exception>

#include "absl/strings/str_cat.h"

namespace scopeflow {

dnnl::engine& ThreadCpuEngine() {
  thread_local dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& ThreadCpuStream() {
  thread_local dnnl::stream stream(ThreadCpuEngine());
  return stream;
}

dnnl::engine& SharedCpuEngine() {
  static dnnl::engine* const engine =
      new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& SharedCpuEngineStream() {
  thread_local dnnl::stream stream(SharedCpuEngine());
  return stream;
}

absl::Status RunOneDnn(absl::string_view what,
                       const std::function<absl::Status()>& fn) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    const std::string message =
        absl::StrCat("oneDNN failed in ", what, ": ", e.what());
    return e.status == dnnl_unimplemented ? absl::UnimplementedError(message)
                                          : absl::InternalError(message);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("oneDNN failed in ", what, ": ", e.what()));
  }
}

}  // namespace scopeflow
