#include "to-js.h"

#include "js-values.h"

namespace topod::nvml {

namespace {

using namespace js;

Napi::Object placement(Napi::Env env, const Placement& p) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("start", p.start);
  out.Set("size", p.size);
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
  out.Set("memorySizeMB", value(env, p.memorySizeMB));
  out.Set("placements", listOrNull(env, p.placements, placement));
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
  out.Set("placement", orNull(env, g.placement, placement));
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
  out.Set("remoteDeviceType", value(env, l.remoteDeviceType));
  return out;
}

Napi::Object devicePair(Napi::Env env, const DevicePair& p) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("a", p.a);
  out.Set("b", p.b);
  out.Set("commonAncestor", value(env, p.commonAncestor));
  out.Set("p2pRead", value(env, p.p2pRead));
  out.Set("p2pWrite", value(env, p.p2pWrite));
  out.Set("p2pNvlink", value(env, p.p2pNvlink));
  out.Set("p2pAtomics", value(env, p.p2pAtomics));
  out.Set("degraded", strings(env, p.degraded));
  out.Set("read", p.read);
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
  out.Set("memory", orNull(env, d.memory, memory));
  out.Set("bar1", orNull(env, d.bar1, memory));
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
  out.Set("gpuInstances", listOrNull(env, d.gpuInstances, gpuInstance));
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
  out.Set("pairs", list(env, s.pairs, devicePair));
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
