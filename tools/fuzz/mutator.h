// Random mutation of fuzz inputs, for CI's bounded fuzzing runs.
//
// tools/fuzz/run.sh fuzzes with libFuzzer, which needs clang and a build of
// its own (hours from a cold cache on 2 cores); CI instead mutates each
// target's corpus for a bounded time inside the Bazel-built replay binary,
// under AddressSanitizer and UndefinedBehaviorSanitizer, with nothing more
// to compile. Without coverage feedback the mutations are blind, so they
// follow libFuzzer's own repertoire (bit and byte changes, interesting
// integers, erased, inserted, repeated and copied ranges, ASCII numbers,
// splices of two seeds), which reach the length fields, counts and
// numbers that file formats' readers trust.
//
// Who owns what: a Mutator owns its random engine and a copy of the seeds.
// Not thread-safe.
#ifndef SCOPEFLOW_TOOLS_FUZZ_MUTATOR_H_
#define SCOPEFLOW_TOOLS_FUZZ_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace scopeflow::fuzz {

class Mutator {
 public:
  // `seeds` must not be empty. Inputs grow to at most `max_size` bytes (at
  // least the largest seed).
  Mutator(std::vector<std::string> seeds, uint64_t random_seed,
          size_t max_size);

  // The next input: a seed changed by 1 to 8 stacked mutations. The same
  // seeds and random seed give the same sequence.
  std::string Next();

  size_t max_size() const { return max_size_; }

 private:
  size_t Below(size_t n) { return n == 0 ? 0 : engine_() % n; }
  void Mutate(std::string& input);
  void ChangeBit(std::string& input);
  void ChangeByte(std::string& input);
  void EraseRange(std::string& input);
  void InsertBytes(std::string& input);
  void CopyRange(std::string& input);
  void SetInterestingInteger(std::string& input);
  void AddToInteger(std::string& input);
  void ChangeAsciiNumber(std::string& input);
  void SpliceSeed(std::string& input);

  std::vector<std::string> seeds_;
  std::mt19937_64 engine_;
  size_t max_size_;
};

}  // namespace scopeflow::fuzz

#endif  // SCOPEFLOW_TOOLS_FUZZ_MUTATOR_H_
