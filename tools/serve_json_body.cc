// ParseJsonBody (tools/serve_json_tensor.h): a request body parsed within a
// depth and memory budget, in two streaming passes of nlohmann's event
// (SAX) parser. The first builds nothing: it checks the syntax and the
// nesting depth, counts each array's elements and adds up what the
// document will cost, and stops at the first event past a limit, so that a
// body nested a million deep or one of a million empty arrays is refused
// after reading only as far as the limit. The second builds the document
// with each array allocated once at its final size (no growth, whose
// doubling would otherwise hold up to three times an array's elements at
// once) and refuses a key given twice in one object, which nlohmann's
// document parser would silently let the last one win.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/serve_json_tensor.h"

namespace scopeflow {
namespace {

// What the document costs, in bytes, as libstdc++ and glibc's malloc lay
// it out: every value is a Json in its parent (an array's buffer, an
// object's node) or the root; arrays, objects and long strings hold a heap
// block besides, and each block costs 16 bytes more than it holds.
constexpr size_t kBlockOverhead = 16;
constexpr size_t kValueBytes = sizeof(Json);
constexpr size_t kArrayBytes = sizeof(Json::array_t) + kBlockOverhead;
constexpr size_t kObjectBytes = sizeof(Json::object_t) + kBlockOverhead;
// A member's tree node: four words of links and colour, its key and its
// value (whose own kValueBytes its value's event counts).
constexpr size_t kMemberBytes = 4 * sizeof(void*) + sizeof(std::string) +
                                kBlockOverhead;
// Per array, in the first pass's table of sizes (twice: the table grows by
// doubling).
constexpr size_t kTableBytes = 2 * sizeof(uint32_t);
// The parse itself: both passes' stacks (at most kMaxJsonDepth deep) and
// the lexer's buffer for short tokens.
constexpr size_t kParserBytes = 4096;

// The heap a std::string of `length` characters holds beyond itself: none
// while it fits in the string (15 characters in libstdc++). Counted twice:
// the lexer reads a string into a buffer that grows by doubling before the
// document takes it.
size_t StringHeapBytes(size_t length) {
  return length > 15 ? 2 * (length + 1 + kBlockOverhead) : 0;
}

constexpr size_t kNotAnArray = std::numeric_limits<size_t>::max();

// The first pass.
class JsonScanner : public nlohmann::json_sax<Json> {
 public:
  JsonScanner(size_t budget, std::vector<uint32_t>& sizes)
      : budget_(budget), sizes_(sizes) {}

  bool null() override { return Value(kValueBytes); }
  bool boolean(bool) override { return Value(kValueBytes); }
  bool number_integer(number_integer_t) override { return Value(kValueBytes); }
  bool number_unsigned(number_unsigned_t) override {
    return Value(kValueBytes);
  }
  bool number_float(number_float_t, const string_t&) override {
    return Value(kValueBytes);
  }
  bool string(string_t& text) override {
    return Value(kValueBytes + sizeof(std::string) + kBlockOverhead +
                 StringHeapBytes(text.size()));
  }
  bool binary(binary_t&) override { return Fail("binary values"); }
  bool start_object(std::size_t) override {
    if (!Enter() || !Value(kValueBytes + kObjectBytes)) return false;
    open_.push_back(kNotAnArray);
    return true;
  }
  bool key(string_t& text) override {
    return Add(kMemberBytes + StringHeapBytes(text.size()));
  }
  bool end_object() override {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (!Enter() || !Value(kValueBytes + kArrayBytes + kTableBytes)) {
      return false;
    }
    open_.push_back(sizes_.size());
    sizes_.push_back(0);
    return true;
  }
  bool end_array() override {
    open_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& error) override {
    // "[json.exception.parse_error.101] parse error at line 1, ...": the
    // bracketed code says nothing to a client.
    std::string reason = error.what();
    const size_t bracket = reason.find("] ");
    if (reason.rfind("[json.exception", 0) == 0 &&
        bracket != std::string::npos) {
      reason = reason.substr(bracket + 2);
    }
    error_ = absl::StrCat("malformed JSON: ", reason);
    return false;
  }

  // Why the scan stopped; "" when it did not.
  const std::string& error() const { return error_; }

