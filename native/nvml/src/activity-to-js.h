// ActivityState (plain C++) → JS object, on the main thread.
#pragma once

#include <napi.h>

#include "activity.h"

namespace topod::nvml {

Napi::Object activityToJs(Napi::Env env, const ActivityState& activity);

}  // namespace topod::nvml
