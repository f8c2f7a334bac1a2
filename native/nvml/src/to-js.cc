#include "to-js.h"

namespace topod::nvml {

namespace {

// Optional values become null, so every key is always present on the JS side.
Napi::Value value(Napi::Env env, const Opt<std::string>& v) {
  return v ? Napi::String::New(env, *v) : env.Null();
}
Napi::Value value(Napi::Env env, const Opt<unsigned>& v) {
  return v ? Napi::Number::New(env, *v) : env.Null();
}
Napi::Value value(Napi::Env env, const Opt<int>& v) {
  return v ? Napi::Number::New(env, *v) : env.Null();
}
// Byte counts stay below 2^53 for any memory that exists, so a double is exact.
Napi::Value value(Napi::Env env, const Opt<unsigned long long>& v) {
  return v ? Napi::Number::New(env, static_cast<double>(*v)) : env.Null();
}

Napi::Array strings(Napi::Env env, const std::vector<std::string>& items) {
  Napi::Array out = Napi::Array::New(env, items.size());
  for (size_t i = 0; i < items.size(); ++i) out.Set(i, Napi::String::New(env, items[i]));
  return out;
}

template <typename T, typename Convert>
Napi::Array list(Napi::Env env, const std::vector<T>& items, Convert convert) {
  Napi::Array out = Napi::Array::New(env, items.size());
  for (size_t i = 0; i < items.size(); ++i) out.Set(i, convert(env, items[i]));
  return out;
}

Napi::Object placement(Napi::Env env, const Placement& p) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("start", p.start);
  out.Set("size", p.size);
  return out;
}

Napi::Value memory(Napi::Env env, const Opt<MemoryInfo>& m) {
  if (!m) return env.Null();
  Napi::Object out = Napi::Object::New(env);
  out.Set("totalBytes", static_cast<double>(m->totalBytes));
  out.Set("usedBytes", static_cast<double>(m->usedBytes));
  out.Set("freeBytes", static_cast<double>(m->freeBytes));
  return out;
}

Napi::Object profile(Napi::Env env, const GpuInstanceProfile& p) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("profileIndex", p.profileIndex);
  out.Set("id", p.id);
  out.Set("name", p.name);
  out.Set("sliceCount", p.sliceCount);
  out.Set("instanceCount", p.instanceCount);
  out.Set("multiprocessorCount", p.multiprocessorCount);
  out.Set("copyEngineCount", p.copyEngineCount);
  out.Set("memorySizeMB", static_cast<double>(p.memorySizeMB));
  out.Set("placements", p.placements ? Napi::Value(list(env, *p.placements, placement)) : env.Null());
  return out;
}

Napi::Object computeInstance(Napi::Env env, const ComputeInstance& c) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("id", c.id);
  out.Set("profileId", value(env, c.profileId));
  out.Set("multiprocessorCount", value(env, c.multiprocessorCount));
  out.Set("sliceCount", value(env, c.sliceCount));
  return out;
}

Napi::Object gpuInstance(Napi::Env env, const GpuInstance& g) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("id", g.id);
  out.Set("profileId", g.profileId);
  out.Set("placement", g.placement ? Napi::Value(placement(env, *g.placement)) : env.Null());
  out.Set("computeInstances", list(env, g.computeInstances, computeInstance));
  return out;
}

Napi::Object migDevice(Napi::Env env, const MigDevice& m) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("index", m.index);
  out.Set("uuid", value(env, m.uuid));
  out.Set("gpuInstanceId", value(env, m.gpuInstanceId));
  out.Set("computeInstanceId", value(env, m.computeInstanceId));
  out.Set("multiprocessorCount", value(env, m.multiprocessorCount));
  out.Set("memorySizeMB", value(env, m.memorySizeMB));
  out.Set("gpuInstanceSliceCount", value(env, m.gpuInstanceSliceCount));
  out.Set("computeInstanceSliceCount", value(env, m.computeInstanceSliceCount));
  out.Set("sharedCopyEngineCount", value(env, m.sharedCopyEngineCount));
  out.Set("degraded", strings(env, m.degraded));
  return out;
}

Napi::Object nvlink(Napi::Env env, const NvLink& l) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("link", l.link);
  out.Set("remotePciBusId", value(env, l.remotePciBusId));
  return out;
}

Napi::Object device(Napi::Env env, const DeviceState& d) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("index", d.index);
  out.Set("uuid", value(env, d.uuid));
  out.Set("name", value(env, d.name));
  out.Set("serial", value(env, d.serial));
  out.Set("pciBusId", value(env, d.pciBusId));
  out.Set("architecture", value(env, d.architecture));
  out.Set("memory", memory(env, d.memory));
  out.Set("bar1", memory(env, d.bar1));
  out.Set("maxSmClockMHz", value(env, d.maxSmClockMHz));
  out.Set("maxMemoryClockMHz", value(env, d.maxMemoryClockMHz));
  out.Set("memoryBusWidthBits", value(env, d.memoryBusWidthBits));
  out.Set("pcieCurrentGen", value(env, d.pcieCurrentGen));
  out.Set("pcieMaxGen", value(env, d.pcieMaxGen));
  out.Set("pcieCurrentWidth", value(env, d.pcieCurrentWidth));
  out.Set("pcieMaxWidth", value(env, d.pcieMaxWidth));
  out.Set("numaNode", value(env, d.numaNode));
  out.Set("cpuAffinity", value(env, d.cpuAffinity));
  out.Set("nvlinks", list(env, d.nvlinks, nvlink));
  out.Set("migModeCurrent", value(env, d.migModeCurrent));
  out.Set("migModePending", value(env, d.migModePending));
  out.Set("profiles", list(env, d.profiles, profile));
  out.Set("gpuInstances", d.gpuInstances ? Napi::Value(list(env, *d.gpuInstances, gpuInstance)) : env.Null());
  out.Set("migDevices", list(env, d.migDevices, migDevice));
  out.Set("degraded", strings(env, d.degraded));
  out.Set("staticRead", d.staticRead);
  out.Set("readMicros", d.readMicros);
  return out;
}

}  // namespace

Napi::Object snapshotToJs(Napi::Env env, const Snapshot& s) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("libraryPath", s.libraryPath);
  out.Set("driverVersion", value(env, s.driverVersion));
  out.Set("cudaDriverVersion", value(env, s.cudaDriverVersion));
  out.Set("deviceCount", s.deviceCount);
  out.Set("devices", list(env, s.devices, device));
  out.Set("degraded", strings(env, s.degraded));
  out.Set("reinitCount", s.reinitCount);
  out.Set("readMicros", s.readMicros);
  return out;
}

Napi::Error outcomeToError(Napi::Env env, const Outcome& outcome, const std::string& libraryPath) {
  Napi::Error error = Napi::Error::New(env, outcome.message);
  error.Set("code", outcome.code);
  error.Set("stage", outcome.stage);
  error.Set("nvmlLibrary", libraryPath);
  return error;
}

}  // namespace topod::nvml
