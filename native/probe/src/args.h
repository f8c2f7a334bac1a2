// Typed reads of a request's `args` object. Every failure is a bad_request
// worded the same way: "args.<name> must be <constraint>".
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "../../common/json.hpp"
#include "probe-error.h"

namespace topod::probe {

class ArgReader {
 public:
  explicit ArgReader(const json::Value& args, std::string prefix = "args.") : args_(args), prefix_(std::move(prefix)) {
    if (!args_.is_object()) fail(prefix_.substr(0, prefix_.size() - 1), "an object");
  }

  bool has(const char* name) const { return args_.has(name); }

  // The raw value, for checks the typed reads below do not cover.
  const json::Value& value(const char* name) const {
    const json::Value* v = args_.find(name);
    if (!v) fail(name, "present");
    return *v;
  }

  // An integral number in [min, max].
  uint64_t integer(const char* name, uint64_t min, uint64_t max) const {
    const json::Value* v = args_.find(name);
    if (!v) fail(name, "present");
    return checked_integer(*v, name, min, max);
  }

  uint64_t integer_or(const char* name, uint64_t fallback, uint64_t min, uint64_t max) const {
    const json::Value* v = args_.find(name);
    return v ? checked_integer(*v, name, min, max) : fallback;
  }

  bool boolean(const char* name) const {
    const json::Value* v = args_.find(name);
    if (!v || !v->is_bool()) fail(name, "a boolean");
    return v->as_bool();
  }

  bool boolean_or(const char* name, bool fallback) const { return args_.has(name) ? boolean(name) : fallback; }

  // One of `choices`; returns its position in the list.
  size_t one_of(const char* name, std::initializer_list<const char*> choices) const {
    const json::Value* v = args_.find(name);
    std::string allowed;
    for (const char* c : choices) allowed += (allowed.empty() ? "" : ", ") + std::string(c);
    if (!v || !v->is_string()) fail(name, "one of " + allowed);
    size_t i = 0;
    for (const char* c : choices) {
      if (v->as_string() == c) return i;
      ++i;
    }
    fail(name, "one of " + allowed + " (got \"" + v->as_string() + "\")");
  }

  size_t one_of_or(const char* name, size_t fallback, std::initializer_list<const char*> choices) const {
    return args_.has(name) ? one_of(name, choices) : fallback;
  }

  const json::Value& array(const char* name) const {
    const json::Value* v = args_.find(name);
    if (!v || !v->is_array()) fail(name, "an array");
    return *v;
  }

  ArgReader object(const char* name) const {
    const json::Value* v = args_.find(name);
    if (!v || !v->is_object()) fail(name, "an object");
    return ArgReader(*v, prefix_ + name + ".");
  }

  [[noreturn]] void fail(const std::string& name, const std::string& constraint) const {
    throw ProbeFailure(ErrorCode::BadRequest, prefix_ + name + " must be " + constraint);
  }

  uint64_t checked_integer(const json::Value& v, const std::string& name, uint64_t min, uint64_t max) const {
    const std::string range = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (!v.is_number()) fail(name, range);
    const double n = v.as_number();
    if (std::floor(n) != n || n < static_cast<double>(min) || n > static_cast<double>(max)) fail(name, range);
    return static_cast<uint64_t>(n);
  }

 private:
  const json::Value& args_;
  std::string prefix_;
};

}  // namespace topod::probe
