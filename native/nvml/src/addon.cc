// topod_nvml: live NVML/MIG state for the daemon. Registration only.
#include <napi.h>

#include "workers.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("read", Napi::Function::New(env, topod::nvml::Read, "read"));
  exports.Set("readActivity", Napi::Function::New(env, topod::nvml::ReadActivity, "readActivity"));
  exports.Set("open", Napi::Function::New(env, topod::nvml::Open, "open"));
  exports.Set("close", Napi::Function::New(env, topod::nvml::Close, "close"));
  exports.Set("status", Napi::Function::New(env, topod::nvml::Status, "status"));
  return exports;
}

}  // namespace

NODE_API_MODULE(topod_nvml, Init)
