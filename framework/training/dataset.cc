#include "framework/training/dataset.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};

// The whole file, decompressed if it is gzip (zlib reads plain files as
// they are).
absl::StatusOr<std::string> ReadMaybeGzip(const std::string& path) {
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  SF_CHECK_CODE(file != nullptr, absl::StatusCode::kNotFound,
                "cannot open data set file %s: %s", path, std::strerror(errno));
  std::string contents;
  char buffer[1 << 16];
  while (true) {
    const int n = gzread(file.get(), buffer, sizeof(buffer));
    if (n < 0) {
      int code = 0;
      return absl::DataLossError(absl::StrCat("cannot read data set file ",
                                              path, ": ",
                                              gzerror(file.get(), &code)));
    }
    if (n == 0) break;
    contents.append(buffer, n);
  }
  return contents;
}

}  // namespace

absl::StatusOr<Dataset> LoadCsvDataset(const std::string& path,
                                       float feature_scale) {
  SF_ASSIGN_OR_RETURN(std::string contents, ReadMaybeGzip(path));
  std::vector<float> features;
  std::vector<int64_t> labels;
  int64_t width = -1;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    SF_CHECK(fields.size() >= 2,
             "%s line %d: expected feature values then a label, got %d "
             "field(s)",
             path, line_number, fields.size());
    if (width < 0) width = static_cast<int64_t>(fields.size()) - 1;
    SF_CHECK(static_cast<int64_t>(fields.size()) - 1 == width,
             "%s line %d: %d feature values, earlier lines have %d", path,
             line_number, fields.size() - 1, width);
    for (int64_t i = 0; i < width; ++i) {
      double value = 0;
      SF_CHECK(absl::SimpleAtod(fields[i], &value),
               "%s line %d: feature %d is \"%s\", not a number", path,
               line_number, i, fields[i]);
      features.push_back(static_cast<float>(value) * feature_scale);
    }
    double label = 0;
    SF_CHECK(absl::SimpleAtod(fields.back(), &label) && label >= 0 &&
                 label == static_cast<int64_t>(label),
             "%s line %d: label \"%s\" is not a non-negative integer", path,
             line_number, fields.back());
    labels.push_back(static_cast<int64_t>(label));
  }
  SF_CHECK(!labels.empty(), "data set file %s holds no examples", path);
  Dataset data;
  const int64_t n = static_cast<int64_t>(labels.size());
  SF_RETURN_IF_ERROR(data.features.Allocate(CPUPlace(), kFloat32, {n, width}));
  SF_RETURN_IF_ERROR(data.labels.Allocate(CPUPlace(), kInt64, {n, 1}));
  std::copy(features.begin(), features.end(), data.features.data<float>());
  std::copy(labels.begin(), labels.end(), data.labels.data<int64_t>());
  data.num_classes = *std::max_element(labels.begin(), labels.end()) + 1;
  return data;
}

absl::StatusOr<Dataset> Rows(const Dataset& data, int64_t begin, int64_t end) {
  Dataset rows;
  SF_ASSIGN_OR_RETURN(rows.features, data.features.Slice(begin, end));
  SF_ASSIGN_OR_RETURN(rows.labels, data.labels.Slice(begin, end));
  rows.num_classes = data.num_classes;
  return rows;
}

absl::StatusOr<Split> SplitTail(const Dataset& data, double test_fraction) {
  SF_CHECK(test_fraction > 0 && test_fraction < 1,
           "test fraction must be in (0, 1), got %g", test_fraction);
  const int64_t n = data.size();
  const int64_t train = n - static_cast<int64_t>(n * test_fraction);
  SF_CHECK(train > 0 && train < n,
           "a data set of %d examples cannot be split %g test", n,
           test_fraction);
  Split split;
  SF_ASSIGN_OR_RETURN(split.train, Rows(data, 0, train));
  SF_ASSIGN_OR_RETURN(split.test, Rows(data, train, n));
  return split;
}

absl::StatusOr<Split> SplitShuffled(const Dataset& data, double test_fraction,
                                    uint64_t split_seed) {
  // The epoch number -1 keeps this permutation apart from every epoch's
  // order under the same seed.
  SF_ASSIGN_OR_RETURN(const Dataset shuffled,
                      Gather(data, EpochOrder(data.size(), split_seed, -1)));
  return SplitTail(shuffled, test_fraction);
}

std::vector<int64_t> EpochOrder(int64_t size, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(size);
  std::iota(order.begin(), order.end(), 0);
  // std::shuffle's use of the engine is unspecified across standard
  // libraries; a Fisher-Yates over mt19937_64 draws is the same everywhere.
  std::mt19937_64 engine(seed * 0x9E3779B97F4A7C15ull +
                         static_cast<uint64_t>(epoch));
  for (int64_t i = size - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(engine() % (i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

absl::StatusOr<Dataset> Gather(const Dataset& data,
                               const std::vector<int64_t>& indices) {
  const int64_t width = data.features.dim(1);
  const int64_t n = static_cast<int64_t>(indices.size());
  Dataset batch;
  batch.num_classes = data.num_classes;
  SF_RETURN_IF_ERROR(batch.features.Allocate(CPUPlace(), kFloat32, {n, width}));
  SF_RETURN_IF_ERROR(batch.labels.Allocate(CPUPlace(), kInt64, {n, 1}));
  const float* features = data.features.data<float>();
  const int64_t* labels = data.labels.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    SF_CHECK(indices[i] >= 0 && indices[i] < data.size(),
             "row %d is outside the data set's %d rows", indices[i],
             data.size());
    std::copy(features + indices[i] * width,
              features + (indices[i] + 1) * width,
              batch.features.data<float>() + i * width);
    batch.labels.data<int64_t>()[i] = labels[indices[i]];
  }
  return batch;
}

}  // namespace scopeflow
