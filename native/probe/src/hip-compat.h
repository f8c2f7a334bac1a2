// The probe is written against the HIP runtime API. On AMD this header is just
// <hip/hip_runtime.h>; on NVIDIA it maps the HIP names the probe uses onto the
// CUDA runtime, because the HIP headers Debian ships (5.2) do not compile
// against CUDA 13. Only names the probe actually uses are mapped: add a line
// here when a source file needs a new one.
#pragma once

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define TOPOD_VENDOR_AMD 1
#define TOPOD_VENDOR_NAME "amd"
#else
#include <cuda_runtime.h>
#define TOPOD_VENDOR_NVIDIA 1
#define TOPOD_VENDOR_NAME "nvidia"

using hipError_t = cudaError_t;
using hipDeviceProp_t = cudaDeviceProp;
using hipEvent_t = cudaEvent_t;
using hipTextureObject_t = cudaTextureObject_t;
using hipResourceDesc = cudaResourceDesc;
using hipTextureDesc = cudaTextureDesc;
using hipDeviceAttribute_t = cudaDeviceAttr;

#define hipSuccess cudaSuccess
#define hipErrorMemoryAllocation cudaErrorMemoryAllocation
#define hipErrorNoDevice cudaErrorNoDevice
#define hipErrorNotSupported cudaErrorNotSupported
#define hipErrorInsufficientDriver cudaErrorInsufficientDriver
#define hipErrorIllegalAddress cudaErrorIllegalAddress
#define hipErrorLaunchFailure cudaErrorLaunchFailure
#define hipErrorLaunchTimeOut cudaErrorLaunchTimeout
#define hipErrorAssert cudaErrorAssert
#define hipErrorIllegalInstruction cudaErrorIllegalInstruction  // NVIDIA-only below: HIP 5.2 lacks them
#define hipErrorMisalignedAddress cudaErrorMisalignedAddress
#define hipErrorInvalidPc cudaErrorInvalidPc
#define hipErrorHardwareStackError cudaErrorHardwareStackError
#define hipErrorECCNotCorrectable cudaErrorECCUncorrectable

#define hipGetErrorName cudaGetErrorName
#define hipGetErrorString cudaGetErrorString
#define hipGetLastError cudaGetLastError
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceGetPCIBusId cudaDeviceGetPCIBusId
#define hipSetDevice cudaSetDevice
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipDriverGetVersion cudaDriverGetVersion
#define hipMemGetInfo cudaMemGetInfo
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemset cudaMemset
#define hipMemcpy cudaMemcpy
#define hipMemcpyToSymbol cudaMemcpyToSymbol
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipFuncSetAttribute cudaFuncSetAttribute
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipFuncAttributes cudaFuncAttributes
#define hipFuncGetAttributes cudaFuncGetAttributes
#define hipDeviceGetCacheConfig cudaDeviceGetCacheConfig
#define hipDeviceSetCacheConfig cudaDeviceSetCacheConfig
#define hipFuncCache_t cudaFuncCache
#define hipCreateTextureObject cudaCreateTextureObject
#define hipDestroyTextureObject cudaDestroyTextureObject
#define hipCreateChannelDesc cudaCreateChannelDesc
#define hipResourceTypeLinear cudaResourceTypeLinear
#define hipReadModeElementType cudaReadModeElementType

