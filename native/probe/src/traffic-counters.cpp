// TrafficCounters (traffic-counters.h). NVIDIA: libcupti through dlopen, the
// Range Profiler target API for collection and the profiler host API
// (cupti_profiler_host.h, which drives libnvperf_host itself) for turning
// counter data into metric values. AMD: unsupported (rocprofiler is not
// wired in; the timing method answers there).
#include "traffic-counters.h"

#include "hip-compat.h"
#include "probe-error.h"
#include "runtime.h"

#if defined(TOPOD_VENDOR_NVIDIA)
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <mutex>
#endif

namespace topod::probe {

#if defined(TOPOD_VENDOR_NVIDIA)

namespace {

// Every CUPTI entry point used, typed from the header's own declarations.
struct CuptiApi {
#define TOPOD_CUPTI_FN(name) decltype(&::name) name = nullptr;
  TOPOD_CUPTI_FN(cuptiGetResultString)
  TOPOD_CUPTI_FN(cuptiProfilerInitialize)
  TOPOD_CUPTI_FN(cuptiDeviceGetChipName)
  TOPOD_CUPTI_FN(cuptiProfilerGetCounterAvailability)
  TOPOD_CUPTI_FN(cuptiProfilerHostInitialize)
  TOPOD_CUPTI_FN(cuptiProfilerHostDeinitialize)
  TOPOD_CUPTI_FN(cuptiProfilerHostConfigAddMetrics)
  TOPOD_CUPTI_FN(cuptiProfilerHostGetConfigImageSize)
  TOPOD_CUPTI_FN(cuptiProfilerHostGetConfigImage)
  TOPOD_CUPTI_FN(cuptiProfilerHostGetNumOfPasses)
  TOPOD_CUPTI_FN(cuptiProfilerHostEvaluateToGpuValues)
  TOPOD_CUPTI_FN(cuptiRangeProfilerEnable)
  TOPOD_CUPTI_FN(cuptiRangeProfilerDisable)
  TOPOD_CUPTI_FN(cuptiRangeProfilerGetCounterDataSize)
  TOPOD_CUPTI_FN(cuptiRangeProfilerCounterDataImageInitialize)
  TOPOD_CUPTI_FN(cuptiRangeProfilerSetConfig)
  TOPOD_CUPTI_FN(cuptiRangeProfilerStart)
  TOPOD_CUPTI_FN(cuptiRangeProfilerStop)
  TOPOD_CUPTI_FN(cuptiRangeProfilerDecodeData)
  TOPOD_CUPTI_FN(cuptiRangeProfilerGetCounterDataInfo)
  TOPOD_CUPTI_FN(cuptiRangeProfilerCounterDataGetRangeInfo)
#undef TOPOD_CUPTI_FN
};

// Where libcupti may be: TOPOD_CUPTI_PATH alone when set (the library, or its
// folder: an override is exact), else the loader's own search
// (LD_LIBRARY_PATH, ldconfig), then the CUDA toolkit's folders, newest major
// version first. CUPTI 13's headers built this probe; its structures carry
// their size, so a newer libcupti accepts them too.
std::vector<std::string> library_candidates() {
  std::vector<std::string> out;
  const char* names[] = {"libcupti.so.13", "libcupti.so"};
  if (const char* env = std::getenv("TOPOD_CUPTI_PATH"); env && *env) {
    const std::string path = env;
    if (path.find(".so") != std::string::npos)
      out.push_back(path);
    else
      for (const char* n : names) out.push_back(path + "/" + n);
    return out;
  }
  for (const char* n : names) out.push_back(n);
  std::vector<std::string> roots;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) roots.push_back(home);
  roots.push_back("/usr/local/cuda");
  glob_t g{};
  if (glob("/usr/local/cuda-*", 0, nullptr, &g) == 0)
    for (size_t i = g.gl_pathc; i-- > 0;) roots.push_back(g.gl_pathv[i]);  // reverse order: newest first
  globfree(&g);
  for (const std::string& root : roots)
    for (const char* sub : {"/extras/CUPTI/lib64", "/lib64", "/lib", "/targets/x86_64-linux/lib", "/targets/sbsa-linux/lib"})
      for (const char* n : names) out.push_back(root + sub + "/" + n);
  return out;
}

// The process's one CUPTI: loaded and profiler-initialised once (cuptiProfilerInitialize is per process).
struct Cupti {
  CuptiApi api;
  std::string library;
  std::string failure;                     // why CUPTI cannot be loaded; empty when it can
  CUptiResult initResult = CUPTI_SUCCESS;  // cuptiProfilerInitialize's answer
  std::string chip;
};

// A zeroed parameter block carrying its size, as every CUPTI profiler call takes it.
template <typename P>
P params(size_t structSize) {
  P p{};
  p.structSize = structSize;
  return p;
}

std::string result_name(const CuptiApi& api, CUptiResult r) {
  const char* s = nullptr;
  if (api.cuptiGetResultString && api.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
  return "CUptiResult " + std::to_string(static_cast<int>(r));
}

// Maps a CUPTI failure onto the protocol: what no one on this machine can change is `unsupported`, with the reason.
[[noreturn]] void fail(const CuptiApi& api, CUptiResult r, const char* call) {
  const std::string what = std::string(call) + ": " + result_name(api, r);
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      throw ProbeFailure(ErrorCode::Unsupported,
                         "profiling is restricted to administrators (NVreg_RestrictProfilingToAdminUsers=1): " + what);
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      throw ProbeFailure(ErrorCode::Unsupported, "CUPTI cannot profile this device: " + what);
    default:
      throw ProbeFailure(ErrorCode::Internal, what);
  }
}

void ok(const CuptiApi& api, CUptiResult r, const char* call) {
  if (r != CUPTI_SUCCESS) fail(api, r, call);
}

CUcontext current_context() {
  check(hipFree(nullptr), "create the context");
  // cuCtxGetCurrent through the runtime, so the probe does not link libcuda.
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  check(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &entry, 12000, cudaEnableDefault, &found), "cudaGetDriverEntryPointByVersion");
  CUcontext ctx = nullptr;
  if (!entry || reinterpret_cast<CUresult (*)(CUcontext*)>(entry)(&ctx) != CUDA_SUCCESS || !ctx)
    throw ProbeFailure(ErrorCode::Internal, "cuCtxGetCurrent found no current context");
  return ctx;
}

