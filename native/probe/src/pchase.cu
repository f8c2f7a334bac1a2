// Pointer-chase kernels (thesis §4). Each timed load sits between two clock
// reads; the loaded index is stored to shared memory before the second read,
// so in-order issue makes that read wait for the load to complete. The store
// goes to one sink word per chaser, overwritten each step: a sink per sample
// would double the shared memory a sweep takes, and the carveout it forces
// comes out of the L1 being measured. Warm-up laps are walked by every thread
// of the chaser's block (warm_block); thread 0 alone times. The consumer
// self-test times the same loop once more with the store after the stop clock.
#include "pchase.h"

#include <algorithm>
#include <string>

#include "device-ops.h"
#include "l2-flush.h"
#include "probe-error.h"
#include "profile.h"
#include "runtime.h"

namespace topod::probe {

namespace {

__constant__ uint32_t g_constantChain[kConstantChainElems];

constexpr uint32_t kMaxSmIds = 1024;
constexpr uint32_t kPlacementAttempts = 8;

template <Space S>
__device__ __forceinline__ uint32_t step(const ChaserView& c, const uint32_t* sharedChain, uint32_t j) {
  if constexpr (S == Space::GlobalCa) return ops::load_global_ca(c.global + j);
  if constexpr (S == Space::GlobalCg) return ops::load_global_cg(c.global + j);
  if constexpr (S == Space::Readonly) return ops::load_readonly(c.global + j);
  if constexpr (S == Space::Texture) return ops::load_texture(c.tex, j);
  if constexpr (S == Space::Constant) return ops::load_constant(g_constantChain, j);
  if constexpr (S == Space::Shared) return ops::load_shared(sharedChain + j);
  if constexpr (S == Space::Global) return ops::load_global(c.global + j);
}

// Calls f(SpaceTag<S>{}) for the chaser's space, so one generic body is instantiated per load flavour.
template <Space S>
struct SpaceTag {
  static constexpr Space value = S;
};

template <typename F>
__device__ __forceinline__ void with_space(Space space, F&& f) {
  switch (space) {
    case Space::GlobalCa:
      f(SpaceTag<Space::GlobalCa>{});
      return;
    case Space::GlobalCg:
      f(SpaceTag<Space::GlobalCg>{});
      return;
    case Space::Readonly:
      f(SpaceTag<Space::Readonly>{});
      return;
    case Space::Texture:
      f(SpaceTag<Space::Texture>{});
      return;
    case Space::Constant:
      f(SpaceTag<Space::Constant>{});
      return;
    case Space::Shared:
      f(SpaceTag<Space::Shared>{});
      return;
    case Space::Global:
      f(SpaceTag<Space::Global>{});
      return;
  }
}

// A walk from the chain's start: untimed loads, timed loads, untimed loads.
struct WalkPlan {
  uint32_t untimedBefore;
  uint32_t timed;
  uint32_t untimedAfter;
};

struct WalkOut {
  uint32_t* latencies;  // shared memory, plan.timed entries
  uint32_t* sink;       // shared memory, one word
  uint64_t deadlineNs;
  uint32_t* timedOut;  // global flag
};

__device__ __forceinline__ bool past_deadline(uint32_t k, const WalkOut& out) {
  if ((k & 1023u) != 1023u || ops::globaltimer_ns() <= out.deadlineNs) return false;
  atomicExch(out.timedOut, 1u);
  return true;
}

template <Space S>
__device__ uint32_t walk_untimed(const ChaserView& c, const uint32_t* sc, uint32_t j, uint32_t count, const WalkOut& out) {
  for (uint32_t k = 0; k < count; ++k) {
    j = step<S>(c, sc, j);
    if (past_deadline(k, out)) break;
  }
  return j;
}

// Whether the stop clock of a timed load waits for the loaded value.
enum class StopClock {
  // clock, load, store of the loaded index to the sink, clock: in-order issue
  // makes the second clock read wait for the load. Every measurement.
  AfterConsumer,
  // clock, load, clock, store: the second read issues right after the load
  // (selftest.consumer's contrast; the index still feeds the next load and is
  // stored, so the load stays).
  BeforeConsumer,
};

// The timed loop; scripts/device/sass-check.sh and the PTX check in
// test/integration/probe/compile.test.ts look for exactly this shape.
template <Space S, StopClock Stop>
__device__ uint32_t walk_timed(const ChaserView& c, const uint32_t* sc, uint32_t j, uint32_t count, const WalkOut& out) {
#pragma unroll 1
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t t0 = ops::clock32();
    j = step<S>(c, sc, j);
    if constexpr (Stop == StopClock::AfterConsumer) ops::consume(out.sink, j);
    const uint32_t t1 = ops::clock32();
    if constexpr (Stop == StopClock::BeforeConsumer) ops::consume(out.sink, j);
    out.latencies[k] = t1 - t0;
  }
  return j;
}

// One thread's plan, in order (pchase.pair's chasers).
template <Space S>
__device__ uint32_t walk_space(const ChaserView& c, const uint32_t* sc, const WalkPlan& plan, const WalkOut& out) {
  uint32_t j = walk_untimed<S>(c, sc, c.start, plan.untimedBefore, out);
  j = walk_timed<S, StopClock::AfterConsumer>(c, sc, j, plan.timed, out);
  j = walk_untimed<S>(c, sc, j, plan.untimedAfter, out);
  // ptxas drops loads whose results are unused, asm volatile or not: without
  // this store an untimed walk that ends a step (pair step 1) would vanish.
  ops::consume(out.sink, j);
  return j;
}

__device__ uint32_t walk(const ChaserView& c, const uint32_t* sc, const WalkPlan& plan, const WalkOut& out) {
  uint32_t j = 0;
  with_space(c.space, [&](auto tag) { j = walk_space<decltype(tag)::value>(c, sc, plan, out); });
  return j;
}

// An untimed lap by every thread of the block: thread t loads nodes t,
// t + blockDim.x, ... in index order with the walk's own load flavour, so the
// lap touches exactly the lines a chain-order lap touches at nodes / blockDim.x
// independent loads a thread instead of `nodes` dependent ones. The folded
// values go to the sink so that ptxas keeps the loads. Shared-space chains
// have nothing to warm (stage_chain copied them).
template <Space S>
__device__ void warm_block(const ChaserView& c, const WalkOut& out) {
  if constexpr (S != Space::Shared) {
    uint32_t folded = 0;
    uint32_t k = 0;
    for (uint32_t node = threadIdx.x; node < c.nodes; node += blockDim.x, ++k) {
      folded ^= step<S>(c, nullptr, c.start + node * c.strideElems);
      if (past_deadline(k, out)) break;
    }
    ops::consume(out.sink, folded);
  }
}

// A chaser's region of dynamic shared memory (chaser_shared_bytes): latencies, the sink word, then its chain when it lives there.
struct Slot {
  uint32_t* latencies;
  uint32_t* sink;
  uint32_t* chain;
};

__device__ Slot slot_at(uint32_t* base, uint32_t samples) { return Slot{base, base + samples, base + samples + kSinkWords}; }

// All threads of the block copy a shared-space chain into its slot.
__device__ void stage_chain(const ChaserView& c, const Slot& s) {
  if (c.space != Space::Shared) return;
  for (uint32_t i = threadIdx.x; i < c.elems; i += blockDim.x) s.chain[i] = c.global[i];
}

__device__ void copy_out(const Slot& s, uint32_t samples, uint32_t* dst) {
  for (uint32_t k = 0; k < samples; ++k) dst[k] = s.latencies[k];
}

// Threads of a chase block: they all warm, thread 0 times. 32 registers a
// thread today (ptxas -v), well inside what 1024 threads a block allow.
constexpr uint32_t kChaseThreads = 1024;

struct ChaseLaunch {
  const ChaserView* chasers;
  uint32_t count;
  int targetSm;
  uint32_t warmup;
  uint32_t samples;
  uint64_t budgetNs;
  uint32_t* smOwner;       // kMaxSmIds claim flags
  uint32_t* claimed;       // chasers handed out so far
  uint32_t* outSm;         // per chaser; ~0u when it did not run
  uint32_t* outLatencies;  // count * samples * walks
  uint32_t* timedOut;
};

// What thread 0 times after the warm-up.
enum class ChaseWalks {
  Consumed,                // pchase, pchase.batch: `samples` loads, stop clock after the consumer
  ConsumedThenUnconsumed,  // selftest.consumer: those, then the chain's next `samples` loads without the consumer
};

__host__ __device__ constexpr uint32_t walk_count(ChaseWalks w) { return w == ChaseWalks::Consumed ? 1u : 2u; }

// Every block claims its SM; the first block on an SM takes the next chaser.
template <ChaseWalks W>
__device__ void chase_block(const ChaseLaunch& a) {
  extern __shared__ uint32_t smem[];
  __shared__ int job;
  if (threadIdx.x == 0) {
    const uint32_t sm = ops::sm_id();
    job = -1;
    if (a.targetSm >= 0) {
      if (sm == static_cast<uint32_t>(a.targetSm) && atomicCAS(a.claimed, 0u, 1u) == 0u) job = 0;
    } else if (sm < kMaxSmIds && atomicCAS(&a.smOwner[sm], 0u, 1u) == 0u) {
      const uint32_t n = atomicAdd(a.claimed, 1u);
      if (n < a.count) job = static_cast<int>(n);
    }
    if (job >= 0) a.outSm[job] = sm;
  }
  __syncthreads();
  if (job < 0) return;
  const ChaserView c = a.chasers[job];
  const Slot s = slot_at(smem, a.samples);
  const WalkOut out{s.latencies, s.sink, ops::globaltimer_ns() + a.budgetNs, a.timedOut};
  stage_chain(c, s);
  if (a.warmup) with_space(c.space, [&](auto tag) { warm_block<decltype(tag)::value>(c, out); });
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint32_t* dst = a.outLatencies + static_cast<uint64_t>(job) * a.samples * walk_count(W);
  with_space(c.space, [&](auto tag) {
    constexpr Space S = decltype(tag)::value;
    uint32_t j = walk_timed<S, StopClock::AfterConsumer>(c, s.chain, c.start, a.samples, out);
    copy_out(s, a.samples, dst);
    if constexpr (W == ChaseWalks::ConsumedThenUnconsumed) {
      j = walk_timed<S, StopClock::BeforeConsumer>(c, s.chain, j, a.samples, out);
      copy_out(s, a.samples, dst + a.samples);
    }
    ops::consume(out.sink, j);
  });
}

// Two kernels, not one with a flag, so the timing checks can tell the self-test's loops by name.
__global__ void __launch_bounds__(kChaseThreads) chase_kernel(ChaseLaunch a) { chase_block<ChaseWalks::Consumed>(a); }
__global__ void __launch_bounds__(kChaseThreads) consumer_selftest_kernel(ChaseLaunch a) {
  chase_block<ChaseWalks::ConsumedThenUnconsumed>(a);
}

struct PairLaunch {
  ChaserView first, second;
  bool sameSm;
  uint32_t firstThread, secondThread;
  uint32_t samples;
  uint32_t secondSlotOffset;  // words from smem to the second slot (0 on different SMs)
  uint64_t budgetNs;
  uint32_t* sync;  // [0] arrivals, [1] step 1 done, [2] step 2 done; chosen SMs: [3] first claimed, [4] second claimed, [5] blocks started,
                   // [6] one never ran
  bool chosenSms;
  uint32_t firstSm, secondSm;
  uint32_t* outSm;         // [2]
  uint32_t* outLatencies;  // 2 * samples: first's step 3, then second's step 2
  uint32_t* timedOut;
};

__device__ bool wait_flag(const uint32_t* flag, uint32_t value, const WalkOut& out) {
  while (*reinterpret_cast<const volatile uint32_t*>(flag) < value) {
    if (ops::globaltimer_ns() > out.deadlineNs) {
      atomicExch(out.timedOut, 1u);
      return false;
    }
  }
  return true;
}

// No fence: the signalling thread publishes no data (its loads completed, being
// a dependent chain), and a GPU-scope fence would invalidate its L1 lines,
// which is exactly what step 3 measures.
__device__ void raise_flag(uint32_t* flag) { atomicAdd(flag, 1u); }

// Steps (protocol.ts PchasePairArgs): 1. first fills, 2. second walks, 3. first re-walks, timed.
// Same SM: two warps of one block ordered by __syncthreads; different SMs: two
// blocks ordered by flags in global memory after both have arrived.
// Chosen SMs: which chaser this block runs (0 first, 1 second, 2 none), the first block on each chosen SM claiming it.
__device__ uint32_t claim_pair_role(const PairLaunch& a) {
  __shared__ uint32_t role;
  if (threadIdx.x == 0) {
    atomicAdd(&a.sync[5], 1u);
    const uint32_t sm = ops::sm_id();
    role = 2u;
    if (sm == a.firstSm && atomicCAS(&a.sync[3], 0u, 1u) == 0u)
      role = 0u;
    else if (sm == a.secondSm && atomicCAS(&a.sync[4], 0u, 1u) == 0u)
      role = 1u;
  }
  __syncthreads();
  return role;
}

// Waits for the other chaser's arrival; on chosen SMs gives up once every block has started without it.
__device__ bool wait_arrival(const PairLaunch& a, const WalkOut& out) {
  while (*reinterpret_cast<const volatile uint32_t*>(&a.sync[0]) < 2u) {
    if (a.chosenSms && *reinterpret_cast<const volatile uint32_t*>(&a.sync[5]) == gridDim.x &&
        (*reinterpret_cast<const volatile uint32_t*>(&a.sync[3]) == 0u || *reinterpret_cast<const volatile uint32_t*>(&a.sync[4]) == 0u)) {
      atomicExch(&a.sync[6], 1u);
      return false;
    }
    if (ops::globaltimer_ns() > out.deadlineNs) {
      atomicExch(out.timedOut, 1u);
      return false;
    }
  }
  return true;
}

__global__ void pair_kernel(PairLaunch a) {
  extern __shared__ uint32_t smem[];
  const uint32_t role = a.chosenSms ? claim_pair_role(a) : (a.sameSm ? 0u : blockIdx.x);
  if (role > 1u) return;
  const bool inFirstBlock = a.sameSm || role == 0u;
  const bool inSecondBlock = a.sameSm || role == 1u;
  const bool isFirst = inFirstBlock && threadIdx.x == a.firstThread;
  const bool isSecond = inSecondBlock && threadIdx.x == a.secondThread;
  const Slot s0 = slot_at(smem, a.samples);
  const Slot s1 = slot_at(smem + a.secondSlotOffset, a.samples);
  if (inFirstBlock) stage_chain(a.first, s0);
  if (inSecondBlock) stage_chain(a.second, s1);
  __syncthreads();
  const uint64_t deadlineNs = ops::globaltimer_ns() + a.budgetNs;
  const WalkOut out0{s0.latencies, s0.sink, deadlineNs, a.timedOut};
  const WalkOut out1{s1.latencies, s1.sink, deadlineNs, a.timedOut};

  if (!a.sameSm && (isFirst || isSecond)) {
    atomicAdd(&a.sync[0], 1u);
    if (!wait_arrival(a, out0)) return;
  }
  if (isFirst) a.outSm[0] = ops::sm_id();
  if (isSecond) a.outSm[1] = ops::sm_id();

  if (isFirst) {
    walk(a.first, s0.chain, WalkPlan{a.first.nodes, 0u, 0u}, out0);
    if (!a.sameSm) raise_flag(&a.sync[1]);
  }
  if (a.sameSm) __syncthreads();
  if (isSecond) {
    if (a.sameSm || wait_flag(&a.sync[1], 1u, out1)) {
      const uint32_t rest = a.second.nodes > a.samples ? a.second.nodes - a.samples : 0u;
      walk(a.second, s1.chain, WalkPlan{0u, a.samples, rest}, out1);
    }
    if (!a.sameSm) raise_flag(&a.sync[2]);
    copy_out(s1, a.samples, a.outLatencies + a.samples);
  }
  if (a.sameSm) __syncthreads();
  if (isFirst) {
    if (a.sameSm || wait_flag(&a.sync[2], 1u, out0)) walk(a.first, s0.chain, WalkPlan{0u, a.samples, 0u}, out0);
    copy_out(s0, a.samples, a.outLatencies);
  }
}

// Sets a kernel's dynamic shared memory and carveout for one launch, restoring "no preference" afterwards.
class KernelSharedConfig {
 public:
  KernelSharedConfig(const void* kernel, uint64_t bytes, int carveoutPercent) : kernel_(kernel) {
    check(compat::set_kernel_shared(kernel, static_cast<int>(bytes), carveoutPercent), "configure kernel shared memory");
  }
  ~KernelSharedConfig() { (void)compat::set_kernel_shared(kernel_, 0, -1); }

