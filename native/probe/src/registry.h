// The operation registry: key -> validator -> runner. A validator turns the
// request's args into a typed spec or throws bad_request; a runner measures
// and returns the result object or throws a ProbeFailure.
#pragma once

#include <any>
#include <functional>
#include <string>
#include <vector>

#include "../../common/json.hpp"
#include "hip-compat.h"
#include "probe-error.h"

namespace topod::probe {

// What an operation may know about the device it runs on.
struct OpContext {
  int deviceCount = 0;
  hipDeviceProp_t prop{};        // device 0, valid when deviceCount > 0
  uint64_t budgetNs = 0;         // the operation's device-side deadline
  std::vector<std::string> ops;  // the registry's keys, in registration order (hello lists them)

  // Operations other than hello need a device; throws unsupported otherwise.
  const hipDeviceProp_t& device() const {
    if (deviceCount == 0) throw ProbeFailure(ErrorCode::Unsupported, "no GPU is visible to the runtime");
    return prop;
  }
};

struct Operation {
  std::string key;
  std::function<std::any(const json::Value& args, const OpContext& ctx)> validate;
  std::function<json::Value(const std::any& spec, const OpContext& ctx)> run;
};

class Registry {
 public:
  template <typename Spec>
  void add(std::string key, Spec (*validate)(const json::Value&, const OpContext&), json::Value (*run)(const Spec&, const OpContext&)) {
    ops_.push_back(Operation{std::move(key), [validate](const json::Value& a, const OpContext& c) { return std::any(validate(a, c)); },
                             [run](const std::any& s, const OpContext& c) { return run(std::any_cast<const Spec&>(s), c); }});
  }

  // Every registered key: what hello tells the daemon this probe can do.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    out.reserve(ops_.size());
    for (const Operation& op : ops_) out.push_back(op.key);
    return out;
  }

  const Operation* find(const std::string& key) const {
    for (const Operation& op : ops_)
      if (op.key == key) return &op;
    return nullptr;
  }

 private:
  std::vector<Operation> ops_;
};

// Each family registers its operations (hello.cpp, pchase-ops.cpp, bandwidth-op.cpp, calibrate-op.cpp),
// in protocol.ts PROBE_OPS order; register_selftest (pchase-ops.cpp) adds selftest.consumer.
void register_hello(Registry& r);
void register_pchase(Registry& r);
void register_bandwidth(Registry& r);
void register_calibrate(Registry& r);
void register_selftest(Registry& r);
void register_compute(Registry& r);     // cluster-ops.cpp: compute.smid and cluster.*
void register_l2(Registry& r);          // l2-partition-op.cpp: l2.partition
void register_l2_farnear(Registry& r);  // l2-farnear-op.cpp: l2.farnear
void register_l2_persist(Registry& r);  // l2-persist-op.cpp: l2.persist
void register_traffic(Registry& r);     // traffic-op.cpp: traffic

inline Registry make_registry() {
  Registry r;
  register_hello(r);
  register_pchase(r);
  register_bandwidth(r);
  register_calibrate(r);
  register_selftest(r);
  register_compute(r);
  register_l2(r);
  register_l2_farnear(r);
  register_l2_persist(r);
  register_traffic(r);
  return r;
}

}  // namespace topod::probe
