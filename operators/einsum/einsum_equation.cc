#include "operators/einsum/einsum_equation.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace einsum {
namespace {

// A term as written: its letters, and where its ellipsis stands (-1: none).
struct Term {
  std::vector<int> letters;
  int ellipsis_at = -1;
};

absl::StatusOr<Term> ParseTerm(absl::string_view text,
                               absl::string_view equation) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == '.') {
      SF_CHECK(text.substr(i, 3) == "...",
               "equation \"%s\": a '.' outside an ellipsis \"...\" in term "
               "\"%s\"",
               equation, text);
      SF_CHECK(term.ellipsis_at < 0,
               "equation \"%s\": term \"%s\" holds two ellipses (expected at "
               "most one)",
               equation, text);
      term.ellipsis_at = static_cast<int>(term.letters.size());
      i += 2;
      continue;
    }
    SF_CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'),
             "equation \"%s\": character '%c' in term \"%s\" (expected "
             "letters, \"...\", ',' and \"->\")",
             equation, c, text);
    term.letters.push_back(static_cast<unsigned char>(c));
  }
  return term;
}

}  // namespace

std::string LabelName(int label) {
  if (label >= kEllipsisLabel) {
    return absl::StrCat("ellipsis dimension ", label - kEllipsisLabel);
  }
  return std::string(1, static_cast<char>(label));
}

absl::StatusOr<Equation> Parse(absl::string_view equation,
                               absl::Span<const int> ranks) {
  absl::string_view lhs = equation;
  absl::string_view rhs;
  const size_t arrow = equation.find("->");
  const bool explicit_output = arrow != absl::string_view::npos;
  if (explicit_output) {
    lhs = equation.substr(0, arrow);
    rhs = equation.substr(arrow + 2);
    SF_CHECK(rhs.find("->") == absl::string_view::npos &&
                 rhs.find(',') == absl::string_view::npos,
             "equation \"%s\": expected one \"->\" followed by one output "
             "term",
             equation);
  }
  const std::vector<absl::string_view> texts = absl::StrSplit(lhs, ',');
  SF_CHECK(texts.size() == ranks.size(),
           "equation \"%s\" has %d input terms: expected one per operand, %d",
           equation, texts.size(), ranks.size());
  std::vector<Term> terms;
  int ellipsis_rank = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    SF_ASSIGN_OR_RETURN(Term term, ParseTerm(texts[i], equation));
    const int letters = static_cast<int>(term.letters.size());
    if (term.ellipsis_at < 0) {
      SF_CHECK(letters == ranks[i],
               "equation \"%s\": term \"%s\" has %d labels for operand %d of "
               "rank %d",
               equation, texts[i], letters, i, ranks[i]);
    } else {
      SF_CHECK(letters <= ranks[i],
               "equation \"%s\": term \"%s\" has %d labels besides its "
               "ellipsis for operand %d of rank %d",
               equation, texts[i], letters, i, ranks[i]);
      ellipsis_rank = std::max(ellipsis_rank, ranks[i] - letters);
    }
    terms.push_back(std::move(term));
  }
  Equation result;
  std::map<int, int> counts;  // Sorted: numpy's implicit output order.
  bool any_ellipsis = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& term = terms[i];
    std::vector<int> labels;
    for (int k = 0; k <= static_cast<int>(term.letters.size()); ++k) {
      if (k == term.ellipsis_at) {
        any_ellipsis = true;
        const int e = ranks[i] - static_cast<int>(term.letters.size());
        for (int t = 0; t < e; ++t) {
          labels.push_back(kEllipsisLabel + ellipsis_rank - e + t);
        }
      }
      if (k < static_cast<int>(term.letters.size())) {
        labels.push_back(term.letters[k]);
        ++counts[term.letters[k]];
      }
    }
    result.inputs.push_back(std::move(labels));
  }
  if (!explicit_output) {
    for (int t = 0; t < ellipsis_rank; ++t) {
      result.output.push_back(kEllipsisLabel + t);
    }
    for (const auto& [label, count] : counts) {
      if (count == 1) result.output.push_back(label);
    }
    return result;
  }
  SF_ASSIGN_OR_RETURN(const Term out, ParseTerm(rhs, equation));
  SF_CHECK(out.ellipsis_at < 0 || any_ellipsis,
           "equation \"%s\": the output has an ellipsis but no input term "
           "does",
           equation);
  for (int k = 0; k <= static_cast<int>(out.letters.size()); ++k) {
    if (k == out.ellipsis_at) {
      for (int t = 0; t < ellipsis_rank; ++t) {
        result.output.push_back(kEllipsisLabel + t);
      }
    }
    if (k == static_cast<int>(out.letters.size())) break;
    const int label = out.letters[k];
    SF_CHECK(counts.count(label) > 0,
             "equation \"%s\": output label '%c' is in no input term",
             equation, static_cast<char>(label));
    SF_CHECK(std::count(out.letters.begin(), out.letters.end(), label) == 1,
             "equation \"%s\": output label '%c' appears twice (expected "
             "each output label once)",
             equation, static_cast<char>(label));
    result.output.push_back(label);
  }
  return result;
}

absl::StatusOr<std::vector<int64_t>> LabelSizes(
    const Equation& equation, absl::Span<const Dims> operand_dims) {
  std::vector<int64_t> sizes(kEllipsisLabel + 64, 0);
  std::vector<bool> seen(sizes.size(), false);
  for (size_t i = 0; i < equation.inputs.size(); ++i) {
    const std::vector<int>& labels = equation.inputs[i];
    for (size_t axis = 0; axis < labels.size(); ++axis) {
      const int label = labels[axis];
      SF_CHECK(label < static_cast<int>(sizes.size()),
               "operand %d has more ellipsis dimensions than einsum handles "
               "(64)",
               i);
      const int64_t size = operand_dims[i][axis];
      int64_t& known = sizes[label];
      if (!seen[label]) {
        seen[label] = true;
        known = size;
        continue;
      }
      const bool ellipsis = label >= kEllipsisLabel;
      if (size == known) continue;
      // Unknown sizes: a letter takes the known one; an ellipsis dimension
      // of size 1 may broadcast to anything.
      if (size < 0) {
        if (ellipsis && known == 1) known = -1;
        continue;
      }
      if (known < 0) {
        if (!ellipsis || size != 1) known = size;
        continue;
      }
      // Ellipsis dimensions broadcast as numpy's do; letters do not.
      if (ellipsis && (size == 1 || known == 1)) {
        known = std::max(known, size);
        continue;
      }
      return absl::InvalidArgumentError(absl::StrFormat(
          "label %s has size %d in operand %d (shape %s) but %d elsewhere "
          "(expected one size%s)",
          LabelName(label), size, i, DimsToString(operand_dims[i]), known,
          ellipsis ? ", or 1 to broadcast" : ""));
    }
  }
  return sizes;
}

}  // namespace einsum
}  // namespace scopeflow
