// Names and formatting of kiln::Status codes.
#include "kiln/status.h"

namespace kiln {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidModel: return "invalid_model";
    case StatusCode::kUnsupportedOperator: return "unsupported_operator";
    case StatusCode::kUnsupportedTarget: return "unsupported_target";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kShapeGuardFailure: return "shape_guard_failure";
    case StatusCode::kAllocationFailure: return "allocation_failure";
    case StatusCode::kBackendFailure: return "backend_failure";
    case StatusCode::kNumericalIssue: return "numerical_issue";
    case StatusCode::kIntegrityFailure: return "integrity_failure";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kCancelled: return "cancelled";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (is_ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace kiln
