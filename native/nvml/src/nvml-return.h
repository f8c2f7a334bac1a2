// Names of nvmlReturn_t codes, shared by the addon (error codes, degraded
// fields) and the fake library (scenario files name failures by code).
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

#include "nvml-subset.h"

namespace topod::nvml {

struct ReturnName {
  nvmlReturn_t code;
  const char* name;  // without the NVML_ERROR_ prefix
};

inline constexpr ReturnName kReturnNames[] = {
    {NVML_SUCCESS, "SUCCESS"},
    {NVML_ERROR_UNINITIALIZED, "UNINITIALIZED"},
    {NVML_ERROR_INVALID_ARGUMENT, "INVALID_ARGUMENT"},
    {NVML_ERROR_NOT_SUPPORTED, "NOT_SUPPORTED"},
    {NVML_ERROR_NO_PERMISSION, "NO_PERMISSION"},
    {NVML_ERROR_ALREADY_INITIALIZED, "ALREADY_INITIALIZED"},
    {NVML_ERROR_NOT_FOUND, "NOT_FOUND"},
    {NVML_ERROR_INSUFFICIENT_SIZE, "INSUFFICIENT_SIZE"},
    {NVML_ERROR_INSUFFICIENT_POWER, "INSUFFICIENT_POWER"},
    {NVML_ERROR_DRIVER_NOT_LOADED, "DRIVER_NOT_LOADED"},
    {NVML_ERROR_TIMEOUT, "TIMEOUT"},
    {NVML_ERROR_IRQ_ISSUE, "IRQ_ISSUE"},
    {NVML_ERROR_LIBRARY_NOT_FOUND, "LIBRARY_NOT_FOUND"},
    {NVML_ERROR_FUNCTION_NOT_FOUND, "FUNCTION_NOT_FOUND"},
    {NVML_ERROR_CORRUPTED_INFOROM, "CORRUPTED_INFOROM"},
    {NVML_ERROR_GPU_IS_LOST, "GPU_IS_LOST"},
    {NVML_ERROR_RESET_REQUIRED, "RESET_REQUIRED"},
    {NVML_ERROR_OPERATING_SYSTEM, "OPERATING_SYSTEM"},
    {NVML_ERROR_LIB_RM_VERSION_MISMATCH, "LIB_RM_VERSION_MISMATCH"},
    {NVML_ERROR_IN_USE, "IN_USE"},
    {NVML_ERROR_MEMORY, "MEMORY"},
    {NVML_ERROR_NO_DATA, "NO_DATA"},
    {NVML_ERROR_VGPU_ECC_NOT_ENABLED, "VGPU_ECC_NOT_ENABLED"},
    {NVML_ERROR_INSUFFICIENT_RESOURCES, "INSUFFICIENT_RESOURCES"},
    {NVML_ERROR_FREQ_NOT_SUPPORTED, "FREQ_NOT_SUPPORTED"},
    {NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "ARGUMENT_VERSION_MISMATCH"},
    {NVML_ERROR_DEPRECATED, "DEPRECATED"},
    {NVML_ERROR_NOT_READY, "NOT_READY"},
    {NVML_ERROR_GPU_NOT_FOUND, "GPU_NOT_FOUND"},
    {NVML_ERROR_INVALID_STATE, "INVALID_STATE"},
    {NVML_ERROR_UNKNOWN, "UNKNOWN"},
};

/** "NO_PERMISSION" for NVML_ERROR_NO_PERMISSION; "RETURN_<n>" for codes newer than this table. */
inline std::string returnShortName(nvmlReturn_t code) {
  for (const auto& entry : kReturnNames)
    if (entry.code == code) return entry.name;
  return "RETURN_" + std::to_string(code);
}

/** "NVML_ERROR_NO_PERMISSION" (or "NVML_SUCCESS"). */
inline std::string returnFullName(nvmlReturn_t code) {
  if (code == NVML_SUCCESS) return "NVML_SUCCESS";
  return "NVML_ERROR_" + returnShortName(code);
}

/** Parses "NVML_ERROR_NO_PERMISSION", "NO_PERMISSION" or a decimal number; -1 when unknown. */
inline nvmlReturn_t parseReturnName(const std::string& text) {
  std::string name = text;
  for (const char* prefix : {"NVML_ERROR_", "NVML_"})
    if (name.rfind(prefix, 0) == 0) {
      name = name.substr(std::strlen(prefix));
      break;
    }
  for (const auto& entry : kReturnNames)
    if (name == entry.name) return entry.code;
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  return (!text.empty() && end && *end == '\0') ? static_cast<nvmlReturn_t>(value) : -1;
}

/**
 * Codes after which the whole NVML session is unusable until it is torn down
 * and initialised again: the user-space library no longer matches the kernel
 * module (driver upgraded under us), or the driver was unloaded and reloaded.
 */
inline bool isSessionLost(nvmlReturn_t code) {
  return code == NVML_ERROR_LIB_RM_VERSION_MISMATCH || code == NVML_ERROR_UNINITIALIZED || code == NVML_ERROR_DRIVER_NOT_LOADED;
}

}  // namespace topod::nvml