#define HIP_SYMBOL(x) x
#define hipDeviceAttributeClockRate cudaDevAttrClockRate
#define hipDeviceAttributeMemoryClockRate cudaDevAttrMemoryClockRate
#define hipDeviceAttributeMaxTexture1DLinear cudaDevAttrMaxTexture1DLinearWidth
#endif

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace topod::compat {

// The 16 raw UUID bytes of a device: the runtime's property on NVIDIA,
// hipDeviceGetUuid on AMD (hipDeviceProp_t has no uuid field in HIP 5.x).
inline hipError_t device_uuid(int device, const hipDeviceProp_t& prop, unsigned char out[16]) {
#if defined(TOPOD_VENDOR_NVIDIA)
  (void)device;
  std::memcpy(out, prop.uuid.bytes, 16);
  return hipSuccess;
#else
  (void)prop;
  hipUUID uuid;
  hipError_t err = hipDeviceGetUuid(&uuid, device);
  if (err == hipSuccess) std::memcpy(out, uuid.bytes, 16);
  return err;
#endif
}

// Errors after which the context is unusable (the probe answers kernel_fault, then exits).
inline bool is_sticky_fault(hipError_t err) {
  switch (err) {
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorLaunchTimeOut:
    case hipErrorAssert:
    case hipErrorECCNotCorrectable:
#if defined(TOPOD_VENDOR_NVIDIA)
    case hipErrorIllegalInstruction:
    case hipErrorMisalignedAddress:
    case hipErrorInvalidPc:
    case hipErrorHardwareStackError:
#endif
      return true;
    default:
      return false;
  }
}

// Property fields whose names differ between the runtimes; 0 where HIP 5.x has none.
inline size_t shared_mem_per_sm(const hipDeviceProp_t& p) {
#if defined(TOPOD_VENDOR_NVIDIA)
  return p.sharedMemPerMultiprocessor;
#else
  return p.maxSharedMemoryPerMultiProcessor;
#endif
}

inline size_t shared_mem_per_block_optin(const hipDeviceProp_t& p) {
#if defined(TOPOD_VENDOR_NVIDIA)
  return p.sharedMemPerBlockOptin;
#else
  (void)p;
  return 0;
#endif
}

inline int regs_per_sm(const hipDeviceProp_t& p) {
#if defined(TOPOD_VENDOR_NVIDIA)
  return p.regsPerMultiprocessor;
#else
  (void)p;
  return 0;
#endif
}

// "sm_90" on NVIDIA, "gfx90a" on AMD (gcnArchName carries feature suffixes such as ":sramecc+").
inline void architecture_name(const hipDeviceProp_t& prop, char* out, size_t size) {
#if defined(TOPOD_VENDOR_NVIDIA)
  std::snprintf(out, size, "sm_%d%d", prop.major, prop.minor);
#else
  std::snprintf(out, size, "%s", prop.gcnArchName);
  if (char* colon = std::strchr(out, ':')) *colon = '\0';
#endif
}

// Per-kernel launch configuration: the dynamic shared memory it may use and,
// where the runtime has one, the L1/shared carveout it prefers (0 = most L1,
// 100 = most shared, -1 = no preference, the default).
inline hipError_t set_kernel_shared(const void* kernel, int dynamicSharedBytes, int carveoutPercent) {
  hipError_t err = hipFuncSetAttribute(kernel, hipFuncAttributeMaxDynamicSharedMemorySize, dynamicSharedBytes);
#if defined(TOPOD_VENDOR_NVIDIA)
  if (err == hipSuccess) err = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveoutPercent);
#else
  (void)carveoutPercent;
#endif
  return err;
}

// Static shared memory of a kernel (its __shared__ variables), which a block
// takes from the L1 beside the dynamic shared memory it is launched with.
inline hipError_t kernel_static_shared_bytes(const void* kernel, size_t* out) {
  hipFuncAttributes attr{};
  const hipError_t err = hipFuncGetAttributes(&attr, kernel);
  *out = err == hipSuccess ? attr.sharedSizeBytes : 0;
  return err;
}

// Shared memory the driver reserves for itself in every block (1 KiB on
// sm_80/sm_90). CUDA reports it; HIP 5.x has no such property: false there.
inline bool reserved_shared_mem_per_block(const hipDeviceProp_t& p, size_t* out) {
#if defined(TOPOD_VENDOR_NVIDIA)
  *out = p.reservedSharedMemPerBlock;
  return true;
#else
  (void)p;
  *out = 0;
  return false;
#endif
}

// cudaLimitMaxL2FetchGranularity, a limit of the current context (how many
// bytes device memory moves into the L2 per miss; not a device setting). AMD
// has no such limit: hipErrorNotSupported there.
inline hipError_t get_l2_fetch_granularity(size_t* out) {
  *out = 0;
#if defined(TOPOD_VENDOR_NVIDIA)
  return cudaDeviceGetLimit(out, cudaLimitMaxL2FetchGranularity);
#else
  return hipErrorNotSupported;
#endif
}

inline hipError_t set_l2_fetch_granularity(size_t bytes) {
#if defined(TOPOD_VENDOR_NVIDIA)
  return cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, bytes);
#else
  (void)bytes;
  return hipErrorNotSupported;
#endif
}

// The limit above for `device`, made current for the read and the previous one restored; false where there is none.
inline bool max_l2_fetch_granularity(int device, size_t* out) {
  *out = 0;
#if defined(TOPOD_VENDOR_NVIDIA)
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) return false;
  bool ok = cudaSetDevice(device) == cudaSuccess && get_l2_fetch_granularity(out) == cudaSuccess;
  if (cudaSetDevice(previous) != cudaSuccess) ok = false;
  if (!ok) (void)cudaGetLastError();
  return ok;
#else
  (void)device;
  return false;
#endif
}

}  // namespace topod::compat
