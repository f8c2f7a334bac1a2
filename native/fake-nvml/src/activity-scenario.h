// Scenario keys of a GPU's activity: processes, utilization, temperature,
// power, clocks and their event reasons, persistence and ECC mode.
#pragma once

#include <vector>

#include "json.hpp"
#include "scenario.h"

namespace topod::fake {

/** `processes: [{ pid, usedMemoryBytes?, type? }]` of a GPU, GPU instance or compute instance; absent: none. */
std::vector<FakeProcess> parseProcesses(const json::Value& object);

/** The device's activity keys, defaulting to an idle GPU; maxMemoryClockMHz seeds the current memory clock. */
FakeActivity parseActivity(const json::Value& device, Opt<unsigned> maxMemoryClockMHz);

}  // namespace topod::fake
