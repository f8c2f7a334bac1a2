#include "request-loop.h"

#include <cmath>
#include <exception>

#include "profile.h"

namespace topod::probe {

namespace {

bool is_valid_id(const json::Value* id) {
  return id && id->is_number() && std::floor(id->as_number()) == id->as_number() && id->as_number() >= 0 &&
         id->as_number() <= 9007199254740991.0;
}

}  // namespace

std::string error_line(const json::Value& id, ErrorCode code, const std::string& message) {
  json::Value error = json::Value::object();
  error.set("code", error_code_name(code)).set("message", message);
  json::Value out = json::Value::object();
  out.set("id", id).set("ok", false).set("error", error);
  return json::dump(out);
}

json::Value request_id(std::string_view line) {
  try {
    const json::Value request = json::parse(line);
    const json::Value* id = request.find("id");
    return is_valid_id(id) ? *id : json::Value(nullptr);
  } catch (const std::exception&) {
    return json::Value(nullptr);
  }
}

Reply handle_request(const Registry& registry, const OpContext& ctx, std::string_view line) {
  json::Value id(nullptr);
  try {
    json::Value request;
    try {
      request = json::parse(line);
    } catch (const json::ParseError& e) {
      return {error_line(id, ErrorCode::BadRequest, std::string("malformed JSON: ") + e.what()), false};
    }
    if (!request.is_object()) return {error_line(id, ErrorCode::BadRequest, "a request must be a JSON object"), false};
    if (!is_valid_id(request.find("id"))) return {error_line(id, ErrorCode::BadRequest, "id must be a non-negative integer"), false};
    id = request.get("id");
    const json::Value* op = request.find("op");
    if (!op || !op->is_string()) return {error_line(id, ErrorCode::BadRequest, "op must be a string"), false};
    const Operation* operation = registry.find(op->as_string());
    if (!operation) return {error_line(id, ErrorCode::UnknownOp, "unknown op \"" + op->as_string() + "\""), false};
    const json::Value* args = request.find("args");
    const json::Value noArgs = json::Value::object();

    std::any spec;
    {
      const profile::Span span("validate");
      spec = operation->validate(args ? *args : noArgs, ctx);
    }
    json::Value result;
    {
      const profile::Span span("run");
      result = operation->run(spec, ctx);
    }
    json::Value out = json::Value::object();
    out.set("id", id).set("ok", true).set("result", result);
    Reply reply{"", false};
    {
      const profile::Span span("encode");
      reply.line = json::dump(out);
    }
    profile::flush(op->as_string());
    return reply;
  } catch (const ProbeFailure& e) {
    return {error_line(id, e.code(), e.what()), e.code() == ErrorCode::KernelFault};
  } catch (const json::TypeError& e) {
    return {error_line(id, ErrorCode::BadRequest, e.what()), false};
  } catch (const std::bad_alloc&) {
    return {error_line(id, ErrorCode::OutOfMemory, "host memory exhausted"), false};
  } catch (const std::exception& e) {
    return {error_line(id, ErrorCode::Internal, e.what()), false};
  }
}

}  // namespace topod::probe
