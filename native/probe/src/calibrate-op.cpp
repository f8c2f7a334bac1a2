// calibrate: argument validation and result shape; the kernels live in calibrate.cu.
#include "args.h"
#include "calibrate.h"
#include "limits.h"
#include "registry.h"

namespace topod::probe {

namespace {

struct CalibrateSpec {
  uint32_t samples;
};

// Long enough that the global timer's coarse update step is well under 0.1 %.
constexpr uint64_t kClockSpinNs = 20'000'000;

CalibrateSpec validate_calibrate(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  const CalibrateSpec s{static_cast<uint32_t>(a.integer_or("samples", 1024, 1, limits::kMaxCalibrateSamples))};
  (void)ctx.device();
  return s;
}

json::Value run_calibrate_op(const CalibrateSpec& s, const OpContext&) {
  const Calibration c = run_calibrate(s.samples, kClockSpinNs);
  json::Value out = json::Value::object();
  out.set("clockReadOverheadCycles", c.clockReadOverheadCycles).set("smClockHz", c.smClockHz);
  return out;
}

}  // namespace

void register_calibrate(Registry& r) { r.add<CalibrateSpec>("calibrate", validate_calibrate, run_calibrate_op); }

}  // namespace topod::probe
