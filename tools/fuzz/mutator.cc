#include "tools/fuzz/mutator.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace scopeflow::fuzz {
namespace {

// The integers that limits and length checks get wrong: zero, one, the
// edges of each signed and unsigned width, powers of two.
constexpr uint64_t kInteresting[] = {
    0,
    1,
    2,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x10000,
    0x7fffffff,
    0x80000000,
    0xffffffff,
    0x100000000,
    0x7fffffffffffffff,
    0x8000000000000000,
    0xffffffffffffffff,
    0xfffffffffffffffe,
    1ull << 40,
};

constexpr size_t kWidths[] = {1, 2, 4, 8};

}  // namespace

Mutator::Mutator(std::vector<std::string> seeds, uint64_t random_seed,
                 size_t max_size)
    : seeds_(std::move(seeds)), engine_(random_seed), max_size_(max_size) {
  for (const std::string& seed : seeds_) {
    max_size_ = std::max(max_size_, seed.size());
  }
}

std::string Mutator::Next() {
  std::string input = seeds_[Below(seeds_.size())];
  const size_t count = 1 + Below(8);
  for (size_t i = 0; i < count; ++i) Mutate(input);
  if (input.size() > max_size_) input.resize(max_size_);
  return input;
}

void Mutator::Mutate(std::string& input) {
  switch (Below(10)) {
    case 0:
      return ChangeBit(input);
    case 1:
      return ChangeByte(input);
    case 2:
      return EraseRange(input);
    case 3:
      return InsertBytes(input);
    case 4:
      return CopyRange(input);
    case 5:
      return SetInterestingInteger(input);
    case 6:
      return AddToInteger(input);
    case 7:
      return ChangeAsciiNumber(input);
    case 8:
      return SpliceSeed(input);
    default:
      // Truncation: readers must not trust a length the bytes lack.
      input.resize(Below(input.size() + 1));
  }
}

void Mutator::ChangeBit(std::string& input) {
  if (input.empty()) return InsertBytes(input);
  input[Below(input.size())] ^= static_cast<char>(1u << Below(8));
}

void Mutator::ChangeByte(std::string& input) {
  if (input.empty()) return InsertBytes(input);
  input[Below(input.size())] = static_cast<char>(engine_());
}

void Mutator::EraseRange(std::string& input) {
  if (input.empty()) return;
  const size_t at = Below(input.size());
  input.erase(at, 1 + Below(std::min<size_t>(input.size() - at, 64)));
}

void Mutator::InsertBytes(std::string& input) {
  const size_t at = Below(input.size() + 1);
  const size_t count = 1 + Below(16);
  // Half the time one byte repeated (runs of zeros or 0xff are what length
  // fields and padding look like), else random bytes.
  std::string bytes(count, static_cast<char>(engine_()));
  if (Below(2) == 0) {
    for (char& byte : bytes) byte = static_cast<char>(engine_());
  }
  input.insert(at, bytes);
}

void Mutator::CopyRange(std::string& input) {
  if (input.empty()) return InsertBytes(input);
  const size_t from = Below(input.size());
  const std::string part =
      input.substr(from, 1 + Below(std::min<size_t>(input.size() - from, 64)));
  const size_t to = Below(input.size() + 1);
  if (Below(2) == 0) {
    input.insert(to, part);
  } else {
    input.replace(to, part.size(), part);
  }
}

void Mutator::SetInterestingInteger(std::string& input) {
  const size_t width = kWidths[Below(std::size(kWidths))];
  if (input.size() < width) return InsertBytes(input);
  uint64_t value = kInteresting[Below(std::size(kInteresting))];
  if (Below(2) == 0) value = ~value + 1;  // Its negation.
  const size_t at = Below(input.size() - width + 1);
  // Little-endian, as every binary format here is; big-endian half the time
  // for the others' fields.
  const bool big = Below(2) == 0;
  for (size_t i = 0; i < width; ++i) {
    const size_t shift = 8 * (big ? width - 1 - i : i);
    input[at + i] = static_cast<char>(value >> shift);
  }
}

void Mutator::AddToInteger(std::string& input) {
  const size_t width = kWidths[Below(std::size(kWidths))];
  if (input.size() < width) return InsertBytes(input);
  const size_t at = Below(input.size() - width + 1);
  uint64_t value = 0;
  std::memcpy(&value, input.data() + at, width);
  const uint64_t delta = 1 + Below(35);
  value = Below(2) == 0 ? value + delta : value - delta;
  std::memcpy(input.data() + at, &value, width);
}

void Mutator::ChangeAsciiNumber(std::string& input) {
  // The digits around a random position (text nets, .npy headers, JSON).
  if (input.empty()) return InsertBytes(input);
  size_t begin = Below(input.size());
  while (begin < input.size() && (input[begin] < '0' || input[begin] > '9')) {
    ++begin;
  }
  if (begin == input.size()) return ChangeByte(input);
  size_t end = begin;
  while (end < input.size() && input[end] >= '0' && input[end] <= '9') ++end;
  static constexpr const char* kNumbers[] = {
      "0",          "1",        "-1",          "2147483647", "2147483648",
      "4294967296", "-2147483649", "9223372036854775807",
      "9223372036854775808", "18446744073709551616", "1e309", "3.5e38",
      "99999999999999999999999999999"};
  input.replace(begin, end - begin, kNumbers[Below(std::size(kNumbers))]);
}

void Mutator::SpliceSeed(std::string& input) {
  const std::string& other = seeds_[Below(seeds_.size())];
  if (other.empty()) return EraseRange(input);
  const size_t from = Below(other.size());
  const std::string part = other.substr(from, 1 + Below(other.size() - from));
  const size_t at = Below(input.size() + 1);
  input = input.substr(0, at) + part;
}

}  // namespace scopeflow::fuzz
