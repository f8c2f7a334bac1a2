// Pointer-chase kernels (thesis §4). Each timed load sits between two clock
// reads; the loaded index is stored to shared memory before the second read,
// so in-order issue makes that read wait for the load to complete. The store
// goes to one sink word per chaser, overwritten each step: a sink per sample
// would double the shared memory a sweep takes, and the carveout it forces
// comes out of the L1 being measured.
#include "pchase.h"

#include <algorithm>
#include <string>

#include "device-ops.h"
#include "probe-error.h"
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
  uint32_t* timedOut;   // global flag
};

template <Space S>
__device__ uint32_t walk_untimed(const ChaserView& c, const uint32_t* sc, uint32_t j, uint32_t count, const WalkOut& out) {
  for (uint32_t k = 0; k < count; ++k) {
    j = step<S>(c, sc, j);
    if ((k & 1023u) == 1023u && ops::globaltimer_ns() > out.deadlineNs) {
      atomicExch(out.timedOut, 1u);
      break;
    }
  }
  return j;
}

template <Space S>
__device__ uint32_t walk_space(const ChaserView& c, const uint32_t* sc, const WalkPlan& plan, const WalkOut& out) {
  uint32_t j = walk_untimed<S>(c, sc, c.start, plan.untimedBefore, out);
#pragma unroll 1
  for (uint32_t k = 0; k < plan.timed; ++k) {
    const uint32_t t0 = ops::clock32();
    j = step<S>(c, sc, j);
    // volatile: a plain store to the same word every step could be merged into the last one.
    *reinterpret_cast<volatile uint32_t*>(out.sink) = j;
    const uint32_t t1 = ops::clock32();
    out.latencies[k] = t1 - t0;
  }
  j = walk_untimed<S>(c, sc, j, plan.untimedAfter, out);
  // ptxas drops loads whose results are unused, asm volatile or not: without
  // this store an untimed walk that ends a step (pair step 1) would vanish.
  *out.sink = j;
  return j;
}

