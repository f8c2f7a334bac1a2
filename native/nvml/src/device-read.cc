#include "device-read.h"

#include "device-reader.h"
#include "field-log.h"
#include "mig-reader.h"

namespace topod::nvml {

// The groups run in one fixed order whether the static ones are read or
// cached, and a cached group replays the degraded entries it recorded at the
// same place: a cached snapshot equals a full read of the same state.
void readDevice(const Api& api, nvmlDevice_t handle, const StaticPolicy& policy, StaticCache& cache, DeviceState& device) {
  FieldLog log(device.degraded);
  device.uuid = readUuid(api, log, handle);
  // The mode is part of the cache key, so it is read first; its refusal is
  // recorded below, where a full read has always listed it.
  unsigned current = 0;
  unsigned pending = 0;
  nvmlReturn_t modeCode = invoke(api.deviceGetMigMode, handle, &current, &pending);
  if (isSessionLost(modeCode)) throw SessionLost{modeCode};
  StaticKey key = policy.base;
  if (modeCode == NVML_SUCCESS) {
    key.migModeCurrent = current;
    key.migModePending = pending;
  }
  StaticFields* cached = device.uuid ? cache.find(*device.uuid, key, policy.maxAge, policy.now) : nullptr;
  StaticFields fresh;
  StaticFields& fields = cached ? *cached : fresh;
  device.staticRead = !cached;
  FieldLog staticLog(device.degraded);
  auto group = [&](std::vector<std::string>& recorded, auto read) {
    if (cached) return log.replay(recorded);
    const size_t before = device.degraded.size();
    read();
    recorded.assign(device.degraded.begin() + static_cast<std::ptrdiff_t>(before), device.degraded.end());
  };

  group(fields.identityDegraded, [&] { readIdentity(api, staticLog, handle, device); });
  readUsage(api, log, handle, device);
  group(fields.limitsDegraded, [&] { readLimits(api, staticLog, handle, device); });
  readLinks(api, log, handle, device);
  if (log.check(modeCode, "migMode")) {
    device.migModeCurrent = current;
    device.migModePending = pending;
    group(fields.profilesDegraded, [&] { device.profiles = readMigProfiles(api, staticLog, handle); });
  }
  if (cached) copyStatic(cached->values, device);
  readMigInstances(api, log, handle, modeCode, fields.computeProfiles, device);
  // A field refused for a passing reason (TIMEOUT, UNKNOWN) is asked again next poll.
  if (cached || !device.uuid || staticLog.sawTransient()) return;
  copyStatic(device, fresh.values);
  cache.store(*device.uuid, key, std::move(fresh), policy.now);
}

}  // namespace topod::nvml
