// What a steady-state poll does not ask NVML again: per device UUID, the
// fields that only change with the driver, the NVML session or the MIG mode
// (identity, limits, the GPU-instance profile table with its placements, and
// the compute-instance profiles of each GPU-instance profile). Querying the
// profile table alone costs ~0.6 ms per index on an H100 (580 driver).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "snapshot.h"

namespace topod::nvml {

// Fields fixed until the key changes could be cached forever; re-reading them
// every few minutes bounds the staleness of anything NVML changes without a
// sign we watch (a device reset, an administrator's driver setting) for the
// price of one full read (~12 ms per H100) per interval.
constexpr std::chrono::milliseconds kStaticRefreshInterval = std::chrono::minutes(5);

struct ComputeProfile {
  unsigned id = 0;
  unsigned sliceCount = 0;
  unsigned instanceCount = 0;
  unsigned multiprocessorCount = 0;
};

/** The compute-instance profiles a GPU instance of one profile offers, and the refusals met reading them. */
struct ComputeProfileTable {
  std::vector<ComputeProfile> profiles;
  std::vector<std::string> degraded;
};

struct StaticFields {
  /** Holds the static members only (copyStatic); the rest stays default. */
  DeviceState values;
  // The degraded entries each group of reads recorded, replayed at the same
  // place by a cached read so its snapshot equals a full one.
  std::vector<std::string> identityDegraded;
  std::vector<std::string> limitsDegraded;
  std::vector<std::string> profilesDegraded;
  /** By GPU-instance profile id; filled as instances of a profile show up. */
  std::map<unsigned, ComputeProfileTable> computeProfiles;
};

/**
 * Copies the static members of a DeviceState: name, serial, PCI bus id,
 * architecture, max clocks, bus width, max PCIe gen/width, NUMA node, CPU
 * affinity and the GPU-instance profile table.
 */
void copyStatic(const DeviceState& from, DeviceState& to);

/** What must be unchanged for cached static fields to hold. */
struct StaticKey {
  /** Library::loadCount(): a new load or re-initialisation invalidates every entry. */
  unsigned libraryLoad = 0;
  Opt<std::string> driverVersion;
  Opt<unsigned> migModeCurrent;
  Opt<unsigned> migModePending;

  bool operator==(const StaticKey& other) const {
    return libraryLoad == other.libraryLoad && driverVersion == other.driverVersion && migModeCurrent == other.migModeCurrent &&
           migModePending == other.migModePending;
  }
};

/** Process-wide; every use happens under Library::mutex(). */
class StaticCache {
 public:
  using Clock = std::chrono::steady_clock;

  /** The entry for uuid when its key matches and it is younger than maxAge, else nullptr. */
  StaticFields* find(const std::string& uuid, const StaticKey& key, std::chrono::milliseconds maxAge, Clock::time_point now);
  void store(const std::string& uuid, const StaticKey& key, StaticFields fields, Clock::time_point now);
  /** Forgets devices no longer present. */
  void retainOnly(const std::vector<std::string>& uuids);

  static StaticCache& instance();

 private:
  struct Entry {
    StaticKey key;
    Clock::time_point readAt;
    StaticFields fields;
  };
  std::map<std::string, Entry> entries_;
};

}  // namespace topod::nvml
