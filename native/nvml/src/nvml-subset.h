// The subset of the NVML C API that topod uses, declared here because the
// build machine has no nvml.h: the addon dlopens libnvidia-ml.so.1 at run time
// and never links against it. Layouts follow the NVML reference (nvml.h,
// API version 12); native/nvml/tools/layout-check.cc compares every struct
// below against the real header on a machine that has one.
#pragma once

#include <cstddef>

extern "C" {

typedef int nvmlReturn_t;

// nvmlReturn_t values (stable across NVML releases).
enum : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_ENABLED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;

typedef unsigned int nvmlDeviceArchitecture_t;
typedef int nvmlEnableState_t;  // NVML_FEATURE_DISABLED 0 / NVML_FEATURE_ENABLED 1
typedef int nvmlClockType_t;

enum : int { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };
enum : int { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };
enum : unsigned { NVML_DEVICE_MIG_DISABLE = 0, NVML_DEVICE_MIG_ENABLE = 1 };
enum : int { NVML_TEMPERATURE_GPU = 0 };
enum : int { NVML_TOTAL_POWER_SAMPLES = 0, NVML_GPU_UTILIZATION_SAMPLES = 1 };
enum : int {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
};
// usedGpuMemory the driver could not attribute (nvml.h NVML_VALUE_NOT_AVAILABLE).
constexpr unsigned long long kNvmlValueNotAvailable = ~0ULL;
// A process's instance ids when MIG is off.
constexpr unsigned kNvmlNoInstanceId = 0xFFFFFFFFU;

// nvmlClocksEventReason* bits (nvml.h; the older nvmlClocksThrottleReason*
// names carry the same values). Decoded to names in server/dynamic.
enum : unsigned long long {
  NVML_CLOCKS_EVENT_REASON_GPU_IDLE = 0x1ULL,
  NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS_SETTING = 0x2ULL,
  NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP = 0x4ULL,
  NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN = 0x8ULL,
  NVML_CLOCKS_EVENT_REASON_SYNC_BOOST = 0x10ULL,
  NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN = 0x20ULL,
  NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN = 0x40ULL,
  NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN = 0x80ULL,
  NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCK_SETTING = 0x100ULL,
};

#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_SERIAL_BUFFER_SIZE 30
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_NVLINK_MAX_LINKS 18

// Inter-GPU topology, as `nvidia-smi topo -m` reads it (nvml.h enums; stable values).
typedef int nvmlGpuTopologyLevel_t;
enum : int {
  NVML_TOPOLOGY_INTERNAL = 0,     // the same board (multi-GPU board)
  NVML_TOPOLOGY_SINGLE = 10,      // one PCIe switch between them (topo -m: PIX)
  NVML_TOPOLOGY_MULTIPLE = 20,    // several PCIe switches, no host bridge (PXB)
  NVML_TOPOLOGY_HOSTBRIDGE = 30,  // through one PCIe host bridge (PHB)
  NVML_TOPOLOGY_NODE = 40,        // host bridges of one NUMA node (NODE)
  NVML_TOPOLOGY_SYSTEM = 50,      // across NUMA nodes, SMP interconnect (SYS)
};
typedef int nvmlGpuP2PCapsIndex_t;
enum : int {
  NVML_P2P_CAPS_INDEX_READ = 0,
  NVML_P2P_CAPS_INDEX_WRITE = 1,
  NVML_P2P_CAPS_INDEX_NVLINK = 2,
  NVML_P2P_CAPS_INDEX_ATOMICS = 3,
  NVML_P2P_CAPS_INDEX_PCI = 4,  // NVML_P2P_CAPS_INDEX_PROP in older headers
};
typedef int nvmlGpuP2PStatus_t;
enum : int {
  NVML_P2P_STATUS_OK = 0,
  NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
  NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
  NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
  NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
  NVML_P2P_STATUS_NOT_SUPPORTED = 5,
  NVML_P2P_STATUS_UNKNOWN = 6,
};
typedef int nvmlIntNvLinkDeviceType_t;
enum : int {
  NVML_NVLINK_DEVICE_TYPE_GPU = 0x00,
  NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01,
  NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02,
  NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF,
};

// GPU-instance profile indices (NVML_GPU_INSTANCE_PROFILE_*). The count grows
// with new drivers; readers probe past it and stop on INVALID_ARGUMENT.
enum : unsigned {
  NVML_GPU_INSTANCE_PROFILE_1_SLICE = 0,
  NVML_GPU_INSTANCE_PROFILE_2_SLICE = 1,
  NVML_GPU_INSTANCE_PROFILE_3_SLICE = 2,
  NVML_GPU_INSTANCE_PROFILE_4_SLICE = 3,
  NVML_GPU_INSTANCE_PROFILE_7_SLICE = 4,
  NVML_GPU_INSTANCE_PROFILE_8_SLICE = 5,
  NVML_GPU_INSTANCE_PROFILE_6_SLICE = 6,
  NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 = 7,
  NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 = 8,
  NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 = 9,
  NVML_GPU_INSTANCE_PROFILE_1_SLICE_GFX = 10,
  NVML_GPU_INSTANCE_PROFILE_2_SLICE_GFX = 11,
  NVML_GPU_INSTANCE_PROFILE_4_SLICE_GFX = 12,
  NVML_GPU_INSTANCE_PROFILE_1_SLICE_NO_ME = 13,
  NVML_GPU_INSTANCE_PROFILE_2_SLICE_NO_ME = 14,
  NVML_GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME = 15,
  NVML_GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME = 16,
  NVML_GPU_INSTANCE_PROFILE_COUNT = 17,
};

enum : unsigned {
  NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE = 0,
  NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE = 1,
  NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE = 2,
  NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE = 3,
  NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE = 4,
  NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE = 5,
  NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE = 6,
  NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1 = 7,
  NVML_COMPUTE_INSTANCE_PROFILE_COUNT = 8,
};
enum : unsigned { NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED = 0 };

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;

typedef struct nvmlBAR1Memory_st {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
} nvmlBAR1Memory_t;

typedef struct nvmlDeviceAttributes_st {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

typedef struct nvmlGpuInstancePlacement_st {
  unsigned int start;
  unsigned int size;
} nvmlGpuInstancePlacement_t;

typedef struct nvmlGpuInstanceProfileInfo_st {
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct nvmlGpuInstanceProfileInfo_v2_st {
  unsigned int version;
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
} nvmlGpuInstanceProfileInfo_v2_t;

// v3 drops isP2pSupported and adds capabilities; same size as v2 on LP64.
typedef struct nvmlGpuInstanceProfileInfo_v3_st {
  unsigned int version;
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
  unsigned int capabilities;
} nvmlGpuInstanceProfileInfo_v3_t;

typedef struct nvmlGpuInstanceInfo_st {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstancePlacement_st {
  unsigned int start;
  unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct nvmlComputeInstanceProfileInfo_v2_st {
  unsigned int version;
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
} nvmlComputeInstanceProfileInfo_v2_t;

typedef struct nvmlComputeInstanceProfileInfo_v3_st {
  unsigned int version;
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
  unsigned int capabilities;
} nvmlComputeInstanceProfileInfo_v3_t;

typedef struct nvmlComputeInstanceInfo_st {
  nvmlDevice_t device;
  nvmlGpuInstance_t gpuInstance;
  unsigned int id;
  unsigned int profileId;
  nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

// What a process holds on a GPU (nvmlDeviceGet{Compute,Graphics}RunningProcesses_v2/_v3).
// nvml.h from CUDA 12.0 to 12.2 appended usedGpuCcProtectedMemory to the _v3
// struct, but no driver ever wrote it and later headers took it back out: both
// entry points fill this 24-byte layout (pynvml was bitten by the wider one).
typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // NVML_VALUE_NOT_AVAILABLE when the driver cannot tell
  unsigned int gpuInstanceId;        // 0xFFFFFFFF when MIG is off
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // percent of the last sample period a kernel ran
  unsigned int memory;  // percent of it device memory was read or written
} nvmlUtilization_t;

typedef union nvmlValue_st {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
} nvmlValue_t;

typedef struct nvmlSample_st {
  unsigned long long timeStamp;  // CPU time stamp, microseconds
  nvmlValue_t sampleValue;
} nvmlSample_t;

typedef int nvmlSamplingType_t;
typedef int nvmlValueType_t;
typedef int nvmlTemperatureSensors_t;

}  // extern "C"

// NVML_STRUCT_VERSION(data, ver): the struct size in the low 24 bits, the
// version in the top byte. A constexpr instead of the header's macro.
template <typename T>
constexpr unsigned nvmlStructVersion(unsigned version) {
  return static_cast<unsigned>(sizeof(T)) | (version << 24U);
}
constexpr unsigned kNvmlMemoryV2 = nvmlStructVersion<nvmlMemory_v2_t>(2);
constexpr unsigned kNvmlGpuInstanceProfileInfoV2 = nvmlStructVersion<nvmlGpuInstanceProfileInfo_v2_t>(2);
constexpr unsigned kNvmlGpuInstanceProfileInfoV3 = nvmlStructVersion<nvmlGpuInstanceProfileInfo_v3_t>(3);
constexpr unsigned kNvmlComputeInstanceProfileInfoV2 = nvmlStructVersion<nvmlComputeInstanceProfileInfo_v2_t>(2);
constexpr unsigned kNvmlComputeInstanceProfileInfoV3 = nvmlStructVersion<nvmlComputeInstanceProfileInfo_v3_t>(3);

// Function types of every entry point the addon resolves (and the fake exports).
extern "C" {
typedef nvmlReturn_t (*nvmlInit_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*nvmlSystemGetDriverVersion_fn)(char*, unsigned int);
typedef nvmlReturn_t (*nvmlSystemGetCudaDriverVersion_fn)(int*);
typedef nvmlReturn_t (*nvmlDeviceGetCount_fn)(unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_fn)(unsigned int, nvmlDevice_t*);
typedef nvmlReturn_t (*nvmlDeviceGetString_fn)(nvmlDevice_t, char*, unsigned int);
typedef nvmlReturn_t (*nvmlDeviceGetPciInfo_fn)(nvmlDevice_t, nvmlPciInfo_t*);
typedef nvmlReturn_t (*nvmlDeviceGetUint_fn)(nvmlDevice_t, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t, nvmlMemory_t*);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfoV2_fn)(nvmlDevice_t, nvmlMemory_v2_t*);
typedef nvmlReturn_t (*nvmlDeviceGetBAR1MemoryInfo_fn)(nvmlDevice_t, nvmlBAR1Memory_t*);
typedef nvmlReturn_t (*nvmlDeviceGetMaxClockInfo_fn)(nvmlDevice_t, nvmlClockType_t, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetCpuAffinity_fn)(nvmlDevice_t, unsigned int, unsigned long*);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkState_fn)(nvmlDevice_t, unsigned int, nvmlEnableState_t*);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkRemotePciInfo_fn)(nvmlDevice_t, unsigned int, nvmlPciInfo_t*);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkRemoteDeviceType_fn)(nvmlDevice_t, unsigned int, nvmlIntNvLinkDeviceType_t*);
typedef nvmlReturn_t (*nvmlDeviceGetTopologyCommonAncestor_fn)(nvmlDevice_t, nvmlDevice_t, nvmlGpuTopologyLevel_t*);
typedef nvmlReturn_t (*nvmlDeviceGetP2PStatus_fn)(nvmlDevice_t, nvmlDevice_t, nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t*);
typedef nvmlReturn_t (*nvmlDeviceGetMigMode_fn)(nvmlDevice_t, unsigned int*, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetGpuInstanceProfileInfo_fn)(nvmlDevice_t, unsigned int, nvmlGpuInstanceProfileInfo_t*);
typedef nvmlReturn_t (*nvmlDeviceGetGpuInstanceProfileInfoV_fn)(nvmlDevice_t, unsigned int, nvmlGpuInstanceProfileInfo_v2_t*);
typedef nvmlReturn_t (*nvmlDeviceGetGpuInstancePossiblePlacements_fn)(nvmlDevice_t, unsigned int, nvmlGpuInstancePlacement_t*,
                                                                      unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetGpuInstances_fn)(nvmlDevice_t, unsigned int, nvmlGpuInstance_t*, unsigned int*);
typedef nvmlReturn_t (*nvmlGpuInstanceGetInfo_fn)(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t*);
typedef nvmlReturn_t (*nvmlGpuInstanceGetComputeInstanceProfileInfo_fn)(nvmlGpuInstance_t, unsigned int, unsigned int,
                                                                        nvmlComputeInstanceProfileInfo_t*);
typedef nvmlReturn_t (*nvmlGpuInstanceGetComputeInstanceProfileInfoV_fn)(nvmlGpuInstance_t, unsigned int, unsigned int,
                                                                         nvmlComputeInstanceProfileInfo_v2_t*);
typedef nvmlReturn_t (*nvmlGpuInstanceGetComputeInstances_fn)(nvmlGpuInstance_t, unsigned int, nvmlComputeInstance_t*, unsigned int*);
typedef nvmlReturn_t (*nvmlComputeInstanceGetInfo_fn)(nvmlComputeInstance_t, nvmlComputeInstanceInfo_t*);
typedef nvmlReturn_t (*nvmlDeviceGetMigDeviceHandleByIndex_fn)(nvmlDevice_t, unsigned int, nvmlDevice_t*);
typedef nvmlReturn_t (*nvmlDeviceGetAttributes_fn)(nvmlDevice_t, nvmlDeviceAttributes_t*);
typedef nvmlReturn_t (*nvmlDeviceGetRunningProcesses_fn)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*);
typedef nvmlReturn_t (*nvmlDeviceGetUtilizationRates_fn)(nvmlDevice_t, nvmlUtilization_t*);
typedef nvmlReturn_t (*nvmlDeviceGetSamples_fn)(nvmlDevice_t, nvmlSamplingType_t, unsigned long long, nvmlValueType_t*, unsigned int*,
                                                nvmlSample_t*);
typedef nvmlReturn_t (*nvmlDeviceGetTemperature_fn)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t, nvmlClockType_t, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetClocksEventReasons_fn)(nvmlDevice_t, unsigned long long*);
typedef nvmlReturn_t (*nvmlDeviceGetEnableState_fn)(nvmlDevice_t, nvmlEnableState_t*);
typedef nvmlReturn_t (*nvmlDeviceGetEccMode_fn)(nvmlDevice_t, nvmlEnableState_t*, nvmlEnableState_t*);
}
