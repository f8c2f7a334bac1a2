// Errors a probe operation ends with. Codes are the protocol's ProbeErrorCode
// (server/protocol/ops.ts); messages say which argument or call failed.
#pragma once

#include <stdexcept>
#include <string>

namespace topod::probe {

enum class ErrorCode { BadRequest, UnknownOp, OutOfMemory, KernelFault, Timeout, Unsupported, Internal };

inline const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::BadRequest:
      return "bad_request";
    case ErrorCode::UnknownOp:
      return "unknown_op";
    case ErrorCode::OutOfMemory:
      return "out_of_memory";
    case ErrorCode::KernelFault:
      return "kernel_fault";
    case ErrorCode::Timeout:
      return "timeout";
    case ErrorCode::Unsupported:
      return "unsupported";
    case ErrorCode::Internal:
      return "internal";
  }
  return "internal";
}

class ProbeFailure : public std::runtime_error {
 public:
  ProbeFailure(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace topod::probe
