// Test driver for native/probe/src/chain-order.h: "<nodes> <pattern> <seed>"
// per stdin line -> the successor list, space-separated.
#include <iostream>
#include <string>

#include "../../../native/probe/src/chain-order.h"

int main() {
  uint32_t nodes = 0;
  std::string pattern;
  uint64_t seed = 0;
  while (std::cin >> nodes >> pattern >> seed) {
    const auto p = pattern == "random" ? topod::probe::ChasePattern::Random : topod::probe::ChasePattern::Sequential;
    const auto next = topod::probe::chain_successors(nodes, p, seed);
    for (size_t i = 0; i < next.size(); ++i) std::cout << (i ? " " : "") << next[i];
    std::cout << '\n';
  }
  return 0;
}
