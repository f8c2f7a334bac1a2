#include "activity-to-js.h"

#include "js-values.h"

namespace topod::nvml {

namespace {

using namespace js;

Napi::Object process(Napi::Env env, const ProcessEntry& p) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("pid", p.pid);
  out.Set("usedMemoryBytes", value(env, p.usedMemoryBytes));
  out.Set("gpuInstanceId", value(env, p.gpuInstanceId));
  out.Set("computeInstanceId", value(env, p.computeInstanceId));
  return out;
}

Napi::Object processLists(Napi::Env env, const ProcessLists& lists) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("compute", listOrNull(env, lists.compute, process));
  out.Set("graphics", listOrNull(env, lists.graphics, process));
  return out;
}

Napi::Object sample(Napi::Env env, const UtilizationSample& s) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("timestampMicros", value(env, s.timestampMicros));
  out.Set("percent", s.percent);
  return out;
}

Napi::Object migActivity(Napi::Env env, const MigActivity& m) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("index", m.index);
  out.Set("uuid", value(env, m.uuid));
  out.Set("processes", processLists(env, m.processes));
  out.Set("degraded", strings(env, m.degraded));
  return out;
}

}  // namespace

Napi::Object activityToJs(Napi::Env env, const ActivityState& a) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("index", a.index);
  out.Set("uuid", value(env, a.uuid));
  out.Set("processes", processLists(env, a.processes));
  out.Set("utilizationGpuPercent", value(env, a.utilizationGpuPercent));
  out.Set("utilizationMemoryPercent", value(env, a.utilizationMemoryPercent));
  out.Set("utilizationSamples", listOrNull(env, a.utilizationSamples, sample));
  out.Set("memory", orNull(env, a.memory, memory));
  out.Set("temperatureC", value(env, a.temperatureC));
  out.Set("powerMilliwatts", value(env, a.powerMilliwatts));
  out.Set("smClockMHz", value(env, a.smClockMHz));
  out.Set("maxSmClockMHz", value(env, a.maxSmClockMHz));
  // The known bits end at 0x100: a double holds any mask a driver sets today exactly.
  out.Set("clocksEventReasons", value(env, a.clocksEventReasons));
  out.Set("persistenceMode", value(env, a.persistenceMode));
  out.Set("eccModeCurrent", value(env, a.eccModeCurrent));
  out.Set("eccModePending", value(env, a.eccModePending));
  out.Set("migModeCurrent", value(env, a.migModeCurrent));
  out.Set("migDevices", list(env, a.migDevices, migActivity));
  out.Set("degraded", strings(env, a.degraded));
  out.Set("libraryPath", a.libraryPath);
  out.Set("reinitCount", a.reinitCount);
  out.Set("readMicros", a.readMicros);
  return out;
}

}  // namespace topod::nvml
