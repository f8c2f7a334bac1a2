#include "static-cache.h"

#include <algorithm>

namespace topod::nvml {

void copyStatic(const DeviceState& from, DeviceState& to) {
  for (auto member : {&DeviceState::name, &DeviceState::serial, &DeviceState::pciBusId, &DeviceState::cpuAffinity})
    to.*member = from.*member;
  for (auto member : {&DeviceState::architecture, &DeviceState::maxSmClockMHz, &DeviceState::maxMemoryClockMHz,
                      &DeviceState::memoryBusWidthBits, &DeviceState::pcieMaxGen, &DeviceState::pcieMaxWidth, &DeviceState::numaNode})
    to.*member = from.*member;
  to.profiles = from.profiles;
}

StaticCache& StaticCache::instance() {
  static StaticCache cache;
  return cache;
}

StaticFields* StaticCache::find(const std::string& uuid, const StaticKey& key, std::chrono::milliseconds maxAge, Clock::time_point now) {
  auto found = entries_.find(uuid);
  if (found == entries_.end()) return nullptr;
  const Entry& entry = found->second;
  if (!(entry.key == key) || now - entry.readAt >= maxAge) return nullptr;
  return &found->second.fields;
}

void StaticCache::store(const std::string& uuid, const StaticKey& key, StaticFields fields, Clock::time_point now) {
  entries_[uuid] = Entry{key, now, std::move(fields)};
}

void StaticCache::retainOnly(const std::vector<std::string>& uuids) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    bool present = std::find(uuids.begin(), uuids.end(), it->first) != uuids.end();
    it = present ? std::next(it) : entries_.erase(it);
  }
}

}  // namespace topod::nvml
