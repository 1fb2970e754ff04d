// Rendezvous (highest-random-weight) hashing of a crawl cluster's partitions over its live nodes
// (docs/features/cluster.md, "The crawl cluster"): partition p goes to the node with the highest
// score XXH3-64(node id, seed p), so every node computes the same owner from the same membership,
// and a node joining or leaving moves only the partitions it gains or held: every other partition
// keeps its owner.
//
// Thread-safety: pure functions.
#ifndef URLSIEVE_CRAWLER_CLUSTER_RENDEZVOUS_H_
#define URLSIEVE_CRAWLER_CLUSTER_RENDEZVOUS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace urlsieve {

uint64_t RendezvousScore(std::string_view node_id, uint32_t partition);

// The index in `nodes` of partition p's owner (ties, which need equal scores, go to the smaller
// id); -1 when `nodes` is empty.
int RendezvousOwner(std::span<const std::string> nodes, uint32_t partition);

// The owner index of every partition in [0, partitions).
std::vector<int> RendezvousAssign(std::span<const std::string> nodes, uint32_t partitions);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_RENDEZVOUS_H_
