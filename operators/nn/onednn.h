// oneDNN for CPU kernels: the calling thread's engine and stream, and
// oneDNN's exceptions turned into absl::Status.
#ifndef SCOPEFLOW_OPERATORS_NN_ONEDNN_H_
#define SCOPEFLOW_OPERATORS_NN_ONEDNN_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "dnnl.hpp"

namespace scopeflow {

// The calling thread's oneDNN CPU engine and stream, made on first use.
// Each thread has its own, so kernels on different threads never share a
// stream. oneDNN keeps its own thread-safe cache of compiled primitives,
// so making the same primitive again is cheap.
dnnl::engine& ThreadCpuEngine();
dnnl::stream& ThreadCpuStream();

// One CPU engine for the whole process, and the calling thread's stream on
// it: for primitives kept in a cache that every thread shares. oneDNN runs
// a primitive only on a stream of the engine it was made for; its engines
// and primitives may be used from many threads at once, its streams from
// one at a time, hence a stream per thread.
dnnl::engine& SharedCpuEngine();
dnnl::stream& SharedCpuEngineStream();

// The handle to give oneDNN for memory a primitive only reads (a source,
// weights): its memory objects take non-const handles whatever they hold.
inline void* ReadOnlyHandle(const void* data) {
  return const_cast<void*>(data);
}

// Runs `fn`, returning its status, or an error naming `what` if oneDNN
// throws (Unimplemented when oneDNN has no implementation for the
// configuration, Internal otherwise).
absl::Status RunOneDnn(absl::string_view what,
                       const std::function<absl::Status()>& fn);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_ONEDNN_H_
