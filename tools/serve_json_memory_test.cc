// What parsing a JSON body costs in memory (ParseJsonBody,
// tools/serve_json_tensor.h), measured: this binary counts every byte
// operator new hands out, so each test knows the peak its parse reached.
// A body of many small numbers peaks within a stated multiple of its size;
// a deeply nested body is refused at the depth limit having built nothing;
// a body over its memory budget is refused while streaming; and the cost
// the parser estimates is never below what the document really takes.
#include <malloc.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/serve_json_tensor.h"

namespace {

std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> peak_bytes{0};

void CountAllocation(int64_t bytes) {
  const int64_t now = live_bytes.fetch_add(bytes) + bytes;
  int64_t peak = peak_bytes.load();
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
}

void* CountedNew(size_t size) {
  void* block = std::malloc(size == 0 ? 1 : size);
  if (block == nullptr) throw std::bad_alloc();
  CountAllocation(static_cast<int64_t>(malloc_usable_size(block)));
  return block;
}

void CountedDelete(void* block) {
  if (block == nullptr) return;
  CountAllocation(-static_cast<int64_t>(malloc_usable_size(block)));
  std::free(block);
}

}  // namespace

void* operator new(size_t size) { return CountedNew(size); }
void* operator new[](size_t size) { return CountedNew(size); }
void operator delete(void* block) noexcept { CountedDelete(block); }
void operator delete[](void* block) noexcept { CountedDelete(block); }
void operator delete(void* block, size_t) noexcept { CountedDelete(block); }
void operator delete[](void* block, size_t) noexcept { CountedDelete(block); }

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

// The peak of the heap above what was live when it began, over `f`.
template <typename F>
int64_t PeakBytesOf(F&& f) {
  const int64_t base = live_bytes.load();
  peak_bytes.store(base);
  f();
  return peak_bytes.load() - base;
}

// {"inputs": {"x": [[d, d, ...]]}} with `count` one-digit numbers: two
// bytes of text per number, the cheapest a number can be written.
std::string SmallNumbersBody(int count) {
  std::string body = R"({"inputs": {"x": [[)";
  body.reserve(body.size() + 2 * count + 8);
  for (int i = 0; i < count; ++i) {
    if (i > 0) body += ',';
    body += static_cast<char>('0' + i % 10);
  }
  body += "]]}}";
  return body;
}

TEST(JsonMemoryTest, ManySmallNumbersPeakWithinNineTimesTheBody) {
  const std::string body = SmallNumbersBody(1'000'000);
  absl::StatusOr<Json> doc = absl::UnknownError("not parsed");
  const int64_t peak = PeakBytesOf([&] { doc = ParseJsonBody(body); });
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ((*doc)["inputs"]["x"][0].size(), 1'000'000u);
  // 16 bytes per number (a Json each, its array allocated once at its
  // final size) for 2 bytes of text.
  EXPECT_LE(peak, 9 * static_cast<int64_t>(body.size()))
      << "peak " << peak << " for " << body.size() << " bytes";
  // nlohmann's own document parser grows each array by doubling.
  const int64_t plain = PeakBytesOf([&] {
    Json plain_doc = Json::parse(body);
    EXPECT_EQ(plain_doc["inputs"]["x"][0].size(), 1'000'000u);
  });
  EXPECT_GT(plain, peak);
  std::printf("1e6 one-digit numbers, %zu bytes: peak %.1fx the body "
              "(nlohmann::json::parse: %.1fx)\n",
              body.size(), static_cast<double>(peak) / body.size(),
              static_cast<double>(plain) / body.size());
}

TEST(JsonMemoryTest, DeepNestingIsRefusedAtTheLimitHavingBuiltNothing) {
  // 8 MB of '[': nlohmann's document parser would build 8 million arrays
  // (over 500 MB) before finding that the body never closes them.
  const std::string body(8 << 20, '[');
  absl::StatusOr<Json> doc = absl::UnknownError("not parsed");
  const int64_t peak = PeakBytesOf([&] { doc = ParseJsonBody(body); });
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(doc.status().message(),
              HasSubstr("nests arrays and objects deeper than 24 levels "
                        "(the limit)"));
  EXPECT_LT(peak, 64 << 10);
  // Objects too, closed or not.
  std::string objects;
  for (int i = 0; i < 30; ++i) objects += R"({"a": )";
  objects += "1";
  for (int i = 0; i < 30; ++i) objects += "}";
  EXPECT_THAT(ParseJsonBody(objects).status().message(),
              HasSubstr("deeper than 24 levels"));
  // At the limit itself, a body parses.
  const std::string deepest =
      std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJsonBody(deepest).ok());
}

TEST(JsonMemoryTest, OverTheBudgetIsRefusedWhileStreaming) {
  // 100,000 empty objects: about 80 bytes each for 3 bytes of text.
  std::string body = "[";
  for (int i = 0; i < 100'000; ++i) body += i == 0 ? "{}" : ",{}";
  body += "]";
  const size_t budget = 4 * body.size();
  absl::StatusOr<Json> doc = absl::UnknownError("not parsed");
  const int64_t peak =
      PeakBytesOf([&] { doc = ParseJsonBody(body, budget); });
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(doc.status().message(),
              HasSubstr(absl::StrCat("would take more than ", budget,
                                     " bytes of memory to parse (the "
                                     "limit)")));
  EXPECT_LT(peak, static_cast<int64_t>(budget));
  // The default budget (32 times the size and 1 MiB) takes it.
  EXPECT_TRUE(ParseJsonBody(body).ok());
}

// The smallest budget a body parses within is the parser's estimate of
// its document; the document must never take more.
TEST(JsonMemoryTest, TheEstimateCoversWhatTheDocumentTakes) {
  auto repeat = [](const std::string& first, const std::string& next,
                   int count) {
    std::string body = "[" + first;
    for (int i = 1; i < count; ++i) body += next;
    return body + "]";
  };
  const std::string bodies[] = {
      SmallNumbersBody(20'000),
      repeat("{}", ",{}", 20'000),
      repeat("[]", ",[]", 20'000),
      repeat(R"("")", R"(,"")", 20'000),
      repeat(R"("a string longer than fifteen")",
             R"(,"a string longer than fifteen")", 5'000),
      repeat(R"({"a":1,"b":2.5})", R"(,{"a":1,"b":2.5})", 10'000),
      repeat(R"({"a key longer than fifteen":[true,null]})",
             R"(,{"a key longer than fifteen":[true,null]})", 5'000),
      repeat("[[[[[[1]]]]]]", ",[[[[[[1]]]]]]", 5'000),
  };
  for (const std::string& body : bodies) {
    size_t low = 0;
    size_t high = 64 * body.size();
    ASSERT_TRUE(ParseJsonBody(body, high).ok()) << body.substr(0, 40);
    while (low + 1 < high) {
      const size_t middle = low + (high - low) / 2;
      (ParseJsonBody(body, middle).ok() ? high : low) = middle;
    }
    Json doc;
    const int64_t taken = PeakBytesOf([&] { doc = *ParseJsonBody(body, high); });
    EXPECT_LE(taken, static_cast<int64_t>(high)) << body.substr(0, 40);
  }
}

}  // namespace
}  // namespace scopeflow
