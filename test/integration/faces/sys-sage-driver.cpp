// Reads an MT4G 1.x result with sys-sage's own parser (ParseMt4g) and prints,
// one JSON line each, what sys-sage built from it: the GPU's attributes, every
// distinct cache/memory (type, name, how many, size, line size) and the first
// data path leaving each (latency, bandwidths, miss penalty). Built by
// test/integration/faces/mt4g-sys-sage.test.ts against sys-sage in a temp dir.
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include "sys-sage.hpp"

using namespace sys_sage;

static std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

static double attribDouble(DataPath* dp, const char* key) {
  auto it = dp->attrib.find(key);
  return it == dp->attrib.end() ? -1 : *static_cast<double*>(it->second);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: sys-sage-driver <mt4g.json>\n";
    return 2;
  }
  std::cout << std::setprecision(17);
  Topology topology;
  Node node(&topology, 0);
  if (ParseMt4g(&node, argv[1], 0) != 0) {
    std::cerr << "ParseMt4g failed\n";
    return 1;
  }
  auto* gpu = static_cast<Chip*>(node.GetChildren().at(0));
  std::cout << "{\"kind\":\"gpu\",\"model\":" << quote(gpu->GetModel()) << ",\"vendor\":" << quote(gpu->GetVendor())
            << ",\"multiProcessorCount\":" << *static_cast<int*>(gpu->attrib["multiProcessorCount"])
            << ",\"numberOfCoresPerMultiProcessor\":" << *static_cast<uint32_t*>(gpu->attrib["numberOfCoresPerMultiProcessor"])
            << ",\"clockRateHz\":" << *static_cast<long long*>(gpu->attrib["clockRate"]) << "}\n";
  std::map<std::string, int> counts;
  std::map<std::string, std::string> first;
  std::set<std::string> pathsDone;
  std::vector<Component*> all;
  all.push_back(gpu);
  for (size_t i = 0; i < all.size(); i++)
    for (Component* child : all[i]->GetChildren()) all.push_back(child);
  for (Component* c : all) {
    auto type = c->GetComponentType();
    if (type != ComponentType::Cache && type != ComponentType::Memory) continue;
    // Caches are told apart by their cache name ("L2", "L1+Read Only+Texture", "Constant L1.5"); memories by name.
    std::string name = type == ComponentType::Cache ? static_cast<Cache*>(c)->GetCacheName() : c->GetName();
    std::string key = c->GetComponentTypeStr() + "/" + name;
    counts[key]++;
    if (!first.count(key)) {
      long long size = type == ComponentType::Cache ? static_cast<Cache*>(c)->GetCacheSize() : static_cast<Memory*>(c)->GetSize();
      int line = type == ComponentType::Cache ? static_cast<Cache*>(c)->GetCacheLineSize() : -1;
      first[key] = "\"type\":" + quote(c->GetComponentTypeStr()) + ",\"name\":" + quote(name) + ",\"size\":" + std::to_string(size) +
                   ",\"lineSize\":" + std::to_string(line);
    }
    if (pathsDone.count(key)) continue;
    for (DataPath* dp : c->GetAllDataPaths()) {
      if (dp->GetSource() != c) continue;
      pathsDone.insert(key);
      std::cout << "{\"kind\":\"path\",\"name\":" << quote(name) << ",\"latency\":" << dp->GetLatency()
                << ",\"readBandwidth\":" << attribDouble(dp, "readBandwidth")
                << ",\"writeBandwidth\":" << attribDouble(dp, "writeBandwidth") << ",\"missPenalty\":" << attribDouble(dp, "missPenalty")
                << "}\n";
      break;
    }
  }
  for (auto& [key, line] : first) std::cout << "{\"kind\":\"component\"," << line << ",\"count\":" << counts[key] << "}\n";
  return 0;
}
