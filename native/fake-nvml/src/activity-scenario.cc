#include "activity-scenario.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace topod::fake {

namespace {

// An idle, persistence-mode H100 as nvidia-smi shows it between jobs.
constexpr unsigned kIdleTemperatureC = 33;
constexpr unsigned kIdlePowerMilliwatts = 72000;
constexpr unsigned kIdleSmClockMHz = 345;
constexpr unsigned kIdleSampleCount = 12;

// nvmlClocksEventReason* bits by the names server/dynamic decodes them to.
constexpr std::pair<const char*, unsigned long long> kEventReasons[] = {
    {"gpu-idle", NVML_CLOCKS_EVENT_REASON_GPU_IDLE},
    {"applications-clocks-setting", NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS_SETTING},
    {"sw-power-cap", NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP},
    {"hw-slowdown", NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN},
    {"sync-boost", NVML_CLOCKS_EVENT_REASON_SYNC_BOOST},
    {"sw-thermal-slowdown", NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN},
    {"hw-thermal-slowdown", NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN},
    {"hw-power-brake-slowdown", NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN},
    {"display-clock-setting", NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCK_SETTING},
};

unsigned long long nonNegative(const json::Value& v, const std::string& key) {
  double n = v.as_number();
  if (n < 0 || std::floor(n) != n) throw std::runtime_error(key + " must be a non-negative integer");
  return static_cast<unsigned long long>(n);
}

double percent(const json::Value& v, const std::string& key) {
  double n = v.as_number();
  if (n < 0 || n > 100) throw std::runtime_error(key + " must be a percentage (0-100)");
  return n;
}

/** Absent → the idle value; JSON null → nullopt (the query answers NOT_SUPPORTED); else parsed. */
template <typename T, typename Parse>
Opt<T> orIdle(const json::Value& object, const char* key, Opt<T> idle, Parse parse) {
  const json::Value* v = object.find(key);
  if (!v) return idle;
  if (v->is_null()) return std::nullopt;
  return parse(*v);
}

Opt<unsigned> unsignedOrIdle(const json::Value& object, const char* key, Opt<unsigned> idle) {
  return orIdle<unsigned>(object, key, idle, [&](const json::Value& v) { return static_cast<unsigned>(nonNegative(v, key)); });
}

Opt<bool> boolOrIdle(const json::Value& object, const char* key, bool idle) {
  return orIdle<bool>(object, key, idle, [](const json::Value& v) { return v.as_bool(); });
}

unsigned long long eventReasons(const json::Value& v) {
  if (v.is_number()) return nonNegative(v, "clocksEventReasons");
  unsigned long long mask = 0;
  for (const auto& item : v.as_array()) {
    bool known = false;
    for (auto [name, bit] : kEventReasons)
      if (item.as_string() == name) {
        mask |= bit;
        known = true;
      }
    if (!known) throw std::runtime_error("unknown clocks event reason \"" + item.as_string() + "\"");
  }
  return mask;
}

FakeProcess parseProcess(const json::Value& v) {
  FakeProcess p;
  p.pid = static_cast<unsigned>(nonNegative(v.get("pid"), "processes[].pid"));
  if (const json::Value* memory = v.find("usedMemoryBytes"); memory && !memory->is_null())
    p.usedMemoryBytes = nonNegative(*memory, "processes[].usedMemoryBytes");
  const json::Value* type = v.find("type");
  const std::string kind = (type && !type->is_null()) ? type->as_string() : "compute";
  if (kind != "compute" && kind != "graphics" && kind != "compute+graphics")
    throw std::runtime_error("processes[].type must be compute, graphics or compute+graphics, not \"" + kind + "\"");
  p.compute = kind != "graphics";
  p.graphics = kind != "compute";
  return p;
}

}  // namespace

std::vector<FakeProcess> parseProcesses(const json::Value& object) {
  std::vector<FakeProcess> out;
  const json::Value* list = object.find("processes");
  if (!list || list->is_null()) return out;
  for (const auto& item : list->as_array()) out.push_back(parseProcess(item));
  return out;
}

FakeActivity parseActivity(const json::Value& device, Opt<unsigned> maxMemoryClockMHz) {
  FakeActivity a;
  a.processes = parseProcesses(device);
  const json::Value* utilization = device.find("utilization");
  if (!utilization) {
    a.utilizationPercent = std::make_pair(0U, 0U);
    a.utilizationSamples = std::vector<double>(kIdleSampleCount, 0.0);
  } else if (!utilization->is_null()) {
    const json::Value* gpu = utilization->find("gpuPercent");
    const json::Value* memory = utilization->find("memoryPercent");
    const double gpuPercent = gpu ? percent(*gpu, "utilization.gpuPercent") : 0;
    a.utilizationPercent = std::make_pair(static_cast<unsigned>(std::lround(gpuPercent)),
                                          memory ? static_cast<unsigned>(std::lround(percent(*memory, "utilization.memoryPercent"))) : 0U);
    a.utilizationSamples =
        orIdle<std::vector<double>>(*utilization, "samples", std::vector<double>(kIdleSampleCount, gpuPercent), [](const json::Value& v) {
          std::vector<double> samples;
          for (const auto& item : v.as_array()) samples.push_back(percent(item, "utilization.samples[]"));
          return samples;
        });
    if (const json::Value* period = utilization->find("samplePeriodMs"); period && !period->is_null())
      a.samplePeriodMicros = static_cast<unsigned>(nonNegative(*period, "utilization.samplePeriodMs") * 1000);
  }
  a.temperatureC = unsignedOrIdle(device, "temperatureC", kIdleTemperatureC);
  a.powerMilliwatts = unsignedOrIdle(device, "powerMilliwatts", kIdlePowerMilliwatts);
  const json::Value* clocks = device.find("clocks");
  if (!clocks) {
    a.smClockMHz = kIdleSmClockMHz;
    a.memoryClockMHz = maxMemoryClockMHz;
  } else if (!clocks->is_null()) {
    a.smClockMHz = unsignedOrIdle(*clocks, "smMHz", kIdleSmClockMHz);
    a.memoryClockMHz = unsignedOrIdle(*clocks, "memoryMHz", maxMemoryClockMHz);
  }
  a.clocksEventReasons = orIdle<unsigned long long>(device, "clocksEventReasons", NVML_CLOCKS_EVENT_REASON_GPU_IDLE, eventReasons);
  a.persistenceMode = boolOrIdle(device, "persistenceMode", true);
  a.eccMode = orIdle<std::pair<bool, bool>>(device, "eccMode", std::make_pair(true, true), [](const json::Value& v) {
    const json::Value* current = v.find("current");
    const json::Value* pending = v.find("pending");
    const bool now = current ? current->as_bool() : true;
    return std::make_pair(now, pending ? pending->as_bool() : now);
  });
  return a;
}

}  // namespace topod::fake
