// Snapshot (plain C++) → JS object, on the main thread.
#pragma once

#include <napi.h>

#include "nvml-library.h"
#include "snapshot.h"

namespace topod::nvml {

Napi::Object snapshotToJs(Napi::Env env, const Snapshot& snapshot);

/** An Error with .code, .stage and .nvmlLibrary for a failed load/init/read. */
Napi::Error outcomeToError(Napi::Env env, const Outcome& outcome, const std::string& libraryPath);

}  // namespace topod::nvml
