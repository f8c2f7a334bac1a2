// The `sms` array of the ops that time chunks per SM (l2.partition, l2.farnear):
// one {smId, latenciesCycles} object per SM that ran.
#pragma once

#include <vector>

#include "registry.h"

namespace topod::probe {

template <typename Run>
json::Value sm_latencies_json(const std::vector<Run>& runs) {
  json::Value sms = json::Value::array();
  for (const Run& run : runs) {
    json::Value one = json::Value::object();
    one.set("smId", run.smId).set("latenciesCycles", json::numbers(run.latenciesCycles));
    sms.push(one);
  }
  return sms;
}

}  // namespace topod::probe