 private:
  bool Fail(absl::string_view why) {
    error_ = std::string(why);
    return false;
  }
  bool Enter() {
    if (open_.size() < static_cast<size_t>(kMaxJsonDepth)) return true;
    return Fail(absl::StrCat("the JSON body nests arrays and objects deeper "
                             "than ",
                             kMaxJsonDepth, " levels (the limit)"));
  }
  bool Add(size_t bytes) {
    cost_ += bytes;
    if (cost_ <= budget_) return true;
    return Fail(absl::StrCat(
        "the JSON body would take more than ", budget_,
        " bytes of memory to parse (the limit); send large tensors as "
        "binary data (KServe's binary tensor extension, or "
        "application/x-protobuf)"));
  }
  // A value in the innermost open array or object.
  bool Value(size_t bytes) {
    if (!open_.empty() && open_.back() != kNotAnArray) {
      uint32_t& count = sizes_[open_.back()];
      if (count == std::numeric_limits<uint32_t>::max()) {
        return Fail("a JSON array of the body has over 4294967295 elements");
      }
      // An array's first element opens its buffer, a heap block.
      if (count++ == 0) bytes += kBlockOverhead;
    }
    return Add(bytes);
  }

  const size_t budget_;
  std::vector<uint32_t>& sizes_;
  // For each array or object open, outermost first: the array's index in
  // sizes_, or kNotAnArray.
  std::vector<size_t> open_;
  size_t cost_ = kParserBytes;
  std::string error_;
};

// The second pass: the document, each array reserved at the size the
// first pass counted.
class JsonBuilder : public nlohmann::json_sax<Json> {
 public:
  JsonBuilder(Json& root, const std::vector<uint32_t>& sizes)
      : root_(root), sizes_(sizes) {}

  bool null() override { return Put(nullptr) != nullptr; }
  bool boolean(bool value) override { return Put(value) != nullptr; }
  bool number_integer(number_integer_t value) override {
    return Put(value) != nullptr;
  }
  bool number_unsigned(number_unsigned_t value) override {
    return Put(value) != nullptr;
  }
  bool number_float(number_float_t value, const string_t&) override {
    return Put(value) != nullptr;
  }
  bool string(string_t& text) override {
    return Put(std::move(text)) != nullptr;
  }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override {
    Json* object = Put(Json::value_t::object);
    stack_.push_back(object);
    return true;
  }
  bool key(string_t& text) override {
    auto [it, inserted] =
        stack_.back()->get_ref<Json::object_t&>().emplace(std::move(text),
                                                          nullptr);
    if (!inserted) {
      duplicate_ = it->first;
      return false;
    }
    member_ = &it->second;
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    Json* array = Put(Json::value_t::array);
    array->get_ref<Json::array_t&>().reserve(sizes_[next_array_++]);
    stack_.push_back(array);
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception&) override {
    return false;
  }

  // A key the body gives twice in one object; "" if none.
  const std::string& duplicate() const { return duplicate_; }

 private:
  // Places `value` where the document expects the next one: the root, the
  // end of the innermost array, or the member whose key came last.
  template <typename V>
  Json* Put(V&& value) {
    if (stack_.empty()) {
      root_ = Json(std::forward<V>(value));
      return &root_;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      Json::array_t& elements = top.get_ref<Json::array_t&>();
      elements.emplace_back(std::forward<V>(value));
      return &elements.back();
    }
    *member_ = Json(std::forward<V>(value));
    return member_;
  }

  Json& root_;
  const std::vector<uint32_t>& sizes_;
  size_t next_array_ = 0;
  std::vector<Json*> stack_;
  Json* member_ = nullptr;
  std::string duplicate_;
};

}  // namespace

size_t JsonMemoryBudget(size_t body_bytes) {
  return kJsonMemoryMultiple * body_bytes + (size_t{1} << 20);
}

absl::StatusOr<Json> ParseJsonBody(absl::string_view body) {
  return ParseJsonBody(body, JsonMemoryBudget(body.size()));
}

absl::StatusOr<Json> ParseJsonBody(absl::string_view body,
                                   size_t memory_budget) {
  std::vector<uint32_t> sizes;
  JsonScanner scanner(memory_budget, sizes);
  if (!Json::sax_parse(body.begin(), body.end(), &scanner)) {
    return absl::InvalidArgumentError(scanner.error());
  }
  Json root;
  JsonBuilder builder(root, sizes);
  if (!Json::sax_parse(body.begin(), body.end(), &builder)) {
    if (!builder.duplicate().empty()) {
      std::string key = builder.duplicate();
      if (key.size() > 60) key = absl::StrCat(key.substr(0, 57), "...");
      std::string quoted;
      AppendJsonString(quoted, key);
      return absl::InvalidArgumentError(absl::StrCat(
          "the JSON body gives key ", quoted,
          " twice in one object; give each key once"));
    }
    return absl::InternalError("the JSON body parsed once but not twice");
  }
  return root;
}

}  // namespace scopeflow
