#include "tools/fuzz/mutator.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace scopeflow::fuzz {
namespace {

std::vector<std::string> Take(Mutator& mutator, int count) {
  std::vector<std::string> inputs;
  for (int i = 0; i < count; ++i) inputs.push_back(mutator.Next());
  return inputs;
}

TEST(MutatorTest, TheSameRandomSeedRepeatsTheSequence) {
  const std::vector<std::string> seeds = {"abcdefgh", "0123456789"};
  Mutator a(seeds, 7, 64);
  Mutator b(seeds, 7, 64);
  Mutator c(seeds, 8, 64);
  const std::vector<std::string> from_a = Take(a, 200);
  EXPECT_EQ(from_a, Take(b, 200));
  EXPECT_NE(from_a, Take(c, 200));
}

TEST(MutatorTest, InputsDifferFromTheSeedsAndStayWithinTheSize) {
  const std::string seed = "shape: (12, 3), descr: '<f4'";
  Mutator mutator({seed}, 1, 40);
  int changed = 0;
  for (const std::string& input : Take(mutator, 1000)) {
    EXPECT_LE(input.size(), 40u);
    changed += input != seed;
  }
  EXPECT_GE(changed, 950);
}

TEST(MutatorTest, TheSizeLimitIsAtLeastTheLargestSeed) {
  Mutator mutator({std::string(100, 'x'), "y"}, 1, 10);
  EXPECT_EQ(mutator.max_size(), 100u);
}

TEST(MutatorTest, ReachesTheEdgesOfIntegersInBinaryAndText) {
  // A length field of zeros and a number in text: the mutations readers
  // trust least must come up within a few thousand inputs.
  Mutator mutator({std::string(16, '\0'), "dims: 12"}, 3, 64);
  const std::string int64_max("\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
  bool binary = false;
  bool text = false;
  bool empty = false;
  for (const std::string& input : Take(mutator, 20000)) {
    binary |= input.find(int64_max) != std::string::npos;
    text |= input.find("dims: 9223372036854775808") != std::string::npos;
    empty |= input.empty();
  }
  EXPECT_TRUE(binary);
  EXPECT_TRUE(text);
  EXPECT_TRUE(empty);
}

TEST(MutatorTest, GrowsAnEmptySeed) {
  Mutator mutator({""}, 5, 32);
  int grown = 0;
  for (const std::string& input : Take(mutator, 500)) grown += !input.empty();
  EXPECT_GT(grown, 100);
}

}  // namespace
}  // namespace scopeflow::fuzz