Cupti& cupti() {
  static Cupti c;
  static std::once_flag once;
  std::call_once(once, [] {
    void* handle = nullptr;
    std::string tried;
    for (const std::string& candidate : library_candidates()) {
      handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) break;
      const char* why = dlerror();
      if (tried.size() < 600) tried += (tried.empty() ? "" : "; ") + std::string(why ? why : candidate);
    }
    if (!handle) {
      c.failure = "CUPTI not found (set TOPOD_CUPTI_PATH to libcupti.so or its folder): " + tried;
      return;
    }
    bool missing = false;
    std::string missingName;
    auto resolve = [&](auto& slot, const char* name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(handle, name));
      if (!slot && !missing) {
        missing = true;
        missingName = name;
      }
    };
#define TOPOD_CUPTI_RESOLVE(name) resolve(c.api.name, #name);
    TOPOD_CUPTI_RESOLVE(cuptiGetResultString)
    TOPOD_CUPTI_RESOLVE(cuptiProfilerInitialize)
    TOPOD_CUPTI_RESOLVE(cuptiDeviceGetChipName)
    TOPOD_CUPTI_RESOLVE(cuptiProfilerGetCounterAvailability)
    TOPOD_CUPTI_RESOLVE(cuptiProfilerHostInitialize)
    TOPOD_CUPTI_RESOLVE(cuptiProfilerHostDeinitialize)
    TOPOD_CUPTI_RESOLVE(cuptiProfilerHostConfigAddMetrics)
    TOPOD_CUPTI_RESOLVE(cuptiProfilerHostGetConfigImageSize)
    TOPOD_CUPTI_RESOLVE(cuptiProfilerHostGetConfigImage)
    TOPOD_CUPTI_RESOLVE(cuptiProfilerHostGetNumOfPasses)
    TOPOD_CUPTI_RESOLVE(cuptiProfilerHostEvaluateToGpuValues)
    TOPOD_CUPTI_RESOLVE(cuptiRangeProfilerEnable)
    TOPOD_CUPTI_RESOLVE(cuptiRangeProfilerDisable)
    TOPOD_CUPTI_RESOLVE(cuptiRangeProfilerGetCounterDataSize)
    TOPOD_CUPTI_RESOLVE(cuptiRangeProfilerCounterDataImageInitialize)
    TOPOD_CUPTI_RESOLVE(cuptiRangeProfilerSetConfig)
    TOPOD_CUPTI_RESOLVE(cuptiRangeProfilerStart)
    TOPOD_CUPTI_RESOLVE(cuptiRangeProfilerStop)
    TOPOD_CUPTI_RESOLVE(cuptiRangeProfilerDecodeData)
    TOPOD_CUPTI_RESOLVE(cuptiRangeProfilerGetCounterDataInfo)
    TOPOD_CUPTI_RESOLVE(cuptiRangeProfilerCounterDataGetRangeInfo)
#undef TOPOD_CUPTI_RESOLVE
    Dl_info info{};
    c.library = dladdr(reinterpret_cast<void*>(c.api.cuptiGetResultString), &info) && info.dli_fname ? info.dli_fname : "libcupti";
    if (missing) {
      c.failure = c.library + " has no " + missingName + " (the Range Profiler API needs CUPTI from CUDA 12.6 or later)";
      return;
    }
    auto init = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    c.initResult = c.api.cuptiProfilerInitialize(&init);
    if (c.initResult != CUPTI_SUCCESS) return;
    auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = 0;
    if (c.api.cuptiDeviceGetChipName(&chip) == CUPTI_SUCCESS && chip.pChipName) c.chip = chip.pChipName;
  });
  return c;
}

}  // namespace

