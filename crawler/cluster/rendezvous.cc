#include "crawler/cluster/rendezvous.h"

#include <xxhash.h>

namespace urlsieve {

uint64_t RendezvousScore(std::string_view node_id, uint32_t partition) {
  return XXH3_64bits_withSeed(node_id.data(), node_id.size(), partition);
}

int RendezvousOwner(std::span<const std::string> nodes, uint32_t partition) {
  int best = -1;
  uint64_t best_score = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    uint64_t score = RendezvousScore(nodes[i], partition);
    if (best < 0 || score > best_score ||
        (score == best_score && nodes[i] < nodes[static_cast<size_t>(best)])) {
      best = static_cast<int>(i);
      best_score = score;
    }
  }
  return best;
}

std::vector<int> RendezvousAssign(std::span<const std::string> nodes, uint32_t partitions) {
  std::vector<int> owners(partitions);
  for (uint32_t p = 0; p < partitions; ++p) owners[p] = RendezvousOwner(nodes, p);
  return owners;
}

}  // namespace urlsieve
