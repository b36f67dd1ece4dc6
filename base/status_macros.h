// Early-return helpers for absl::Status / absl::StatusOr, as Abseil's own
// (unexported) macros do. Kept tiny so every module can use them.
#ifndef PROFCPU_BASE_STATUS_MACROS_H_
#define PROFCPU_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PROFCPU_CONCAT_INNER_(a, b) a##b
#define PROFCPU_CONCAT_(a, b) PROFCPU_CONCAT_INNER_(a, b)

#define PROFCPU_RETURN_IF_ERROR(expr)              \
  do {                                             \
    if (absl::Status _status = (expr); !_status.ok()) \
      return _status;                              \
  } while (0)

#define PROFCPU_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#define PROFCPU_ASSIGN_OR_RETURN(lhs, expr) \
  PROFCPU_ASSIGN_OR_RETURN_IMPL_(PROFCPU_CONCAT_(_statusor_, __LINE__), lhs, expr)

#endif  // PROFCPU_BASE_STATUS_MACROS_H_
