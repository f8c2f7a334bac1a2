// One complete read of NVML state, re-initialising NVML when the driver
// changed under a long-running session.
#pragma once

#include <chrono>
#include <string>

#include "nvml-library.h"
#include "snapshot.h"
#include "static-cache.h"

namespace topod::nvml {

struct ReadResult {
  Outcome outcome;
  Snapshot snapshot;
};

struct ReadOptions {
  /** "" = TOPOD_NVML_LIB or the soname. */
  std::string libraryPath;
  /** How old cached static fields may be; 0 reads everything afresh. */
  std::chrono::milliseconds staticMaxAge = kStaticRefreshInterval;
};

/** Blocking (runs on a worker thread). */
ReadResult readSnapshot(const ReadOptions& options);

/** Holds one reference so reads between open and close skip nvmlInit. */
Outcome openSession(const std::string& libraryPath);
void closeSession();

}  // namespace topod::nvml
