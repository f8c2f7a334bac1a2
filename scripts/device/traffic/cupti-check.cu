// A standalone CUPTI check, independent of the probe: reads
// dram__bytes_read.sum and dram__bytes_write.sum (and the L2's sector counts)
// around one strided kernel with the Range Profiler API (CUDA 13), linked
// directly against libcupti. Prints one JSON object per case, so the probe's
// traffic op can be compared against it (and both against ncu).
// Build: nvcc -std=c++17 -arch=sm_90 cupti-check.cu -I$CUDA/include -L$CUPTI_LIB -lcupti -o cupti-check
// Run:   ./cupti-check [footprintMiB]   (default 400: 100M floats, as in the paper)
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CUDA_OK(x)                                                                            \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::printf("{\"error\":\"%s: %s\"}\n", #x, cudaGetErrorString(e_));                   \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)
#define CUPTI_OK(x)                                                                           \
  do {                                                                                        \
    CUptiResult r_ = (x);                                                                     \
    if (r_ != CUPTI_SUCCESS) {                                                                \
      const char* s_ = "?";                                                                   \
      cuptiGetResultString(r_, &s_);                                                          \
      std::printf("{\"error\":\"%s: %s (%d)\"}\n", #x, s_, static_cast<int>(r_));             \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

// The paper's vecMul, and read-only / write-only / read-modify-write variants.
__global__ void vec_mul(const float* a, const float* b, float* c, uint64_t n, uint64_t stride) {
  const uint64_t id = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (id * stride < n) c[id * stride] = a[id * stride] * b[id * stride];
}
__global__ void read_only(const float* a, uint64_t n, uint64_t stride, float* sink, int flag) {
  const uint64_t id = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (id * stride < n) {
    const float v = a[id * stride];
    if (flag && v == 12345.f) *sink = v;
  }
}
__global__ void write_only(float* c, uint64_t n, uint64_t stride) {
  const uint64_t id = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (id * stride < n) c[id * stride] = static_cast<float>(id);
}
__global__ void rmw(float* c, uint64_t n, uint64_t stride) {
  const uint64_t id = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (id * stride < n) c[id * stride] += 1.f;
}
__global__ void flush(const uint4* data, uint64_t count, uint32_t* sink) {
  uint32_t acc = 0;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += uint64_t{gridDim.x} * blockDim.x) acc ^= data[i].x ^ data[i].w;
  if (acc == 1) *sink = acc;
}

int main(int argc, char** argv) {
  const uint64_t footprintBytes = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 400) << 20;
  const uint64_t n = footprintBytes / 4;
  CUDA_OK(cudaSetDevice(0));
  CUDA_OK(cudaFree(nullptr));
  // The driver's cuCtxGetCurrent through the runtime, so nothing links libcuda.
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CUDA_OK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &entry, 12000, cudaEnableDefault, &found));
  CUcontext ctx = nullptr;
  if (!entry || reinterpret_cast<CtxGetCurrent>(entry)(&ctx) != CUDA_SUCCESS) { std::printf("{\"error\":\"cuCtxGetCurrent\"}\n"); return 1; }
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));

  CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  CUPTI_OK(cuptiProfilerInitialize(&init));
  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = 0;
  CUPTI_OK(cuptiDeviceGetChipName(&chip));
  CUpti_Profiler_GetCounterAvailability_Params avail{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.ctx = ctx;
  CUPTI_OK(cuptiProfilerGetCounterAvailability(&avail));
  std::vector<uint8_t> availImage(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availImage.data();
  CUPTI_OK(cuptiProfilerGetCounterAvailability(&avail));

  std::vector<const char*> metrics = {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum"};
  CUpti_Profiler_Host_Initialize_Params hostInit{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  hostInit.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  hostInit.pChipName = chip.pChipName;
  hostInit.pCounterAvailabilityImage = availImage.data();
  CUPTI_OK(cuptiProfilerHostInitialize(&hostInit));
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = hostInit.pHostObject;
  add.ppMetricNames = metrics.data();
  add.numMetrics = metrics.size();
  CUPTI_OK(cuptiProfilerHostConfigAddMetrics(&add));
  CUpti_Profiler_Host_GetConfigImageSize_Params cfgSize{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  cfgSize.pHostObject = hostInit.pHostObject;
  CUPTI_OK(cuptiProfilerHostGetConfigImageSize(&cfgSize));
  std::vector<uint8_t> config(cfgSize.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params cfg{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  cfg.pHostObject = hostInit.pHostObject;
  cfg.pConfigImage = config.data();
  cfg.configImageSize = config.size();
  CUPTI_OK(cuptiProfilerHostGetConfigImage(&cfg));
  CUpti_Profiler_Host_GetNumOfPasses_Params passes{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.pConfigImage = config.data();
  passes.configImageSize = config.size();
  CUPTI_OK(cuptiProfilerHostGetNumOfPasses(&passes));
  std::printf("{\"chip\":\"%s\",\"gpu\":\"%s\",\"l2Bytes\":%d,\"passes\":%zu,\"footprintBytes\":%llu}\n", chip.pChipName, prop.name, prop.l2CacheSize,
              passes.numOfPasses, static_cast<unsigned long long>(footprintBytes));

  float *a, *b, *c;
  uint4* flushBuf;
  uint32_t* sink;
  const uint64_t flushBytes = 4ull * prop.l2CacheSize;
  CUDA_OK(cudaMalloc(&a, footprintBytes));
  CUDA_OK(cudaMalloc(&b, footprintBytes));
  CUDA_OK(cudaMalloc(&flushBuf, flushBytes));
  CUDA_OK(cudaMalloc(&sink, 4));
  CUDA_OK(cudaMemset(a, 0, footprintBytes));
  CUDA_OK(cudaMemset(b, 0, footprintBytes));
  CUDA_OK(cudaMemset(flushBuf, 0, flushBytes));
  const uint32_t flushBlocks = prop.multiProcessorCount * 4;

  const char* kinds[] = {"vecmul", "read", "write", "rmw"};
  for (const char* kind : kinds) {
    for (uint64_t stride = 1; stride <= 1024; stride *= 2) {
      for (int fresh = 1; fresh >= 0; --fresh) {
        if (std::string(kind) == "read" && !fresh) continue;
        CUDA_OK(cudaMalloc(&c, footprintBytes));
        if (!fresh) CUDA_OK(cudaMemset(c, 0, footprintBytes));
        CUDA_OK(cudaDeviceSynchronize());
        CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
        en.ctx = ctx;
        CUPTI_OK(cuptiRangeProfilerEnable(&en));
        CUpti_RangeProfiler_GetCounterDataSize_Params ds{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
        ds.pRangeProfilerObject = en.pRangeProfilerObject;
        ds.pMetricNames = metrics.data();
        ds.numMetrics = metrics.size();
        ds.maxNumOfRanges = 8;
        ds.maxNumRangeTreeNodes = 8;
        CUPTI_OK(cuptiRangeProfilerGetCounterDataSize(&ds));
        std::vector<uint8_t> data(ds.counterDataSize);
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params di{CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
        di.pRangeProfilerObject = en.pRangeProfilerObject;
        di.counterDataSize = data.size();
        di.pCounterData = data.data();
        CUPTI_OK(cuptiRangeProfilerCounterDataImageInitialize(&di));
        CUpti_RangeProfiler_SetConfig_Params sc{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
        sc.pRangeProfilerObject = en.pRangeProfilerObject;
        sc.configSize = config.size();
        sc.pConfig = config.data();
        sc.counterDataImageSize = data.size();
        sc.pCounterDataImage = data.data();
        sc.range = CUPTI_AutoRange;
        sc.replayMode = CUPTI_KernelReplay;
        sc.maxRangesPerPass = 8;
        sc.numNestingLevels = 1;
        sc.minNestingLevel = 1;
        sc.passIndex = 0;
        sc.targetNestingLevel = 1;
        CUPTI_OK(cuptiRangeProfilerSetConfig(&sc));
        CUpti_RangeProfiler_Start_Params st{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
        st.pRangeProfilerObject = en.pRangeProfilerObject;
        CUPTI_OK(cuptiRangeProfilerStart(&st));
        // Ranges: 0 flush before, 1 the pattern, 2 flush after (the pattern's dirty lines written back).
        flush<<<flushBlocks, 256>>>(flushBuf, flushBytes / 16, sink);
        const uint64_t accesses = (n + stride - 1) / stride;
        const uint32_t blocks = static_cast<uint32_t>((accesses + 255) / 256);
        const std::string k = kind;
        if (k == "vecmul") vec_mul<<<blocks, 256>>>(a, b, c, n, stride);
        else if (k == "read") read_only<<<blocks, 256>>>(a, n, stride, reinterpret_cast<float*>(sink), 0);
        else if (k == "write") write_only<<<blocks, 256>>>(c, n, stride);
        else rmw<<<blocks, 256>>>(c, n, stride);
        flush<<<flushBlocks, 256>>>(flushBuf, flushBytes / 16, sink);
        CUDA_OK(cudaDeviceSynchronize());
        CUpti_RangeProfiler_Stop_Params sp{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
        sp.pRangeProfilerObject = en.pRangeProfilerObject;
        CUPTI_OK(cuptiRangeProfilerStop(&sp));
        CUpti_RangeProfiler_DecodeData_Params dd{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
        dd.pRangeProfilerObject = en.pRangeProfilerObject;
        CUPTI_OK(cuptiRangeProfilerDecodeData(&dd));
        CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
        info.pCounterDataImage = data.data();
        info.counterDataImageSize = data.size();
        CUPTI_OK(cuptiRangeProfilerGetCounterDataInfo(&info));
        std::printf("{\"kind\":\"%s\",\"strideElements\":%llu,\"fresh\":%s,\"accesses\":%llu,\"allPassesSubmitted\":%d,\"rangesDropped\":%zu,\"ranges\":[",
                    kind, static_cast<unsigned long long>(stride), fresh ? "true" : "false", static_cast<unsigned long long>(accesses),
                    sp.isAllPassSubmitted, dd.numOfRangeDropped);
        for (size_t r = 0; r < info.numTotalRanges; ++r) {
          CUpti_RangeProfiler_CounterData_GetRangeInfo_Params ri{CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
          ri.pCounterDataImage = data.data();
          ri.counterDataImageSize = data.size();
          ri.rangeIndex = r;
          ri.rangeDelimiter = "/";
          CUPTI_OK(cuptiRangeProfilerCounterDataGetRangeInfo(&ri));
          std::vector<double> values(metrics.size());
          CUpti_Profiler_Host_EvaluateToGpuValues_Params ev{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
          ev.pHostObject = hostInit.pHostObject;
          ev.pCounterDataImage = data.data();
          ev.counterDataImageSize = data.size();
          ev.rangeIndex = r;
          ev.ppMetricNames = metrics.data();
          ev.numMetrics = metrics.size();
          ev.pMetricValues = values.data();
          CUPTI_OK(cuptiProfilerHostEvaluateToGpuValues(&ev));
          std::printf("%s{\"name\":\"%s\"", r ? "," : "", ri.rangeName ? ri.rangeName : "");
          for (size_t m = 0; m < metrics.size(); ++m) std::printf(",\"%s\":%.0f", metrics[m], values[m]);
          std::printf("}");
        }
        std::printf("]}\n");
        std::fflush(stdout);
        CUpti_RangeProfiler_Disable_Params dis{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
        dis.pRangeProfilerObject = en.pRangeProfilerObject;
        CUPTI_OK(cuptiRangeProfilerDisable(&dis));
        CUDA_OK(cudaFree(c));
      }
    }
  }
  CUpti_Profiler_Host_Deinitialize_Params hd{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  hd.pHostObject = hostInit.pHostObject;
  CUPTI_OK(cuptiProfilerHostDeinitialize(&hd));
  CUpti_Profiler_DeInitialize_Params deinit{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
  CUPTI_OK(cuptiProfilerDeInitialize(&deinit));
  return 0;
}
