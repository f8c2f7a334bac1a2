// One complete read of NVML state, re-initialising NVML when the driver
// changed under a long-running session.
#pragma once

#include <string>

#include "nvml-library.h"
#include "snapshot.h"

namespace topod::nvml {

struct ReadResult {
  Outcome outcome;
  Snapshot snapshot;
};

/** Blocking (runs on a worker thread). libraryPath "" = TOPOD_NVML_LIB or the soname. */
ReadResult readSnapshot(const std::string& libraryPath);

/** Holds one reference so reads between open and close skip nvmlInit. */
Outcome openSession(const std::string& libraryPath);
void closeSession();

}  // namespace topod::nvml
