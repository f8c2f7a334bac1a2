// Checks native/nvml/src/nvml-subset.h against the real <nvml.h>: every
// struct's size and field offsets, the struct version words, the profile
// indices and return codes the addon relies on. Run where nvml.h exists
// (CUDA toolkit or the nvml-dev package):
//
//   g++ -std=c++17 -I/usr/local/cuda/include -Inative/nvml/src native/nvml/tools/layout-check.cc -o /tmp/layout-check
//   /tmp/layout-check
//
// A mismatch fails to compile (static_assert). -DLAYOUT_CHECK_REPORT_ONLY
// turns the asserts off so the program prints every comparison and exits 1
// on a mismatch instead.
#include <cstddef>
#include <cstdio>

// Ours first, inside a namespace: nvml.h defines the same names globally.
namespace ours {
#include "nvml-subset.h"
}

// Capture our profile indices before nvml.h turns those names into macros.
namespace ours_values {
constexpr unsigned kGpuProfileIndex[] = {
    ours::NVML_GPU_INSTANCE_PROFILE_1_SLICE,      ours::NVML_GPU_INSTANCE_PROFILE_2_SLICE,
    ours::NVML_GPU_INSTANCE_PROFILE_3_SLICE,      ours::NVML_GPU_INSTANCE_PROFILE_4_SLICE,
    ours::NVML_GPU_INSTANCE_PROFILE_7_SLICE,      ours::NVML_GPU_INSTANCE_PROFILE_8_SLICE,
    ours::NVML_GPU_INSTANCE_PROFILE_6_SLICE,      ours::NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1,
    ours::NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1, ours::NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2,
};
}  // namespace ours_values

#include <nvml.h>

namespace {

int failures = 0;

void report(const char* what, size_t mine, size_t real) {
  std::printf("%-68s ours %6zu  nvml.h %6zu  %s\n", what, mine, real, mine == real ? "ok" : "MISMATCH");
  if (mine != real) ++failures;
}

}  // namespace

#ifdef LAYOUT_CHECK_REPORT_ONLY
#define SAME(what, mine, real) report(what, static_cast<size_t>(mine), static_cast<size_t>(real))
#else
#define SAME(what, mine, real)                                                         \
  do {                                                                                 \
    static_assert(static_cast<long long>(mine) == static_cast<long long>(real), what); \
    report(what, static_cast<size_t>(mine), static_cast<size_t>(real));                \
  } while (0)
#endif

#define SIZE(T) SAME("sizeof(" #T ")", sizeof(ours::T), sizeof(::T))
#define FIELD(T, f) SAME("offsetof(" #T ", " #f ")", offsetof(ours::T, f), offsetof(::T, f))