struct TrafficCounters::State {
  const CuptiApi* api = nullptr;
  CUcontext ctx = nullptr;
  std::vector<std::string> metricNames;
  std::vector<const char*> metrics;
  std::vector<uint8_t> config;
  CUpti_Profiler_Host_Object* host = nullptr;
  size_t passes = 0;
  std::string library;
  std::string chip;
};

TrafficCounters::TrafficCounters(const std::vector<std::string>& metrics) : state_(std::make_unique<State>()) {
  Cupti& c = cupti();
  if (!c.failure.empty()) throw ProbeFailure(ErrorCode::Unsupported, c.failure);
  ok(c.api, c.initResult, "cuptiProfilerInitialize");
  State& s = *state_;
  s.api = &c.api;
  s.library = c.library;
  s.chip = c.chip;
  const CuptiApi& api = c.api;
  s.ctx = current_context();
  if (s.chip.empty()) throw ProbeFailure(ErrorCode::Unsupported, "CUPTI cannot profile this device: cuptiDeviceGetChipName failed");
  s.metricNames = metrics;
  for (const std::string& m : s.metricNames) s.metrics.push_back(m.c_str());

  // The counter availability image is where a non-admin user first meets CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.
  auto avail = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = s.ctx;
  ok(api, api.cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  ok(api, api.cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");

  auto host = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = s.chip.c_str();
  host.pCounterAvailabilityImage = availability.data();
  ok(api, api.cuptiProfilerHostInitialize(&host), "cuptiProfilerHostInitialize");
  s.host = host.pHostObject;
  auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = s.host;
  add.ppMetricNames = s.metrics.data();
  add.numMetrics = s.metrics.size();
  const CUptiResult added = api.cuptiProfilerHostConfigAddMetrics(&add);
  if (added == CUPTI_ERROR_INVALID_METRIC_NAME || added == CUPTI_ERROR_INVALID_PARAMETER)
    throw ProbeFailure(ErrorCode::BadRequest, "args.metrics must name metrics this GPU counts (" + result_name(api, added) + ")");
  ok(api, added, "cuptiProfilerHostConfigAddMetrics");
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = s.host;
  ok(api, api.cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
  s.config.resize(size.configImageSize);
  auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = s.host;
  image.configImageSize = s.config.size();
  image.pConfigImage = s.config.data();
  ok(api, api.cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");
  auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = s.config.size();
  passes.pConfigImage = s.config.data();
  ok(api, api.cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses");
  s.passes = passes.numOfPasses;
}

TrafficCounters::~TrafficCounters() {
  if (state_ && state_->host) {
    auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = state_->host;
    (void)state_->api->cuptiProfilerHostDeinitialize(&p);
  }
}

namespace {

// Enable ... Disable, also when a call between them throws.
class RangeProfiler {
 public:
  RangeProfiler(const CuptiApi& api, CUcontext ctx) : api_(api) {
    auto p = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    p.ctx = ctx;
    ok(api_, api_.cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
    object_ = p.pRangeProfilerObject;
  }
  ~RangeProfiler() {
    if (started_) {
      auto p = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = object_;
      (void)api_.cuptiRangeProfilerStop(&p);
    }
    auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object_;
    (void)api_.cuptiRangeProfilerDisable(&p);
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  CUpti_RangeProfiler_Object* get() const { return object_; }
  void start() {
    auto p = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object_;
    ok(api_, api_.cuptiRangeProfilerStart(&p), "cuptiRangeProfilerStart");
    started_ = true;
  }
  bool stop() {
    auto p = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object_;
    started_ = false;
    ok(api_, api_.cuptiRangeProfilerStop(&p), "cuptiRangeProfilerStop");
    return p.isAllPassSubmitted != 0;
  }

 private:
  const CuptiApi& api_;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  bool started_ = false;
};

}  // namespace

std::vector<CounterRange> TrafficCounters::measure(const std::function<void()>& launches, size_t maxRanges) {
  State& s = *state_;
  const CuptiApi& api = *s.api;
  RangeProfiler profiler(api, s.ctx);
  auto size = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = profiler.get();
  size.pMetricNames = s.metrics.data();
  size.numMetrics = s.metrics.size();
  size.maxNumOfRanges = maxRanges;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(maxRanges);
  ok(api, api.cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  std::vector<uint8_t> data(size.counterDataSize);
  auto init =
      params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = profiler.get();
  init.counterDataSize = data.size();
  init.pCounterData = data.data();
  ok(api, api.cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");
  auto config = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = profiler.get();
  config.configSize = s.config.size();
  config.pConfig = s.config.data();
  config.counterDataImageSize = data.size();
  config.pCounterDataImage = data.data();
  config.range = CUPTI_AutoRange;
  config.replayMode = CUPTI_KernelReplay;
  config.maxRangesPerPass = maxRanges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  ok(api, api.cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig");
  profiler.start();
  launches();
  if (!profiler.stop()) throw ProbeFailure(ErrorCode::Internal, "cuptiRangeProfilerStop: kernel replay left passes unsubmitted");
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = profiler.get();
  ok(api, api.cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
  if (decode.numOfRangeDropped > 0)
    throw ProbeFailure(ErrorCode::Internal, "CUPTI dropped " + std::to_string(decode.numOfRangeDropped) + " profiled kernel(s)");
  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  ok(api, api.cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  std::vector<CounterRange> out;
  for (size_t r = 0; r < info.numTotalRanges; ++r) {
    auto range =
        params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
    range.pCounterDataImage = data.data();
    range.counterDataImageSize = data.size();
    range.rangeIndex = r;
    range.rangeDelimiter = "/";
    ok(api, api.cuptiRangeProfilerCounterDataGetRangeInfo(&range), "cuptiRangeProfilerCounterDataGetRangeInfo");
    CounterRange one{range.rangeName ? range.rangeName : "", std::vector<double>(s.metrics.size())};
    auto eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    eval.pHostObject = s.host;
    eval.pCounterDataImage = data.data();
    eval.counterDataImageSize = data.size();
    eval.rangeIndex = r;
    eval.ppMetricNames = s.metrics.data();
    eval.numMetrics = s.metrics.size();
    eval.pMetricValues = one.values.data();
    ok(api, api.cuptiProfilerHostEvaluateToGpuValues(&eval), "cuptiProfilerHostEvaluateToGpuValues");
    out.push_back(std::move(one));
  }
  return out;
}

size_t TrafficCounters::passes() const { return state_->passes; }
const std::string& TrafficCounters::library() const { return state_->library; }
const std::string& TrafficCounters::chip() const { return state_->chip; }

#else  // AMD

struct TrafficCounters::State {
  std::string none;
};

TrafficCounters::TrafficCounters(const std::vector<std::string>&) {
  throw ProbeFailure(ErrorCode::Unsupported,
                     "hardware counters are read through CUPTI on NVIDIA only; rocprofiler is not wired in (use method timing)");
}
TrafficCounters::~TrafficCounters() = default;
std::vector<CounterRange> TrafficCounters::measure(const std::function<void()>&, size_t) { return {}; }
size_t TrafficCounters::passes() const { return 0; }
const std::string& TrafficCounters::library() const { return state_->none; }
const std::string& TrafficCounters::chip() const { return state_->none; }

#endif

}  // namespace topod::probe
