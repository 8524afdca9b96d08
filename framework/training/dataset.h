// In-memory labelled data sets for training: loading, a fixed train/test
// split, and reproducibly shuffled batches.
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_DATASET_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"

namespace scopeflow {

// Examples as rows: features float32 [N, D], labels int64 [N, 1].
struct Dataset {
  Tensor features;
  Tensor labels;
  int64_t num_classes = 0;

  int64_t size() const { return features.rank() == 2 ? features.dim(0) : 0; }
};

// Where Debian's python3-sklearn package installs the 8x8 handwritten
// digits (1,797 images, 10 classes).
inline constexpr char kDebianDigitsPath[] =
    "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

// Reads a CSV file, gzip-compressed or not, of one example per line: the
// feature values, then the integer class label last. Features are scaled by
// `feature_scale` (the digits' pixels are 0..16). Errors name the file, the
// line and what is wrong.
absl::StatusOr<Dataset> LoadCsvDataset(const std::string& path,
                                       float feature_scale = 1.0f);

// Rows [begin, end) of `data`, sharing its memory.
absl::StatusOr<Dataset> Rows(const Dataset& data, int64_t begin, int64_t end);

// The fixed split: the first (1 - test_fraction) of the rows train, the
// rest test (so the split never changes between runs).
struct Split {
  Dataset train;
  Dataset test;
};
absl::StatusOr<Split> SplitTail(const Dataset& data, double test_fraction);

// A fixed split of the rows in an order shuffled by `split_seed` (the same
// seed gives the same split on every run and machine): the first
// (1 - test_fraction) train, the rest test. For data sets whose file order
// is not random, such as the digits, whose tail comes from other writers
// than its head.
absl::StatusOr<Split> SplitShuffled(const Dataset& data, double test_fraction,
                                    uint64_t split_seed);

// The order of the examples in epoch `epoch`: a permutation that depends
// only on (seed, epoch), so a resumed run sees the batches an uninterrupted
// one would.
std::vector<int64_t> EpochOrder(int64_t size, uint64_t seed, int64_t epoch);

// Copies the rows `indices` of `data` into a new batch.
absl::StatusOr<Dataset> Gather(const Dataset& data,
                               const std::vector<int64_t>& indices);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_DATASET_H_
