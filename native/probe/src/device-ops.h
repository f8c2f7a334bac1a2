// The only place vendor-specific instructions live: one helper per load
// flavour and one per clock/id read, for both vendors (thesis §4: each memory
// space is reached by its own load instruction; the chase must pin that
// instruction exactly, so it is inline assembly where the compiler could pick
// another). Kernels compose these helpers and never contain inline asm.
#pragma once

#include "hip-compat.h"

namespace topod::ops {

// ---- clocks and placement ----------------------------------------------------

// 32-bit SM cycle counter; differences of two reads are exact modulo 2^32.
__device__ __forceinline__ uint32_t clock32() {
  uint32_t c;
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("mov.u32 %0, %%clock;" : "=r"(c)::"memory");
#else
  uint64_t t;
  asm volatile("s_memtime %0\n\ts_waitcnt lgkmcnt(0)" : "=s"(t)::"memory");
  c = static_cast<uint32_t>(t);
#endif
  return c;
}

// 64-bit SM cycle counter, for spans longer than 2^32 cycles.
__device__ __forceinline__ uint64_t clock64() {
  uint64_t c;
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
#else
  asm volatile("s_memtime %0\n\ts_waitcnt lgkmcnt(0)" : "=s"(c)::"memory");
#endif
  return c;
}

// Wall-clock nanoseconds shared by all SMs. On AMD s_memrealtime ticks at a
// constant 100 MHz on gfx9, scaled here to nanoseconds.
__device__ __forceinline__ uint64_t globaltimer_ns() {
  uint64_t t;
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
#else
  asm volatile("s_memrealtime %0\n\ts_waitcnt lgkmcnt(0)" : "=s"(t)::"memory");
  t *= 10;
#endif
  return t;
}

// The SM (NVIDIA) or compute unit (AMD: shader engine, array and CU bits of HW_ID) running this warp.
__device__ __forceinline__ uint32_t sm_id() {
  uint32_t id;
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
#else
  uint32_t hw;
  asm volatile("s_getreg_b32 %0, hwreg(HW_REG_HW_ID)" : "=s"(hw));
  id = ((hw >> 13) & 0x3) << 5 | ((hw >> 12) & 0x1) << 4 | ((hw >> 8) & 0xf);
#endif
  return id;
}

// How many SM ids there are (%nsmid; ids may be sparse below it). AMD: 0 (no such register).
__device__ __forceinline__ uint32_t sm_id_limit() {
  uint32_t n = 0;
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
#endif
  return n;
}

// ---- thread block clusters (sm_90+) ------------------------------------------------
// Hopper's cluster instructions (thread-block-cluster paper §II). Compiled for
// sm_90 and later only; on older targets and AMD these are stubs that the
// host never reaches (every cluster op answers `unsupported` there first).
#if defined(TOPOD_VENDOR_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TOPOD_DEVICE_HAS_CLUSTERS 1
#endif

// This block's rank in its cluster (%cluster_ctarank).
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r = 0;
#if defined(TOPOD_DEVICE_HAS_CLUSTERS)
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#endif
  return r;
}

// barrier.cluster.arrive (release): marks this thread arrived without waiting.
__device__ __forceinline__ void cluster_arrive() {
#if defined(TOPOD_DEVICE_HAS_CLUSTERS)
  asm volatile("barrier.cluster.arrive;" ::: "memory");
#endif
}

// barrier.cluster.wait (acquire): waits until every thread of the cluster has arrived.
__device__ __forceinline__ void cluster_wait() {
#if defined(TOPOD_DEVICE_HAS_CLUSTERS)
  asm volatile("barrier.cluster.wait;" ::: "memory");
#endif
}

// cluster.sync() as the compiler emits it: arrive, then wait.
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// The shared::cta address of a shared-memory pointer (what mapa and ld.shared take).
__device__ __forceinline__ uint32_t shared_address(const void* p) {
#if defined(TOPOD_VENDOR_NVIDIA)
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
#else
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p));
#endif
}

// mapa.shared::cluster: the same shared-memory address in block `rank`'s shared memory (DSMEM).
__device__ __forceinline__ uint32_t map_shared_rank(uint32_t sharedAddress, uint32_t rank) {
  uint32_t remote = 0;
#if defined(TOPOD_DEVICE_HAS_CLUSTERS)
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(sharedAddress), "r"(rank));
#else
  (void)sharedAddress;
  (void)rank;
#endif
  return remote;
}

// ld.shared::cluster: a 32-bit load from a (possibly remote) block's shared memory.
__device__ __forceinline__ uint32_t load_shared_cluster(uint32_t clusterAddress) {
  uint32_t v = 0;
#if defined(TOPOD_DEVICE_HAS_CLUSTERS)
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(clusterAddress) : "memory");
#else
  (void)clusterAddress;
#endif
  return v;
}

// ld.shared::cluster, 64 bits (transfers move 64-bit words: the paper's fastest width).
__device__ __forceinline__ uint64_t load_shared_cluster_u64(uint32_t clusterAddress) {
  uint64_t v = 0;
#if defined(TOPOD_DEVICE_HAS_CLUSTERS)
  asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(clusterAddress) : "memory");
#else
  (void)clusterAddress;
#endif
  return v;
}

