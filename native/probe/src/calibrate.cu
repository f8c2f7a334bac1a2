#include "calibrate.h"

#include <algorithm>
#include <vector>

#include "device-ops.h"
#include "runtime.h"

namespace topod::probe {

namespace {

__global__ void clock_overhead_kernel(uint32_t* deltas, uint32_t samples) {
#pragma unroll 1
  for (uint32_t k = 0; k < samples; ++k) {
    const uint32_t t0 = ops::clock32();
    const uint32_t t1 = ops::clock32();
    deltas[k] = t1 - t0;
  }
}

// Spins for `spinNs` of global time and reports the SM cycles and nanoseconds that passed.
__global__ void clock_rate_kernel(uint64_t spinNs, unsigned long long* out) {
  const uint64_t ns0 = ops::globaltimer_ns();
  const uint64_t c0 = ops::clock64();
  uint64_t ns1 = ns0;
  while (ns1 - ns0 < spinNs) ns1 = ops::globaltimer_ns();
  const uint64_t c1 = ops::clock64();
  out[0] = c1 - c0;
  out[1] = ns1 - ns0;
}

}  // namespace

Calibration run_calibrate(uint32_t samples, uint64_t spinNs) {
  DeviceBuffer<uint32_t> deltas(samples);
  clock_overhead_kernel<<<1, 1>>>(deltas.get(), samples);
  check_launch("clock_overhead_kernel");
  std::vector<uint32_t> host(samples);
  deltas.download(host.data(), samples);
  std::sort(host.begin(), host.end());

  DeviceBuffer<unsigned long long> span(2);
  clock_rate_kernel<<<1, 1>>>(spinNs, span.get());
  check_launch("clock_rate_kernel");
  unsigned long long cyclesAndNs[2] = {0, 0};
  span.download(cyclesAndNs, 2);

  Calibration c{};
  // Median; the mean of the two middle values for an even count.
  c.clockReadOverheadCycles = samples % 2 ? host[samples / 2] : (host[samples / 2 - 1] + host[samples / 2]) / 2.0;
  c.smClockHz = cyclesAndNs[1] ? static_cast<double>(cyclesAndNs[0]) * 1e9 / static_cast<double>(cyclesAndNs[1]) : 0.0;
  return c;
}

}  // namespace topod::probe
