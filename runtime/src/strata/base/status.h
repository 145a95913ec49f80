// Status and Result: the error model of the whole runtime. No exceptions cross
// any runtime API; every fallible call returns one of these.
#ifndef STRATA_BASE_STATUS_H_
#define STRATA_BASE_STATUS_H_

#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace strata {

enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kDeferred = 16, // Not an error: the operation will complete later.
};

const char *StatusCodeName(StatusCode code);

namespace status_internal {
void AppendSigned(std::string &out, long long value);
void AppendUnsigned(std::string &out, unsigned long long value);
// Shortest text that reads back as the same value.
void AppendFloat(std::string &out, double value);
void AppendFloat(std::string &out, float value);

template <typename T> void AppendPiece(std::string &out, const T &piece) {
  if constexpr (std::is_same_v<T, bool>) {
    out += piece ? "true" : "false";
  } else if constexpr (std::is_same_v<T, char>) {
    out.push_back(piece);
  } else if constexpr (std::is_enum_v<T>) {
    AppendPiece(out, std::underlying_type_t<T>(piece));
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    AppendSigned(out, piece);
  } else if constexpr (std::is_integral_v<T>) {
    AppendUnsigned(out, piece);
  } else if constexpr (std::is_floating_point_v<T>) {
    AppendFloat(
        out,
        std::conditional_t<std::is_same_v<T, float>, float, double>(piece));
  } else if constexpr (requires { AppendToString(out, piece); }) {
    // A type that formats itself (found by argument-dependent lookup), so
    // it can be passed around unformatted until an error needs its text.
    AppendToString(out, piece);
  } else {
    static_assert(std::is_convertible_v<const T &, std::string_view>,
                  "StrCat takes text, characters, numbers and enums");
    out.append(std::string_view(piece));
  }
}
} // namespace status_internal

// An unsigned number that StrCat writes in hexadecimal digits (no prefix).
struct Hex {
  uint64_t value;
};
void AppendToString(std::string &out, Hex hex);

// Concatenates text, numbers and types with an AppendToString(std::string &,
// const T &) overload into one string. Formats without iostreams, so the
// runtime links none; 8-bit integers print as numbers.
template <typename... Args> std::string StrCat(const Args &...args) {
  std::string out;
  (status_internal::AppendPiece(out, args), ...);
  return out;
}

// A status is OK (no allocation) or carries a code and a message.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  std::string_view message() const {
    return rep_ ? std::string_view(rep_->message) : std::string_view();
  }

  // Adds context in front of the message ("while doing X: <message>"), the
  // StrCat of `context`, which is formatted only when the status failed.
  // An OK status stays OK.
  template <typename... Args> Status Annotate(const Args &...context) const {
    if (ok())
      return *this;
    return AnnotateText(StrCat(context...));
  }

  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  // Marks that the caller deliberately drops this status.
  void IgnoreError() const {}

private:
  Status AnnotateText(std::string_view context) const;

  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;
};

inline Status OkStatus() { return Status(); }

#define STRATA_DECLARE_STATUS_CTOR(Name, Code)                                 \
  template <typename... Args> Status Name(const Args &...args) {               \
    return Status(StatusCode::Code, StrCat(args...));                          \
  }
STRATA_DECLARE_STATUS_CTOR(CancelledError, kCancelled)
STRATA_DECLARE_STATUS_CTOR(UnknownError, kUnknown)
STRATA_DECLARE_STATUS_CTOR(InvalidArgumentError, kInvalidArgument)
STRATA_DECLARE_STATUS_CTOR(DeadlineExceededError, kDeadlineExceeded)
STRATA_DECLARE_STATUS_CTOR(NotFoundError, kNotFound)
STRATA_DECLARE_STATUS_CTOR(AlreadyExistsError, kAlreadyExists)
STRATA_DECLARE_STATUS_CTOR(PermissionDeniedError, kPermissionDenied)
STRATA_DECLARE_STATUS_CTOR(ResourceExhaustedError, kResourceExhausted)
STRATA_DECLARE_STATUS_CTOR(FailedPreconditionError, kFailedPrecondition)
STRATA_DECLARE_STATUS_CTOR(AbortedError, kAborted)
STRATA_DECLARE_STATUS_CTOR(OutOfRangeError, kOutOfRange)
STRATA_DECLARE_STATUS_CTOR(UnimplementedError, kUnimplemented)
STRATA_DECLARE_STATUS_CTOR(InternalError, kInternal)
STRATA_DECLARE_STATUS_CTOR(UnavailableError, kUnavailable)
STRATA_DECLARE_STATUS_CTOR(DataLossError, kDataLoss)
#undef STRATA_DECLARE_STATUS_CTOR

// Either a value or a non-OK status.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "Result constructed from an OK status");
    if (status_.ok())
      status_ = InternalError("Result constructed from an OK status");
  }

  bool ok() const { return status_.ok(); }
  const Status &status() const { return status_; }

  T &value() & { return *value_; }
  const T &value() const & { return *value_; }
  T &&value() && { return std::move(*value_); }
  T &operator*() & { return *value_; }
  T &&operator*() && { return std::move(*value_); }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  Status status_;
  std::optional<T> value_;
};

#define STRATA_STATUS_CONCAT_INNER(a, b) a##b
#define STRATA_STATUS_CONCAT(a, b) STRATA_STATUS_CONCAT_INNER(a, b)

#define STRATA_RETURN_IF_ERROR(expr)                                           \
  do {                                                                         \
    ::strata::Status _strata_status = (expr);                                  \
    if (!_strata_status.ok())                                                  \
      return _strata_status;                                                   \
  } while (false)

#define STRATA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                           \
  auto tmp = (expr);                                                           \
  if (!tmp.ok())                                                               \
    return tmp.status();                                                       \
  lhs = std::move(tmp).value()

// STRATA_ASSIGN_OR_RETURN(auto x, MakeX());
#define STRATA_ASSIGN_OR_RETURN(lhs, expr)                                     \
  STRATA_ASSIGN_OR_RETURN_IMPL(                                                \
      STRATA_STATUS_CONCAT(_strata_result_, __LINE__), lhs, expr)

} // namespace strata

#endif // STRATA_BASE_STATUS_H_
