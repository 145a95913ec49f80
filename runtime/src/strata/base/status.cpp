#include "strata/base/status.h"

#include <charconv>

namespace strata {
namespace status_internal {
namespace {
template <typename T> void AppendNumber(std::string &out, T value) {
  // Wide enough for any 64-bit integer and the shortest form of a double.
  char text[32];
  auto [end, error] = std::to_chars(text, text + sizeof(text), value);
  if (error == std::errc())
    out.append(text, end);
}
} // namespace

void AppendSigned(std::string &out, long long value) {
  AppendNumber(out, value);
}
void AppendUnsigned(std::string &out, unsigned long long value) {
  AppendNumber(out, value);
}
void AppendFloat(std::string &out, double value) { AppendNumber(out, value); }
void AppendFloat(std::string &out, float value) { AppendNumber(out, value); }
} // namespace status_internal

void AppendToString(std::string &out, Hex hex) {
  char text[16];
  auto [end, error] = std::to_chars(text, text + sizeof(text), hex.value, 16);
  if (error == std::errc())
    out.append(text, end);
}

const char *StatusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::kOk:
    return "OK";
  case StatusCode::kCancelled:
    return "CANCELLED";
  case StatusCode::kUnknown:
    return "UNKNOWN";
  case StatusCode::kInvalidArgument:
    return "INVALID_ARGUMENT";
  case StatusCode::kDeadlineExceeded:
    return "DEADLINE_EXCEEDED";
  case StatusCode::kNotFound:
    return "NOT_FOUND";
  case StatusCode::kAlreadyExists:
    return "ALREADY_EXISTS";
  case StatusCode::kPermissionDenied:
    return "PERMISSION_DENIED";
  case StatusCode::kResourceExhausted:
    return "RESOURCE_EXHAUSTED";
  case StatusCode::kFailedPrecondition:
    return "FAILED_PRECONDITION";
  case StatusCode::kAborted:
    return "ABORTED";
  case StatusCode::kOutOfRange:
    return "OUT_OF_RANGE";
  case StatusCode::kUnimplemented:
    return "UNIMPLEMENTED";
  case StatusCode::kInternal:
    return "INTERNAL";
  case StatusCode::kUnavailable:
    return "UNAVAILABLE";
  case StatusCode::kDataLoss:
    return "DATA_LOSS";
  case StatusCode::kDeferred:
    return "DEFERRED";
  }
  return "UNKNOWN_CODE";
}

Status::Status(StatusCode code, std::string message) {
  if (code == StatusCode::kOk)
    return;
  rep_ = std::make_shared<const Rep>(Rep{code, std::move(message)});
}

Status Status::AnnotateText(std::string_view context) const {
  return Status(code(), StrCat(context, ": ", message()));
}

std::string Status::ToString() const {
  if (ok())
    return "OK";
  return StrCat(StatusCodeName(code()), ": ", message());
}

} // namespace strata