 private:
  const void* kernel_;
};

// Sets the context's L2 fetch granularity for one launch (LaunchSettings), restoring the previous limit afterwards.
class L2FetchGranularityLimit {
 public:
  explicit L2FetchGranularityLimit(uint32_t bytes) {
    if (bytes == 0) return;
    const hipError_t err = compat::get_l2_fetch_granularity(&previous_);
    if (err == hipErrorNotSupported) throw ProbeFailure(ErrorCode::Unsupported, "this runtime has no L2 fetch-granularity limit");
    check(err, "read the L2 fetch granularity");
    check(compat::set_l2_fetch_granularity(bytes), "set the L2 fetch granularity");
    set_ = true;
  }
  ~L2FetchGranularityLimit() {
    if (set_) (void)compat::set_l2_fetch_granularity(previous_);
  }
  L2FetchGranularityLimit(const L2FetchGranularityLimit&) = delete;
  L2FetchGranularityLimit& operator=(const L2FetchGranularityLimit&) = delete;

 private:
  size_t previous_ = 0;
  bool set_ = false;
};

// The carveout a launch asks for: the request's, else MT4G's PreferL1 (0) unless a chain lives in shared memory (100).
int carveout_for(const LaunchSettings& launch, bool anyShared) {
  if (launch.carveoutPercent >= 0) return launch.carveoutPercent;
  return anyShared ? 100 : 0;
}

LaunchInfo launch_info(const void* kernel, uint64_t dynamicSharedBytes, int carveoutPercent, bool flushed, uint32_t fetchGranularity) {
  size_t staticBytes = 0;
  check(compat::kernel_static_shared_bytes(kernel, &staticBytes), "hipFuncGetAttributes");
  return LaunchInfo{static_cast<uint32_t>(carveoutPercent), dynamicSharedBytes + staticBytes, flushed, fetchGranularity};
}

void throw_if_timed_out(const DeviceBuffer<uint32_t>& flag, const char* what) {
  uint32_t timedOut = 0;
  flag.download(&timedOut, 1);
  if (timedOut) throw ProbeFailure(ErrorCode::Timeout, std::string(what) + " overran its deadline on the device");
}

void ensure_shared_fits(uint64_t bytes, const ChaseTiming& t) {
  if (bytes > t.sharedLimitBytes) {
    throw ProbeFailure(ErrorCode::BadRequest, "the chase needs " + std::to_string(bytes) +
                                                  " bytes of shared memory (samples and shared-space chains); a block may use " +
                                                  std::to_string(t.sharedLimitBytes));
  }
}

// run_chasers for either chase kernel: each run's latencies are `walks` series of timing.samples, back to back.
template <ChaseWalks W>
ChaseOutcome launch_chasers(const std::vector<ChaserView>& chasers, const ChaseTiming& timing, int targetSm, const LaunchSettings& launch,
                            const char* what) {
  constexpr uint32_t walks = walk_count(W);
  const void* kernel =
      W == ChaseWalks::Consumed ? reinterpret_cast<const void*>(chase_kernel) : reinterpret_cast<const void*>(consumer_selftest_kernel);
  uint64_t sharedBytes = 0;
  bool anyShared = false;
  for (const ChaserView& c : chasers) {
    sharedBytes = std::max(sharedBytes, chaser_shared_bytes(c, timing.samples));
    anyShared = anyShared || c.space == Space::Shared;
  }
  ensure_shared_fits(sharedBytes, timing);
  const int carveout = carveout_for(launch, anyShared);
  KernelSharedConfig config(kernel, sharedBytes, carveout);
  L2FetchGranularityLimit fetch(launch.l2FetchGranularityBytes);
  L2Flush l2(launch.flushBytes, timing.multiprocessors);

  ChaseOutcome outcome{std::vector<ChaseRun>(chasers.size()),
                       launch_info(kernel, sharedBytes, carveout, l2.enabled(), launch.l2FetchGranularityBytes)};
  std::vector<size_t> pending(chasers.size());
  for (size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  DeviceBuffer<uint32_t> timedOut(1);
  timedOut.zero();
  for (uint32_t attempt = 0; !pending.empty(); ++attempt) {
    // Placement failed repeatedly: let the chaser run wherever its block lands and report that SM.
    const bool placed = attempt < kPlacementAttempts;
    if (!placed && targetSm < 0 && attempt > kPlacementAttempts + 2)
      throw ProbeFailure(ErrorCode::Internal, "could not give every chaser an SM");
    std::vector<ChaserView> views;
    for (size_t i : pending) views.push_back(chasers[i]);
    DeviceBuffer<ChaserView> deviceViews(views.size());
    deviceViews.upload(views.data(), views.size());
    DeviceBuffer<uint32_t> control(kMaxSmIds + 1);
    control.zero();
    DeviceBuffer<uint32_t> outSm(views.size());
    check(hipMemset(outSm.get(), 0xff, outSm.bytes()), "hipMemset");
    const size_t perRun = size_t{timing.samples} * walks;
    DeviceBuffer<uint32_t> outLatencies(views.size() * perRun);

    const ChaseLaunch a{deviceViews.get(),
                        static_cast<uint32_t>(views.size()),
                        placed ? targetSm : -1,
                        timing.warmup ? 1u : 0u,
                        timing.samples,
                        timing.budgetNs,
                        control.get(),
                        control.get() + kMaxSmIds,
                        outSm.get(),
                        outLatencies.get(),
                        timedOut.get()};
    const bool single = views.size() == 1 && a.targetSm < 0;
    const uint32_t blocks = single ? 1u : std::max(2u * timing.multiprocessors, 1u);
    // After everything above wrote to the device, so nothing of the chains is left in the L2.
    {
      const profile::Span span("flush");
      l2.flush();
    }
    {
      const profile::Span span("kernel");
      if constexpr (W == ChaseWalks::Consumed) {
        chase_kernel<<<blocks, kChaseThreads, sharedBytes>>>(a);
      } else {
        consumer_selftest_kernel<<<blocks, kChaseThreads, sharedBytes>>>(a);
      }
      check_launch(what);
    }
    throw_if_timed_out(timedOut, what);

    std::vector<uint32_t> sms(views.size());
    outSm.download(sms.data(), sms.size());
    std::vector<uint32_t> latencies(views.size() * perRun);
    outLatencies.download(latencies.data(), latencies.size());
    std::vector<size_t> stillPending;
    for (size_t k = 0; k < views.size(); ++k) {
      const size_t i = pending[k];
      if (sms[k] == ~0u) {
        stillPending.push_back(i);
        continue;
      }
      outcome.runs[i].smId = sms[k];
      outcome.runs[i].latenciesCycles.assign(latencies.begin() + k * perRun, latencies.begin() + (k + 1) * perRun);
    }
    pending.swap(stillPending);
  }
  return outcome;
}

}  // namespace

void upload_constant_chain(const uint32_t* deviceChain, uint32_t elems, uint32_t offsetElems) {
  check(hipMemcpyToSymbol(HIP_SYMBOL(g_constantChain), deviceChain, elems * 4u, offsetElems * 4u, hipMemcpyDeviceToDevice),
        "hipMemcpyToSymbol(constant chain)");
}

ChaseOutcome run_chasers(const std::vector<ChaserView>& chasers, const ChaseTiming& timing, int targetSm, const LaunchSettings& launch) {
  return launch_chasers<ChaseWalks::Consumed>(chasers, timing, targetSm, launch, "pchase");
}

ConsumerSelfTestRun run_consumer_selftest(const ChaserView& chaser, const ChaseTiming& timing, int targetSm, const LaunchSettings& launch) {
  ChaseOutcome o = launch_chasers<ChaseWalks::ConsumedThenUnconsumed>({chaser}, timing, targetSm, launch, "selftest.consumer");
  const std::vector<uint32_t>& all = o.runs.at(0).latenciesCycles;
  ConsumerSelfTestRun run;
  run.smId = o.runs[0].smId;
  run.consumedLatenciesCycles.assign(all.begin(), all.begin() + timing.samples);
  run.unconsumedLatenciesCycles.assign(all.begin() + timing.samples, all.end());
  run.launch = o.launch;
  return run;
}

PairRun run_pair(const ChaserView& first, const ChaserView& second, const PairPlacementSpec& p, const ChaseTiming& timing,
                 const LaunchSettings& launch) {
  const uint64_t firstBytes = chaser_shared_bytes(first, timing.samples);
  const uint64_t secondBytes = chaser_shared_bytes(second, timing.samples);
  const uint64_t sharedBytes = p.sameSm ? firstBytes + secondBytes : std::max(firstBytes, secondBytes);
  ensure_shared_fits(sharedBytes, timing);
  const bool anyShared = first.space == Space::Shared || second.space == Space::Shared;
  const int carveout = carveout_for(launch, anyShared);
  const void* kernel = reinterpret_cast<const void*>(pair_kernel);
  KernelSharedConfig config(kernel, sharedBytes, carveout);
  const LaunchInfo info = launch_info(kernel, sharedBytes, carveout, false, 0);

  const uint32_t threads = 32u * (std::max(p.firstWarp, p.secondWarp) + 1u);
  DeviceBuffer<uint32_t> timedOut(1);
  for (uint32_t attempt = 0; attempt < kPlacementAttempts; ++attempt) {
    timedOut.zero();
    DeviceBuffer<uint32_t> sync(7);
    sync.zero();
    DeviceBuffer<uint32_t> outSm(2);
    DeviceBuffer<uint32_t> outLatencies(2u * timing.samples);
    const PairLaunch a{first,
                       second,
                       p.sameSm,
                       p.firstWarp * 32u + p.firstLane,
                       p.secondWarp * 32u + p.secondLane,
                       timing.samples,
                       p.sameSm ? static_cast<uint32_t>(firstBytes / 4) : 0u,
                       timing.budgetNs,
                       sync.get(),
                       p.chosenSms,
                       p.firstSm,
                       p.secondSm,
                       outSm.get(),
                       outLatencies.get(),
                       timedOut.get()};
    pair_kernel<<<p.sameSm ? 1u : (p.chosenSms ? p.gridBlocks : 2u), threads, sharedBytes>>>(a);
    check_launch("pair_kernel");
    if (p.chosenSms) {
      uint32_t state[7];
      sync.download(state, 7);
      if (state[3] == 0u) throw ProbeFailure(ErrorCode::Unsupported, "sm " + std::to_string(p.firstSm) + " never ran a block");
      if (state[4] == 0u) throw ProbeFailure(ErrorCode::Unsupported, "sm " + std::to_string(p.secondSm) + " never ran a block");
    }
    throw_if_timed_out(timedOut, "pchase.pair");
    uint32_t sms[2];
    outSm.download(sms, 2);
    if (!p.sameSm && sms[0] == sms[1]) continue;  // both blocks landed on one SM: place again
    std::vector<uint32_t> latencies(2u * timing.samples);
    outLatencies.download(latencies.data(), latencies.size());
    PairRun run;
    run.firstSmId = sms[0];
    run.secondSmId = sms[1];
    run.firstLatenciesCycles.assign(latencies.begin(), latencies.begin() + timing.samples);
    run.secondLatenciesCycles.assign(latencies.begin() + timing.samples, latencies.end());
    run.launch = info;
    return run;
  }
  throw ProbeFailure(ErrorCode::Unsupported, "could not place the two chasers on different SMs");
}

}  // namespace topod::probe
