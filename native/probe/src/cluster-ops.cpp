// compute.smid and the cluster.* ops: argument validation and result shapes;
// the kernels live in compute-smid.cu and cluster.cu. Rules: the list at the
// top of server/protocol/validate.ts (the simulated GPU applies the same).
#include "args.h"
#include "cluster.h"
#include "limits.h"
#include "registry.h"
#include "runtime.h"

namespace topod::probe {

namespace {

using limits::kMaxClusterSize;
using limits::kMaxLaunchBlocks;
using limits::kMaxLaunchRepetitions;
using limits::kMaxSmidClusters;
using limits::kMaxSmidRepetitions;
using limits::kMaxSpinNs;
using limits::kMaxTransferBytes;
static_assert(limits::kDsmemFixedSharedBytes == kDsmemFixedSharedBytes, "cluster.dsmem's latency ring and sink (cluster.h)");

// Rule 5: a device without thread block clusters, or a cluster larger than it co-schedules.
void require_clusters(const hipDeviceProp_t& p, uint64_t clusterSize) {
  const std::string reason = cluster_unsupported_reason(p);
  if (!reason.empty()) throw ProbeFailure(ErrorCode::Unsupported, reason);
  const int largest = max_cluster_size(p);
  if (clusterSize > static_cast<uint64_t>(largest))
    throw ProbeFailure(ErrorCode::Unsupported, "clusters of " + std::to_string(clusterSize) +
                                                   " blocks exceed the largest this device co-schedules (" + std::to_string(largest) + ")");
}

struct SmidRequest {
  SmidSpec spec;
  hipDeviceProp_t prop;
};

SmidRequest validate_smid(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  SmidSpec s{};
  s.clusterSize = static_cast<uint32_t>(a.integer("clusterSize", 1, kMaxClusterSize));
  s.clusters = static_cast<uint32_t>(a.integer("clusters", 1, kMaxSmidClusters));
  s.repetitions = static_cast<uint32_t>(a.integer("repetitions", 1, kMaxSmidRepetitions));
  const hipDeviceProp_t& p = ctx.device();
  const uint64_t blocks = uint64_t{s.clusters} * s.clusterSize;
  if (blocks > static_cast<uint64_t>(p.multiProcessorCount))
    a.fail("clusters", "at most " + std::to_string(p.multiProcessorCount / s.clusterSize) + " clusters of " +
                           std::to_string(s.clusterSize) + " (one block per SM, " + std::to_string(p.multiProcessorCount) + " SMs)");
  if (s.clusterSize > 1) require_clusters(p, s.clusterSize);
  return {s, p};
}

json::Value run_smid_op(const SmidRequest& r, const OpContext& ctx) {
  const SmidOutcome o = run_smid(r.spec, r.prop, ctx.budgetNs);
  json::Value launches = json::Value::array();
  for (const SmidLaunch& l : o.launches) {
    json::Value launch = json::Value::object();
    launch.set("smIds", json::numbers(l.smIds)).set("coResident", l.coResident);
    launches.push(launch);
  }
  json::Value out = json::Value::object();
  out.set("smIdLimit", o.smIdLimit).set("launches", launches);
  return out;
}

struct LimitsRequest {
  hipDeviceProp_t prop;
};

LimitsRequest validate_limits(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);  // only checks that args is an object
  (void)a;
  const hipDeviceProp_t& p = ctx.device();
  require_clusters(p, 1);
  return {p};
}

json::Value run_limits_op(const LimitsRequest& r, const OpContext&) {
  const ClusterLimits l = query_cluster_limits(r.prop);
  json::Value active = json::Value::array();
  for (int n : l.activeClusters) active.push(n);
  json::Value out = json::Value::object();
  out.set("maxPortableClusterSize", l.maxPortableClusterSize).set("maxClusterSize", l.maxClusterSize).set("activeClusters", active);
  return out;
}

ClusterSyncSpec validate_sync(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  ClusterSyncSpec s{};
  s.clusterSize = static_cast<uint32_t>(a.integer("clusterSize", 1, kMaxClusterSize));
  s.samples = static_cast<uint32_t>(a.integer("samples", 1, limits::kMaxSamples));
  const hipDeviceProp_t& p = ctx.device();
  s.threadsPerBlock = static_cast<uint32_t>(a.integer("threadsPerBlock", 1, static_cast<uint64_t>(p.maxThreadsPerBlock)));
  require_clusters(p, s.clusterSize);
  return s;
}

json::Value run_sync_op(const ClusterSyncSpec& s, const OpContext&) {
  const ClusterSyncOutcome o = run_cluster_sync(s);
  json::Value out = json::Value::object();
  out.set("arriveCycles", json::numbers(o.arrive))
      .set("waitCycles", json::numbers(o.wait))
      .set("clusterSyncCycles", json::numbers(o.clusterSync))
      .set("syncthreadsCycles", json::numbers(o.syncthreads))
      .set("gridSyncCycles", json::numbers(o.gridSync));
  return out;
}

DsmemSpec validate_dsmem(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  DsmemSpec s{};
  s.samples = static_cast<uint32_t>(a.integer("samples", 1, limits::kMaxSamples));
  s.transferBytes = static_cast<uint32_t>(a.integer("transferBytes", 8, kMaxTransferBytes));
  if (s.transferBytes % 8) a.fail("transferBytes", "a multiple of 8 (64-bit words)");
  s.repetitions = static_cast<uint32_t>(a.integer("repetitions", 1, limits::kMaxRepetitions));
  const hipDeviceProp_t& p = ctx.device();
  s.threadsPerBlock = static_cast<uint32_t>(a.integer("threadsPerBlock", 1, static_cast<uint64_t>(p.maxThreadsPerBlock)));
  const uint64_t sharedLimit = limits::shared_limit_bytes(p);
  if (s.transferBytes + kDsmemFixedSharedBytes > sharedLimit)
    a.fail("transferBytes", "at most " + std::to_string(sharedLimit - kDsmemFixedSharedBytes) +
                                " (the shared memory a block may use, less the " + std::to_string(kDsmemFixedSharedBytes) +
                                "-byte latency ring)");
  require_clusters(p, 2);
  return s;
}

json::Value run_dsmem_op(const DsmemSpec& s, const OpContext&) {
  const DsmemOutcome o = run_dsmem(s);
  json::Value smIds = json::Value::array();
  smIds.push(o.smIds[0]);
  smIds.push(o.smIds[1]);
  json::Value out = json::Value::object();
  out.set("smIds", smIds)
      .set("localLatenciesCycles", json::numbers(o.local))
      .set("remoteLatenciesCycles", json::numbers(o.remote))
      .set("l2LatenciesCycles", json::numbers(o.l2))
      .set("pushCycles", json::numbers(o.push))
      .set("pullCycles", json::numbers(o.pull))
      .set("globalCycles", json::numbers(o.global));
  return out;
}

struct LaunchRequest {
  ClusterLaunchSpec spec;
  hipDeviceProp_t prop;
};

LaunchRequest validate_launch(const json::Value& args, const OpContext& ctx) {
  const ArgReader a(args);
  ClusterLaunchSpec s{};
  s.clusterSize = static_cast<uint32_t>(a.integer("clusterSize", 1, kMaxClusterSize));
  s.blocks = static_cast<uint32_t>(a.integer("blocks", 1, kMaxLaunchBlocks));
  if (s.blocks % s.clusterSize) a.fail("blocks", "a multiple of clusterSize (" + std::to_string(s.clusterSize) + ")");
  s.spinNs = a.integer("spinNs", 0, kMaxSpinNs);
  s.repetitions = static_cast<uint32_t>(a.integer("repetitions", 1, kMaxLaunchRepetitions));
  const hipDeviceProp_t& p = ctx.device();
  require_clusters(p, s.clusterSize);
  return {s, p};
}

json::Value run_launch_op(const LaunchRequest& r, const OpContext&) {
  const ClusterLaunchOutcome o = run_cluster_launch(r.spec, r.prop);
  json::Value out = json::Value::object();
  out.set("clusterSecondsPerRepetition", json::numbers(o.clusterSeconds)).set("plainSecondsPerRepetition", json::numbers(o.plainSeconds));
  return out;
}

}  // namespace

void register_compute(Registry& r) {
  r.add<SmidRequest>("compute.smid", validate_smid, run_smid_op);
  r.add<LimitsRequest>("cluster.limits", validate_limits, run_limits_op);
  r.add<ClusterSyncSpec>("cluster.sync", validate_sync, run_sync_op);
  r.add<DsmemSpec>("cluster.dsmem", validate_dsmem, run_dsmem_op);
  r.add<LaunchRequest>("cluster.launch", validate_launch, run_launch_op);
}

}  // namespace topod::probe