int main() {
  SIZE(nvmlPciInfo_t);
  FIELD(nvmlPciInfo_t, domain);
  FIELD(nvmlPciInfo_t, pciDeviceId);
  FIELD(nvmlPciInfo_t, busId);
  SIZE(nvmlMemory_t);
  FIELD(nvmlMemory_t, free);
  FIELD(nvmlMemory_t, used);
  SIZE(nvmlMemory_v2_t);
  FIELD(nvmlMemory_v2_t, total);
  FIELD(nvmlMemory_v2_t, reserved);
  FIELD(nvmlMemory_v2_t, free);
  FIELD(nvmlMemory_v2_t, used);
  SIZE(nvmlBAR1Memory_t);
  FIELD(nvmlBAR1Memory_t, bar1Used);
  SIZE(nvmlDeviceAttributes_t);
  FIELD(nvmlDeviceAttributes_t, gpuInstanceSliceCount);
  FIELD(nvmlDeviceAttributes_t, computeInstanceSliceCount);
  FIELD(nvmlDeviceAttributes_t, memorySizeMB);
  SIZE(nvmlGpuInstancePlacement_t);
  SIZE(nvmlGpuInstanceProfileInfo_t);
  FIELD(nvmlGpuInstanceProfileInfo_t, multiprocessorCount);
  FIELD(nvmlGpuInstanceProfileInfo_t, memorySizeMB);
  SIZE(nvmlGpuInstanceProfileInfo_v2_t);
  FIELD(nvmlGpuInstanceProfileInfo_v2_t, id);
  FIELD(nvmlGpuInstanceProfileInfo_v2_t, sliceCount);
  FIELD(nvmlGpuInstanceProfileInfo_v2_t, multiprocessorCount);
  FIELD(nvmlGpuInstanceProfileInfo_v2_t, copyEngineCount);
  FIELD(nvmlGpuInstanceProfileInfo_v2_t, memorySizeMB);
  FIELD(nvmlGpuInstanceProfileInfo_v2_t, name);
#ifdef nvmlGpuInstanceProfileInfo_v3  // headers from driver 545 (CUDA 12.3) on
  SIZE(nvmlGpuInstanceProfileInfo_v3_t);
  FIELD(nvmlGpuInstanceProfileInfo_v3_t, id);
  FIELD(nvmlGpuInstanceProfileInfo_v3_t, sliceCount);
  FIELD(nvmlGpuInstanceProfileInfo_v3_t, instanceCount);
  FIELD(nvmlGpuInstanceProfileInfo_v3_t, multiprocessorCount);
  FIELD(nvmlGpuInstanceProfileInfo_v3_t, copyEngineCount);
  FIELD(nvmlGpuInstanceProfileInfo_v3_t, memorySizeMB);
  FIELD(nvmlGpuInstanceProfileInfo_v3_t, name);
  FIELD(nvmlGpuInstanceProfileInfo_v3_t, capabilities);
  SIZE(nvmlComputeInstanceProfileInfo_v3_t);
  FIELD(nvmlComputeInstanceProfileInfo_v3_t, capabilities);
  SAME("nvmlGpuInstanceProfileInfo_v3 version word", ours::kNvmlGpuInstanceProfileInfoV3, nvmlGpuInstanceProfileInfo_v3);
  SAME("nvmlComputeInstanceProfileInfo_v3 version word", ours::kNvmlComputeInstanceProfileInfoV3, nvmlComputeInstanceProfileInfo_v3);
  SAME("NVML_ERROR_INVALID_STATE", ours::NVML_ERROR_INVALID_STATE, ::NVML_ERROR_INVALID_STATE);
#else
  std::printf("(nvml.h predates the v3 profile structs: v3 layouts not checked)\n");
#endif
  SIZE(nvmlGpuInstanceInfo_t);
  FIELD(nvmlGpuInstanceInfo_t, id);
  FIELD(nvmlGpuInstanceInfo_t, profileId);
  FIELD(nvmlGpuInstanceInfo_t, placement);
  SIZE(nvmlComputeInstanceProfileInfo_t);
  SIZE(nvmlComputeInstanceProfileInfo_v2_t);
  FIELD(nvmlComputeInstanceProfileInfo_v2_t, multiprocessorCount);
  FIELD(nvmlComputeInstanceProfileInfo_v2_t, name);
  SIZE(nvmlComputeInstanceInfo_t);
  FIELD(nvmlComputeInstanceInfo_t, gpuInstance);
  FIELD(nvmlComputeInstanceInfo_t, id);
  FIELD(nvmlComputeInstanceInfo_t, profileId);
  FIELD(nvmlComputeInstanceInfo_t, placement);

  // Activity reads (activity-reader.cc).
  SIZE(nvmlProcessInfo_v2_t);
  FIELD(nvmlProcessInfo_v2_t, usedGpuMemory);
  FIELD(nvmlProcessInfo_v2_t, gpuInstanceId);
  FIELD(nvmlProcessInfo_v2_t, computeInstanceId);
  SIZE(nvmlUtilization_t);
  FIELD(nvmlUtilization_t, memory);
  SIZE(nvmlSample_t);
  FIELD(nvmlSample_t, sampleValue);
  SIZE(nvmlValue_t);
  SAME("NVML_TEMPERATURE_GPU", ours::NVML_TEMPERATURE_GPU, ::NVML_TEMPERATURE_GPU);
  SAME("NVML_GPU_UTILIZATION_SAMPLES", ours::NVML_GPU_UTILIZATION_SAMPLES, ::NVML_GPU_UTILIZATION_SAMPLES);
  SAME("NVML_VALUE_TYPE_UNSIGNED_INT", ours::NVML_VALUE_TYPE_UNSIGNED_INT, ::NVML_VALUE_TYPE_UNSIGNED_INT);
  SAME("NVML_VALUE_TYPE_SIGNED_LONG_LONG", ours::NVML_VALUE_TYPE_SIGNED_LONG_LONG, ::NVML_VALUE_TYPE_SIGNED_LONG_LONG);
  SAME("NVML_VALUE_NOT_AVAILABLE", ours::kNvmlValueNotAvailable, NVML_VALUE_NOT_AVAILABLE);
  SAME("clocks reason GpuIdle", ours::NVML_CLOCKS_EVENT_REASON_GPU_IDLE, nvmlClocksThrottleReasonGpuIdle);
  SAME("clocks reason ApplicationsClocksSetting", ours::NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS_SETTING,
       nvmlClocksThrottleReasonApplicationsClocksSetting);
  SAME("clocks reason SwPowerCap", ours::NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP, nvmlClocksThrottleReasonSwPowerCap);
  SAME("clocks reason HwSlowdown", ours::NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN, nvmlClocksThrottleReasonHwSlowdown);
  SAME("clocks reason SyncBoost", ours::NVML_CLOCKS_EVENT_REASON_SYNC_BOOST, nvmlClocksThrottleReasonSyncBoost);
  SAME("clocks reason SwThermalSlowdown", ours::NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN, nvmlClocksThrottleReasonSwThermalSlowdown);
  SAME("clocks reason HwThermalSlowdown", ours::NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN, nvmlClocksThrottleReasonHwThermalSlowdown);
  SAME("clocks reason HwPowerBrakeSlowdown", ours::NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN,
       nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
  SAME("clocks reason DisplayClockSetting", ours::NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCK_SETTING,
       nvmlClocksThrottleReasonDisplayClockSetting);

  SAME("nvmlMemory_v2 version word", ours::kNvmlMemoryV2, nvmlMemory_v2);
  SAME("nvmlGpuInstanceProfileInfo_v2 version word", ours::kNvmlGpuInstanceProfileInfoV2, nvmlGpuInstanceProfileInfo_v2);
  SAME("nvmlComputeInstanceProfileInfo_v2 version word", ours::kNvmlComputeInstanceProfileInfoV2, nvmlComputeInstanceProfileInfo_v2);

  SAME("NVML_GPU_INSTANCE_PROFILE_1_SLICE", ours_values::kGpuProfileIndex[0], NVML_GPU_INSTANCE_PROFILE_1_SLICE);
  SAME("NVML_GPU_INSTANCE_PROFILE_2_SLICE", ours_values::kGpuProfileIndex[1], NVML_GPU_INSTANCE_PROFILE_2_SLICE);
  SAME("NVML_GPU_INSTANCE_PROFILE_3_SLICE", ours_values::kGpuProfileIndex[2], NVML_GPU_INSTANCE_PROFILE_3_SLICE);
  SAME("NVML_GPU_INSTANCE_PROFILE_4_SLICE", ours_values::kGpuProfileIndex[3], NVML_GPU_INSTANCE_PROFILE_4_SLICE);
  SAME("NVML_GPU_INSTANCE_PROFILE_7_SLICE", ours_values::kGpuProfileIndex[4], NVML_GPU_INSTANCE_PROFILE_7_SLICE);
  SAME("NVML_GPU_INSTANCE_PROFILE_8_SLICE", ours_values::kGpuProfileIndex[5], NVML_GPU_INSTANCE_PROFILE_8_SLICE);
  SAME("NVML_GPU_INSTANCE_PROFILE_6_SLICE", ours_values::kGpuProfileIndex[6], NVML_GPU_INSTANCE_PROFILE_6_SLICE);
  SAME("NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1", ours_values::kGpuProfileIndex[7], NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1);
#ifdef NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2  // both added after CUDA 11.8
  SAME("NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1", ours_values::kGpuProfileIndex[8], NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1);
  SAME("NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2", ours_values::kGpuProfileIndex[9], NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2);
#endif

  SAME("NVML_ERROR_NO_PERMISSION", ours::NVML_ERROR_NO_PERMISSION, ::NVML_ERROR_NO_PERMISSION);
  SAME("NVML_ERROR_NOT_SUPPORTED", ours::NVML_ERROR_NOT_SUPPORTED, ::NVML_ERROR_NOT_SUPPORTED);
  SAME("NVML_ERROR_LIB_RM_VERSION_MISMATCH", ours::NVML_ERROR_LIB_RM_VERSION_MISMATCH, ::NVML_ERROR_LIB_RM_VERSION_MISMATCH);
  SAME("NVML_ERROR_ARGUMENT_VERSION_MISMATCH", ours::NVML_ERROR_ARGUMENT_VERSION_MISMATCH, ::NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  SAME("NVML_NVLINK_MAX_LINKS", 18, NVML_NVLINK_MAX_LINKS);

  std::printf("%s: %d mismatch(es)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
