// Plain C++ values → JS values, shared by the snapshot and activity converters.
// Optional values become null, so every key is always present on the JS side.
#pragma once

#include <napi.h>

#include <string>
#include <type_traits>
#include <vector>

#include "snapshot.h"

namespace topod::nvml::js {

// A string, a boolean or a number. Byte counts stay below 2^53 for any memory that exists, so a double is exact.
template <typename T>
inline Napi::Value value(Napi::Env env, const T& v) {
  if constexpr (std::is_same_v<T, std::string>)
    return Napi::String::New(env, v);
  else if constexpr (std::is_same_v<T, bool>)
    return Napi::Boolean::New(env, v);
  else
    return Napi::Number::New(env, static_cast<double>(v));
}

template <typename T, typename Convert>
Napi::Value orNull(Napi::Env env, const Opt<T>& v, Convert convert) {
  return v ? Napi::Value(convert(env, *v)) : env.Null();
}

template <typename T>
inline Napi::Value value(Napi::Env env, const Opt<T>& v) {
  return orNull(env, v, [](Napi::Env e, const T& x) { return value(e, x); });
}

template <typename T, typename Convert>
Napi::Array list(Napi::Env env, const std::vector<T>& items, Convert convert) {
  Napi::Array out = Napi::Array::New(env, items.size());
  for (size_t i = 0; i < items.size(); ++i) out.Set(i, convert(env, items[i]));
  return out;
}

template <typename T, typename Convert>
Napi::Value listOrNull(Napi::Env env, const Opt<std::vector<T>>& items, Convert convert) {
  return orNull(env, items, [&](Napi::Env e, const std::vector<T>& v) { return list(e, v, convert); });
}

inline Napi::Array strings(Napi::Env env, const std::vector<std::string>& items) {
  return list(env, items, [](Napi::Env e, const std::string& s) { return value(e, s); });
}

inline Napi::Object memory(Napi::Env env, const MemoryInfo& m) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("totalBytes", value(env, m.totalBytes));
  out.Set("usedBytes", value(env, m.usedBytes));
  out.Set("freeBytes", value(env, m.freeBytes));
  return out;
}

}  // namespace topod::nvml::js
