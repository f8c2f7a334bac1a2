// Opt-in timing of where a request's host time goes (TOPOD_PROBE_PROFILE=<file>):
// one line a request, `op=<name> <span>_us=<n> ...`, appended to that file.
// Off (the default) it costs one branch per span.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace topod::probe::profile {

inline std::FILE* sink() {
  static std::FILE* file = [] {
    const char* path = std::getenv("TOPOD_PROBE_PROFILE");
    return path && *path ? std::fopen(path, "a") : nullptr;
  }();
  return file;
}

inline std::vector<std::pair<const char*, double>>& spans() {
  static std::vector<std::pair<const char*, double>> recorded;
  return recorded;
}

// Adds its lifetime to the span `name` of the request being handled.
class Span {
 public:
  explicit Span(const char* name) : name_(sink() ? name : nullptr), began_(std::chrono::steady_clock::now()) {}
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  ~Span() {
    if (!name_) return;
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - began_).count();
    for (auto& [name, total] : spans()) {
      if (name == name_) {
        total += us;
        return;
      }
    }
    spans().emplace_back(name_, us);
  }

 private:
  const char* name_;
  std::chrono::steady_clock::time_point began_;
};

// Writes the request's spans as one line and starts the next request afresh.
inline void flush(const std::string& op) {
  std::FILE* file = sink();
  if (!file) return;
  std::fprintf(file, "op=%s", op.c_str());
  for (const auto& [name, us] : spans()) std::fprintf(file, " %s_us=%.0f", name, us);
  std::fputc('\n', file);
  std::fflush(file);
  spans().clear();
}

}  // namespace topod::probe::profile
