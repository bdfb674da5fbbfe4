// Status and Result<T>: Kiln's error model. No exception crosses the public API;
// every failure carries a classified code and a message naming the node, value or field at fault.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace kiln {

enum class StatusCode {
  kOk,
  kInvalidModel,         // malformed, truncated or inconsistent model file or graph
  kUnsupportedOperator,  // an op, domain or opset version no provider implements
  kUnsupportedTarget,    // the requested provider/ISA is not available here
  kInvalidArgument,      // bad input tensor, bad option, bad file given by the user
  kShapeGuardFailure,    // an input shape outside what the compiled plan accepts
  kAllocationFailure,
  kBackendFailure,
  kNumericalIssue,
  kIntegrityFailure,     // hash, signature or schema-version mismatch
  kNotFound,
  kInternal,
  kCancelled,            // a run ended early on request (RunOptions::terminate)
};

// Stable lower-case name of a code, used in messages, the CLI and the report ("invalid_model").
const char* status_code_name(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "<code name>: <message>", or "ok".
  std::string to_string() const;
  // Returns a copy with `context` prepended to the message ("context: message").
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Shorthand constructors: kiln::invalid_model("node 'conv1': ...").
inline Status invalid_model(std::string m) { return {StatusCode::kInvalidModel, std::move(m)}; }
inline Status unsupported_operator(std::string m) { return {StatusCode::kUnsupportedOperator, std::move(m)}; }
inline Status unsupported_target(std::string m) { return {StatusCode::kUnsupportedTarget, std::move(m)}; }
inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status integrity_failure(std::string m) { return {StatusCode::kIntegrityFailure, std::move(m)}; }
inline Status shape_guard_failure(std::string m) { return {StatusCode::kShapeGuardFailure, std::move(m)}; }
inline Status allocation_failure(std::string m) { return {StatusCode::kAllocationFailure, std::move(m)}; }
inline Status backend_failure(std::string m) { return {StatusCode::kBackendFailure, std::move(m)}; }
inline Status cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }

// Either a value or a non-ok Status.
template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : state_(std::move(status)) {}  // NOLINT: implicit on purpose

  bool is_ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace kiln

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function when `expr` is not ok.
#define KILN_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    ::kiln::Status kiln_status_ = (expr);          \
    if (!kiln_status_.is_ok()) return kiln_status_; \
  } while (0)

// `KILN_ASSIGN_OR_RETURN(auto x, make_x());` unwraps a Result or returns its Status.
#define KILN_ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL(KILN_CONCAT(kiln_result_, __LINE__), lhs, expr)
#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.is_ok()) return tmp.status();           \
  lhs = std::move(tmp).value()
