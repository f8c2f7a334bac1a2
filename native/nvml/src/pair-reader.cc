#include "pair-reader.h"

#include <map>
#include <mutex>
#include <utility>

#include "field-log.h"

namespace topod::nvml {

namespace {

struct CachedPair {
  StaticKey key;
  StaticCache::Clock::time_point readAt;
  DevicePair pair;
};

// Process-wide like the StaticCache, and like it only used under Library::mutex().
std::map<std::pair<std::string, std::string>, CachedPair>& pairCache() {
  static std::map<std::pair<std::string, std::string>, CachedPair> cache;
  return cache;
}

Opt<unsigned> p2p(const Api& api, FieldLog& log, nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t index, const char* field) {
  nvmlGpuP2PStatus_t status = NVML_P2P_STATUS_UNKNOWN;
  if (!log.check(invoke(api.deviceGetP2PStatus, a, b, index, &status), field)) return std::nullopt;
  return static_cast<unsigned>(status);
}

DevicePair readPair(const Api& api, const PairInput& a, const PairInput& b) {
  DevicePair pair;
  pair.a = a.index;
  pair.b = b.index;
  FieldLog log(pair.degraded);
  nvmlGpuTopologyLevel_t level = NVML_TOPOLOGY_SYSTEM;
  if (log.check(invoke(api.deviceGetTopologyCommonAncestor, a.handle, b.handle, &level), "commonAncestor"))
    pair.commonAncestor = static_cast<unsigned>(level);
  pair.p2pRead = p2p(api, log, a.handle, b.handle, NVML_P2P_CAPS_INDEX_READ, "p2p.read");
  pair.p2pWrite = p2p(api, log, a.handle, b.handle, NVML_P2P_CAPS_INDEX_WRITE, "p2p.write");
  pair.p2pNvlink = p2p(api, log, a.handle, b.handle, NVML_P2P_CAPS_INDEX_NVLINK, "p2p.nvlink");
  pair.p2pAtomics = p2p(api, log, a.handle, b.handle, NVML_P2P_CAPS_INDEX_ATOMICS, "p2p.atomics");
  return pair;
}

}  // namespace

std::vector<DevicePair> readPairs(const Api& api, const std::vector<PairInput>& devices, const StaticPolicy& policy) {
  auto& cache = pairCache();
  std::vector<DevicePair> pairs;
  std::map<std::pair<std::string, std::string>, CachedPair> kept;
  for (size_t i = 0; i < devices.size(); ++i) {
    for (size_t j = i + 1; j < devices.size(); ++j) {
      const PairInput& a = devices[i];
      const PairInput& b = devices[j];
      if (!a.uuid || !b.uuid) {
        pairs.push_back(readPair(api, a, b));
        continue;
      }
      auto id = std::make_pair(*a.uuid, *b.uuid);
      auto found = cache.find(id);
      if (found != cache.end() && found->second.key == policy.base && policy.now - found->second.readAt < policy.maxAge) {
        DevicePair pair = found->second.pair;
        pair.a = a.index;  // indices may move when a GPU is added or removed; the pair is the same
        pair.b = b.index;
        pair.read = false;
        pairs.push_back(pair);
        kept.emplace(id, found->second);
        continue;
      }
      DevicePair pair = readPair(api, a, b);
      pairs.push_back(pair);
      // A refusal that may not last (TIMEOUT, UNKNOWN) is asked again next read.
      bool lasting = true;
      for (const auto& entry : pair.degraded)
        if (entry.find("TIMEOUT") != std::string::npos || entry.find("UNKNOWN") != std::string::npos) lasting = false;
      if (lasting) kept.emplace(id, CachedPair{policy.base, policy.now, pair});
    }
  }
  cache = std::move(kept);  // pairs of GPUs gone are forgotten
  return pairs;
}

}  // namespace topod::nvml