__device__ uint32_t walk(const ChaserView& c, const uint32_t* sc, const WalkPlan& plan, const WalkOut& out) {
  switch (c.space) {
    case Space::GlobalCa: return walk_space<Space::GlobalCa>(c, sc, plan, out);
    case Space::GlobalCg: return walk_space<Space::GlobalCg>(c, sc, plan, out);
    case Space::Readonly: return walk_space<Space::Readonly>(c, sc, plan, out);
    case Space::Texture: return walk_space<Space::Texture>(c, sc, plan, out);
    case Space::Constant: return walk_space<Space::Constant>(c, sc, plan, out);
    case Space::Shared: return walk_space<Space::Shared>(c, sc, plan, out);
  }
  return 0;
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

struct ChaseLaunch {
  const ChaserView* chasers;
  uint32_t count;
  int targetSm;
  uint32_t warmup;
  uint32_t samples;
  uint64_t budgetNs;
  uint32_t* smOwner;   // kMaxSmIds claim flags
  uint32_t* claimed;   // chasers handed out so far
  uint32_t* outSm;     // per chaser; ~0u when it did not run
  uint32_t* outLatencies;  // count * samples
  uint32_t* timedOut;
};

// Every block claims its SM; the first block on an SM takes the next chaser.
__global__ void chase_kernel(ChaseLaunch a) {
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
  stage_chain(c, s);
  __syncthreads();
  if (threadIdx.x != 0) return;
  const WalkOut out{s.latencies, s.sink, ops::globaltimer_ns() + a.budgetNs, a.timedOut};
  walk(c, s.chain, WalkPlan{a.warmup ? c.nodes : 0u, a.samples, 0u}, out);
  copy_out(s, a.samples, a.outLatencies + static_cast<uint64_t>(job) * a.samples);
}

struct PairLaunch {
  ChaserView first, second;
  bool sameSm;
  uint32_t firstThread, secondThread;
  uint32_t samples;
  uint32_t secondSlotOffset;  // words from smem to the second slot (0 on different SMs)
  uint64_t budgetNs;
  uint32_t* sync;  // [0] arrivals, [1] step 1 done, [2] step 2 done
  uint32_t* outSm;  // [2]
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
__global__ void pair_kernel(PairLaunch a) {
  extern __shared__ uint32_t smem[];
  const bool inFirstBlock = a.sameSm || blockIdx.x == 0;
  const bool inSecondBlock = a.sameSm || blockIdx.x == 1;
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
    wait_flag(&a.sync[0], 2u, out0);
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
  KernelSharedConfig(const void* kernel, uint64_t bytes, bool preferShared) : kernel_(kernel) {
    check(compat::set_kernel_shared(kernel, static_cast<int>(bytes), preferShared ? 100 : 0), "configure kernel shared memory");
  }
  ~KernelSharedConfig() { (void)compat::set_kernel_shared(kernel_, 0, -1); }

 private:
  const void* kernel_;
};

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

}  // namespace

void upload_constant_chain(const uint32_t* deviceChain, uint32_t elems, uint32_t offsetElems) {
  check(hipMemcpyToSymbol(HIP_SYMBOL(g_constantChain), deviceChain, elems * 4u, offsetElems * 4u, hipMemcpyDeviceToDevice),
        "hipMemcpyToSymbol(constant chain)");
}

std::vector<ChaseRun> run_chasers(const std::vector<ChaserView>& chasers, const ChaseTiming& timing, int targetSm) {
  uint64_t sharedBytes = 0;
  bool anyShared = false;
  for (const ChaserView& c : chasers) {
    sharedBytes = std::max(sharedBytes, chaser_shared_bytes(c, timing.samples));
    anyShared = anyShared || c.space == Space::Shared;
  }
  ensure_shared_fits(sharedBytes, timing);
  KernelSharedConfig config(reinterpret_cast<const void*>(chase_kernel), sharedBytes, anyShared);

  std::vector<ChaseRun> runs(chasers.size());
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
    DeviceBuffer<uint32_t> outLatencies(views.size() * timing.samples);

    const ChaseLaunch a{deviceViews.get(), static_cast<uint32_t>(views.size()), placed ? targetSm : -1, timing.warmup ? 1u : 0u,
                        timing.samples, timing.budgetNs, control.get(), control.get() + kMaxSmIds, outSm.get(),
                        outLatencies.get(), timedOut.get()};
    const bool single = views.size() == 1 && a.targetSm < 0;
    const uint32_t blocks = single ? 1u : std::max(2u * timing.multiprocessors, 1u);
    chase_kernel<<<blocks, 32, sharedBytes>>>(a);
    check_launch("chase_kernel");
    throw_if_timed_out(timedOut, "pchase");

    std::vector<uint32_t> sms(views.size());
    outSm.download(sms.data(), sms.size());
    std::vector<uint32_t> latencies(views.size() * timing.samples);
    outLatencies.download(latencies.data(), latencies.size());
    std::vector<size_t> stillPending;
    for (size_t k = 0; k < views.size(); ++k) {
      const size_t i = pending[k];
      if (sms[k] == ~0u) {
        stillPending.push_back(i);
        continue;
      }
      runs[i].smId = sms[k];
      runs[i].latenciesCycles.assign(latencies.begin() + k * timing.samples, latencies.begin() + (k + 1) * timing.samples);
    }
    pending.swap(stillPending);
  }
  return runs;
}

PairRun run_pair(const ChaserView& first, const ChaserView& second, const PairPlacementSpec& p, const ChaseTiming& timing) {
  const uint64_t firstBytes = chaser_shared_bytes(first, timing.samples);
  const uint64_t secondBytes = chaser_shared_bytes(second, timing.samples);
  const uint64_t sharedBytes = p.sameSm ? firstBytes + secondBytes : std::max(firstBytes, secondBytes);
  ensure_shared_fits(sharedBytes, timing);
  const bool anyShared = first.space == Space::Shared || second.space == Space::Shared;
  KernelSharedConfig config(reinterpret_cast<const void*>(pair_kernel), sharedBytes, anyShared);

  const uint32_t threads = 32u * (std::max(p.firstWarp, p.secondWarp) + 1u);
  DeviceBuffer<uint32_t> timedOut(1);
  for (uint32_t attempt = 0; attempt < kPlacementAttempts; ++attempt) {
    timedOut.zero();
    DeviceBuffer<uint32_t> sync(3);
    sync.zero();
    DeviceBuffer<uint32_t> outSm(2);
    DeviceBuffer<uint32_t> outLatencies(2u * timing.samples);
    const PairLaunch a{first, second, p.sameSm, p.firstWarp * 32u + p.firstLane, p.secondWarp * 32u + p.secondLane,
                       timing.samples, p.sameSm ? static_cast<uint32_t>(firstBytes / 4) : 0u, timing.budgetNs,
                       sync.get(), outSm.get(), outLatencies.get(), timedOut.get()};
    pair_kernel<<<p.sameSm ? 1u : 2u, threads, sharedBytes>>>(a);
    check_launch("pair_kernel");
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
    return run;
  }
  throw ProbeFailure(ErrorCode::Unsupported, "could not place the two chasers on different SMs");
}

}  // namespace topod::probe
