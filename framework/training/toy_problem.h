// A small classification problem for tests of training: three noisy
// clusters in 4 dimensions, and a net 4 -> 8 (relu) -> 3 with
// softmax_with_cross_entropy, its mean loss and accuracy, with the startup
// net that initialises it (seeded, so every run starts the same).
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_TOY_PROBLEM_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_TOY_PROBLEM_H_

#include <cstdint>

#include "framework/training/dataset.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// Fills w1 [4, 8], b1 [8], w2 [8, 3] and b2 [3].
NetDef ToyStartupNet();

// Reads "image" [-1, 4] and "label" [-1, 1]; writes "loss" (the mean of
// "losses"), "prob" and "accuracy".
NetDef ToyMainNet();

// `n` examples, example i of class i % 3: 2 in feature i % 3, plus
// Gaussian noise of deviation 0.3 (seeded) in every feature.
Dataset Clusters(int64_t n);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_TOY_PROBLEM_H_
