// Model folders for the tests of `scopeflow serve`.
#ifndef SCOPEFLOW_TOOLS_SERVE_TESTING_H_
#define SCOPEFLOW_TOOLS_SERVE_TESTING_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace scopeflow {

// Writes MODEL_DIR/VERSION/{model.pbtxt, params} for the MLP of
// examples/mlp, its output biases shifted by `bias_shift` (so that versions
// answer differently). The folder is filled beside MODEL_DIR and renamed
// into place, as a deployment should, so a poll never sees it half-written.
absl::Status WriteMlpVersion(const std::string& model_dir, int64_t version,
                             float bias_shift);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_TESTING_H_
