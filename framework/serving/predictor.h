// Predictor: a net and its parameters loaded once, run from any number of
// threads at once. The embedding API of scopeflow, and what `scopeflow
// serve` runs.
#ifndef SCOPEFLOW_FRAMEWORK_SERVING_PREDICTOR_H_
#define SCOPEFLOW_FRAMEWORK_SERVING_PREDICTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/data_type.h"
#include "framework/executor.h"
#include "framework/scope.h"
#include "framework/serving/scope_pool.h"
#include "framework/tensor.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// What a model takes or gives: a name, a dtype and a shape whose unknown
// dimensions (the batch, usually) are -1.
struct TensorInfo {
  std::string name;
  DataType dtype = DATA_TYPE_UNSPECIFIED;
  Dims dims;
  // False when not even the rank is known (dims is then empty).
  bool has_dims = false;
  // The names of its unknown dimensions (VarDef::dim_names), "" for one
  // without; empty where none has a name.
  std::vector<std::string> dim_names;

  // "image: float32 [-1, 64]", "image: float32 [batch, 64]".
  std::string DebugString() const;
};

struct PredictorOptions {
  Place place = CPUPlace();
  // The variables Run returns, in this order. Empty: those some op writes
  // and no op reads, in the net's order (what the net computes).
  std::vector<std::string> outputs;
  // Load: a parameter file holding names the net does not have is an error
  // naming them unless this is set (a file of another model, or a typo in
  // a name, would otherwise load and be ignored).
  bool allow_unused_params = false;
};

// A model: block 0 of a net, prepared once, over parameters held once in a
// root scope. Every Run takes a child scope of the root from a pool (made
// the first time that many runs overlap, then reused), so concurrent runs
// share the parameters without copying them and, once warm, create no
// scope. Each run's temporaries live in a kid of that scope, reused by the
// executor from run to run.
//
// Thread safety: Run, inputs, outputs and Clone may be called from any
// number of threads at once. The net must only read its parameters (Create
// rejects a net that writes one), since concurrent runs share them.
class Predictor {
 public:
  // Loads a net file (".pbtxt" or ".txt": text, otherwise binary) and a
  // parameter file (framework/param_io.h; "" for a net without parameters)
  // onto options.place.
  static absl::StatusOr<Predictor> Load(const std::string& net_path,
                                        const std::string& params_path,
                                        PredictorOptions options = {});

  // A predictor over `net` and the parameters already in `parameters`
  // (kept; it becomes the root scope). Errors name the problem: a net that
  // does not prepare, a parameter missing or of another dtype or shape than
  // the net declares, a net that writes a parameter, an unknown output.
  static absl::StatusOr<Predictor> Create(const NetDef& net,
                                          std::unique_ptr<Scope> parameters,
                                          PredictorOptions options = {});

  Predictor(Predictor&&) noexcept;
  Predictor& operator=(Predictor&&) noexcept;
  ~Predictor();

  // The net's inputs (declared variables read before any op writes them),
  // each to be given to every Run.
  const std::vector<TensorInfo>& inputs() const;
  // What Run returns, in order.
  const std::vector<TensorInfo>& outputs() const;
  // The net's name.
  const std::string& name() const;
  const Place& place() const;

  // Runs the net on `inputs`, one per input of the model, by name, in any
  // order, and returns the outputs in outputs()' order. Inputs on the
  // predictor's place are used without a copy (see Tensor::FromExternal for
  // memory the caller owns); the outputs are new tensors the caller owns.
  // InvalidArgument naming the input for one that is unknown, given twice,
  // missing, or of another dtype or shape than inputs() says, or for two
  // inputs that give a dimension named alike (TensorInfo::dim_names)
  // different sizes; errors of the net's ops name the op.
  absl::StatusOr<std::vector<Tensor>> Run(absl::Span<const Feed> inputs) const;
  // Run that stops early, with CANCELLED or DEADLINE_EXCEEDED, when
  // `cancellation` (null: never) says so (Executor::Run).
  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Feed> inputs,
      const RunCancellation* cancellation) const;

  // Another predictor over the same prepared net and parameters: nothing is
  // copied. It has its own pool of run scopes, so that threads holding one
  // clone each do not share a lock. Clones may outlive the original.
  Predictor Clone() const;

  // The root scope holding the parameters, shared by every clone.
  const Scope& parameters() const;
  // The run scopes this predictor's pool has made: at most the number of
  // its runs that ever overlapped.
  int pooled_scopes() const;

 private:
  struct Model;
  explicit Predictor(std::shared_ptr<const Model> model);

  absl::Status CheckInputs(absl::Span<const Feed> inputs) const;
  absl::Status CheckNamedDims(absl::Span<const Feed> inputs) const;

  std::shared_ptr<const Model> model_;
  // Declared after model_, so destroyed before it: the pool's scopes are
  // kids of the model's root.
  std::unique_ptr<ScopePool> scopes_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_SERVING_PREDICTOR_H_
