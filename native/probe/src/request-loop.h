// One request line in, one response line out (server/protocol/ops.ts).
#pragma once

#include <string>
#include <string_view>

#include "registry.h"

namespace topod::probe {

struct Reply {
  std::string line;  // the JSON response, without the newline
  bool fatal;        // a kernel fault: the context is gone, the process should exit
};

// Never throws: every failure becomes an error response.
Reply handle_request(const Registry& registry, const OpContext& ctx, std::string_view line);

// The id of a request line, when it has a valid one (used by the watchdog's timeout reply).
json::Value request_id(std::string_view line);

std::string error_line(const json::Value& id, ErrorCode code, const std::string& message);

}  // namespace topod::probe
