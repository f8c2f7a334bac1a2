// One GPU's activity (activity.h), read as one blocking call on a worker thread.
#pragma once

#include <string>

#include "activity.h"
#include "nvml-library.h"

namespace topod::nvml {

struct ActivityOptions {
  /** "" = TOPOD_NVML_LIB or the soname. */
  std::string libraryPath;
  /** The GPU: by UUID (a physical GPU's, "GPU-…") or else by NVML index. */
  Opt<std::string> uuid;
  Opt<unsigned> index;
};

struct ActivityResult {
  Outcome outcome;
  ActivityState activity;
};

/** Blocking. A GPU that is not there fails with TOPOD_NVML_GPU_NOT_FOUND; a refused field only degrades. */
ActivityResult readActivity(const ActivityOptions& options);

}  // namespace topod::nvml
