// Turns a forward net with a loss into a training net: gradient ops, then
// gradient clipping, a learning-rate schedule and one optimizer update per
// parameter, all as ops whose state lives in persistable variables.
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_OPTIMIZER_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_OPTIMIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/backward.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// The step counter (int64 [1]) every training net keeps; checkpoints save
// it with the parameters.
inline constexpr char kStepVar[] = "@STEP";
// The learning rate (float32 [1]) the schedule computes each step.
inline constexpr char kLearningRateVar[] = "@LEARNING_RATE";

struct OptimizerConfig {
  // "sgd", "momentum" or "adam".
  std::string type = "sgd";
  float learning_rate = 0.01f;
  // momentum
  float momentum = 0.9f;
  bool nesterov = false;
  // adam
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  // Decoupled (AdamW) weight decay for adam; added to the gradient as an
  // L2 term (grad + weight_decay * param) for sgd and momentum.
  float weight_decay = 0.0f;
  // Scale all gradients down when their global norm exceeds this; 0: never.
  float clip_norm = 0.0f;
  // Learning-rate schedule: "constant", "step", "exponential" or "cosine",
  // after `warmup_steps` of linear warm-up.
  std::string lr_policy = "constant";
  int64_t lr_step_size = 1000;
  float lr_gamma = 0.1f;
  int64_t total_steps = 0;  // cosine: the steps to decay over
  int64_t warmup_steps = 0;
  float min_lr = 0.0f;
};

// Checks the names and ranges of `config`.
absl::Status ValidateOptimizerConfig(const OptimizerConfig& config);

// Appends the backward pass of `loss` and the updates of every parameter
// (see AppendBackward) to block 0 of `main`, declaring the optimizer's
// state and the step counter as persistable variables, and appends to
// `startup` the ops that initialise that state. The startup net must write
// every parameter (the state takes their shapes). Returns the parameters
// and their gradients.
absl::StatusOr<std::vector<VarGrad>> AppendTrainingOps(
    NetDef& main, NetDef& startup, const std::string& loss,
    const OptimizerConfig& config);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_OPTIMIZER_H_
