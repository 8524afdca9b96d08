// Helpers for code whose errors travel as absl::Status / absl::StatusOr.
#ifndef SCOPEFLOW_PLATFORM_STATUS_MACROS_H_
#define SCOPEFLOW_PLATFORM_STATUS_MACROS_H_

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"

#define SF_STATUS_CONCAT_INNER_(a, b) a##b
#define SF_STATUS_CONCAT_(a, b) SF_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define SF_RETURN_IF_ERROR(expr)                                 \
  do {                                                           \
    ::absl::Status sf_status_ = (expr);                          \
    if (ABSL_PREDICT_FALSE(!sf_status_.ok())) return sf_status_; \
  } while (false)

// `SF_ASSIGN_OR_RETURN(auto x, MakeX());` evaluates an absl::StatusOr<T>,
// returns its status on error and otherwise moves the value into `lhs`.
#define SF_ASSIGN_OR_RETURN(lhs, expr)                                      \
  SF_ASSIGN_OR_RETURN_IMPL_(SF_STATUS_CONCAT_(sf_statusor_, __LINE__), lhs, \
                            expr)

#define SF_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {            \
    return std::move(statusor).status();               \
  }                                                    \
  lhs = std::move(statusor).value()

// Returns an absl::Status of `code` with an absl::StrFormat message from the
// enclosing function unless `cond` holds:
//   SF_CHECK_CODE(rank == 2, absl::StatusCode::kInvalidArgument,
//                 "op %s: input %s must be a matrix", type, name);
#define SF_CHECK_CODE(cond, code, ...)                               \
  do {                                                               \
    if (ABSL_PREDICT_FALSE(!(cond))) {                               \
      return ::absl::Status((code), ::absl::StrFormat(__VA_ARGS__)); \
    }                                                                \
  } while (false)

// SF_CHECK_CODE with absl::StatusCode::kInvalidArgument, the code of most
// checks on user input.
#define SF_CHECK(cond, ...) \
  SF_CHECK_CODE(cond, ::absl::StatusCode::kInvalidArgument, __VA_ARGS__)

#endif  // SCOPEFLOW_PLATFORM_STATUS_MACROS_H_