// st.shared::cluster, 64 bits: a store into a (possibly remote) block's shared memory.
__device__ __forceinline__ void store_shared_cluster_u64(uint32_t clusterAddress, uint64_t value) {
#if defined(TOPOD_DEVICE_HAS_CLUSTERS)
  asm volatile("st.shared::cluster.u64 [%0], %1;" ::"r"(clusterAddress), "l"(value) : "memory");
#else
  (void)clusterAddress;
  (void)value;
#endif
}

// ---- load flavours ------------------------------------------------------------

// Global load cached in L1 (NVIDIA ld.global.ca; AMD: a plain global load, cached in vL1D).
__device__ __forceinline__ uint32_t load_global_ca(const uint32_t* p) {
  uint32_t v;
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#else
  asm volatile("global_load_dword %0, %1, off\n\ts_waitcnt vmcnt(0)" : "=v"(v) : "v"(p) : "memory");
#endif
  return v;
}

// Global load with no cache operator (NVIDIA ld.global: what a plain C++ load of global memory compiles to; whether
// L1 caches it is the GPU's and the build's default, which is what the `global` space measures). AMD: as global.ca.
__device__ __forceinline__ uint32_t load_global(const uint32_t* p) {
#if defined(TOPOD_VENDOR_NVIDIA)
  uint32_t v;
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
#else
  return load_global_ca(p);
#endif
}

// Global load that bypasses L1 (NVIDIA ld.global.cg; AMD glc: served by L2).
__device__ __forceinline__ uint32_t load_global_cg(const uint32_t* p) {
  uint32_t v;
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#else
  asm volatile("global_load_dword %0, %1, off glc\n\ts_waitcnt vmcnt(0)" : "=v"(v) : "v"(p) : "memory");
#endif
  return v;
}

// 64-bit global load that bypasses L1 (NVIDIA ld.global.cg.u64; AMD glc): transfers through global memory.
__device__ __forceinline__ uint64_t load_global_cg_u64(const uint64_t* p) {
  uint64_t v;
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
#else
  asm volatile("global_load_dwordx2 %0, %1, off glc\n\ts_waitcnt vmcnt(0)" : "=v"(v) : "v"(p) : "memory");
#endif
  return v;
}

// Read-only data path (NVIDIA ld.global.nc, what __ldg emits). AMD has no separate read-only
// path; a nontemporal load keeps the flavour distinct there.
__device__ __forceinline__ uint32_t load_readonly(const uint32_t* p) {
  uint32_t v;
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#else
  v = __builtin_nontemporal_load(p);
#endif
  return v;
}

// Texture path: a 1D fetch from a texture object over linear memory.
__device__ __forceinline__ uint32_t load_texture(hipTextureObject_t tex, uint32_t index) {
  return tex1Dfetch<uint32_t>(tex, static_cast<int>(index));
}

// Constant space. nvcc emits ld.const (SASS LDC) for a __constant__ array indexed
// by a register; the compile test checks the PTX for it, so no asm is needed.
template <unsigned N>
__device__ __forceinline__ uint32_t load_constant(const uint32_t (&table)[N], uint32_t index) {
  return table[index];
}

// Shared memory (NVIDIA ld.shared; AMD ds_read_b32 on LDS).
__device__ __forceinline__ uint32_t load_shared(const uint32_t* p) {
  uint32_t v;
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(p))) : "memory");
#else
  v = *reinterpret_cast<const volatile uint32_t*>(p);
#endif
  return v;
}

// ---- streaming accesses (bandwidth) --------------------------------------------
// 128-bit accesses for the bandwidth kernels: one helper per flavour, as for
// the chase loads above. Volatile so that passes over the same array are not
// merged (the data does not change between them); no "memory" clobber on the
// loads, so a thread keeps several of them in flight.

// 16-byte global load, default caching (NVIDIA ld.global.v4.u32: L1 and L2). AMD: a plain 16-byte load.
__device__ __forceinline__ uint4 load_global_v4(const uint4* p) {
#if defined(TOPOD_VENDOR_NVIDIA)
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
#else
  return *p;
#endif
}

// 16-byte global load cached in L2 only (NVIDIA ld.global.cg.v4.u32): what the L2 read bandwidth
// streams. AMD: a plain 16-byte load (an asm glc load needs its own s_waitcnt, which would keep
// one load in flight per thread; the 16 KiB vL1D holds nothing of a multi-MiB stream anyway).
__device__ __forceinline__ uint4 load_global_cg_v4(const uint4* p) {
#if defined(TOPOD_VENDOR_NVIDIA)
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
#else
  return *p;
#endif
}

// 16-byte global store (NVIDIA st.global.v4.u32; AMD: a plain 16-byte store, global_store_dwordx4).
// A warp's 32 stores cover 512 contiguous bytes: whole 32 B sectors, so the L2 takes them without
// first reading the sector from device memory (a partial-sector write would need that read-for-fill).
__device__ __forceinline__ void store_global_v4(uint4* p, uint4 v) {
#if defined(TOPOD_VENDOR_NVIDIA)
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
#else
  *p = v;
#endif
}

// ---- consumers -------------------------------------------------------------------

// A volatile store of a loaded value: makes the issuing warp wait for the load
// (in-order issue, the store reads its register), and keeps ptxas from
// dropping loads whose results are otherwise unused (asm volatile does not).
// Volatile so that a store to the same word every step is not merged into the last.
__device__ __forceinline__ void consume(uint32_t* sink, uint32_t value) { *reinterpret_cast<volatile uint32_t*>(sink) = value; }

}  // namespace topod::ops
