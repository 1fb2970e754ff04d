// The Redis Function library of a crawl cluster (docs/features/cluster.md, "The crawl cluster"),
// loaded by ClusterCoordinator::Join with FUNCTION LOAD REPLACE on every master and again when a
// server answers "Function not found" (a restart without persistence, a FUNCTION FLUSH). Each
// function runs atomically on the keys of one hash tag (cluster_keys.h): the cluster's "{NAME}" or
// one partition's "{NAME:p}". Times are the server's (TIME, milliseconds): no two machines' clocks
// are ever compared.
//   _register  KEYS: meta, nodes, node. ARGV: identity, partitions, settings, format, version,
//              node id, token, host, pid, ttl ms, the token of a dead instance to take over
//              from ("" none). Creates the meta hash unless it exists (an existing one whose
//              partitions, settings or format differ: error "MISMATCH"); a live node of that id
//              with another token: error "LIVE <ms left> <host> <pid> <token>"; else writes the
//              node's hash and expiry. Returns [created 0/1, identity, re-crawl round, its
//              revisit_after s].
//   _heartbeat KEYS: meta, nodes, node. ARGV: identity, node id, token, ttl ms (0: leaving),
//              state, pages, errors, links_new, idle (1/0), appended (the number of lists
//              it published), appended_to (the partitions it did not hold whose inboxes it
//              appended to since its previous list, "p,p,...", or "*" for too many). Error
//              "STATELOST" when the meta hash is gone or has another identity, "TAKEN" when the
//              node's hash has another token. Returns [now ms, seeded, re-crawl round, its
//              revisit_after s, then per node: id, expiry ms, state, pages, errors, links_new,
//              host, pid, beat ms, token, tenure, idle, appended, appended_to]. A node whose expiry
//              had passed gets a new tenure (HINCRBY tenure), as does each instance at _register.
//   _seed      KEYS: meta. ARGV: identity. Sets seeded = 1 (STATELOST as above).
//   _recrawl   KEYS: meta. ARGV: identity, revisit_after s. Starts a re-crawl round: increments
//              recrawl_round, stores the revisit_after. Returns the round (STATELOST as above).
//   _acquire   KEYS: lease. ARGV: owner ("ID@TOKEN#TENURE"), expected ("" none). Takes the
//              lease when absent, or when it holds `expected` (a value the caller found stale:
//              of a node not alive, an old instance or an old tenure); no TTL. Returns [1] (the
//              owner's now) or [0, current value, its PTTL].
//   _release   KEYS: lease. ARGV: owner, cool-down ms. The owner's lease becomes "released" with
//              the cool-down as TTL (deleted when 0). Returns 1, or 0 when not the owner's.
//   _read      KEYS: lease, inbox. ARGV: owner, group, consumer, count, claim cursor ("" none).
//              Reads nothing unless the lease is the owner's (["LOST", value]). With a cursor,
//              first XAUTOCLAIM min-idle 0 from it; once the claim is through, XREADGROUP ">"
//              for the rest of `count`. A missing stream reads nothing, a missing group is
//              created (from 0). Returns ["OK", next cursor ("" when the claim is through),
//              id, payload, id, payload...].
//   _ack       KEYS: inbox, records. ARGV: group, n, n ids, then (URL, record text) pairs.
//              XACK + XDEL of the ids; each URL's record becomes the text given (flag '-'), or,
//              for an empty text, stays as it was but no longer queued ('q' -> '-'). Returns the
//              count acknowledged.
//   _rescan    KEYS: lease, inbox, records, recrawl. ARGV: owner, round, now (unix s),
//              revisit_after s, count, HSCAN cursor. Nothing unless the lease is the owner's
//              (["LOST", 0]) and the partition's scan of `round` is not through (["DONE", 0]).
//              One HSCAN step of the records: each stored one that is due (fetch_time +
//              interval <= now, interval 0 taking revisit_after; all when it is 0) is marked
//              queued and appended to the inbox as "R <url>\n<record text>". Returns [next
//              cursor, queued], the cursor "DONE" once the scan is through (recrawl = round).
//   _probe     KEYS: inbox, recrawl. ARGV: group. Returns [XLEN, entries-added, pending, the
//              last round scanned] (0s for a missing stream). No writes.
//
// Thread-safety: constants.
#ifndef URLSIEVE_CRAWLER_CLUSTER_CLUSTER_FUNCTION_H_
#define URLSIEVE_CRAWLER_CLUSTER_CLUSTER_FUNCTION_H_

#include <string>

namespace urlsieve {

inline constexpr const char* kClusterLibrary = "urlsieve_cluster_v2";
inline constexpr const char* kClusterRegister = "urlsieve_cluster_v2_register";
inline constexpr const char* kClusterHeartbeat = "urlsieve_cluster_v2_heartbeat";
inline constexpr const char* kClusterSeed = "urlsieve_cluster_v2_seed";
inline constexpr const char* kClusterRecrawl = "urlsieve_cluster_v2_recrawl";
inline constexpr const char* kClusterRescan = "urlsieve_cluster_v2_rescan";
inline constexpr const char* kClusterAcquire = "urlsieve_cluster_v2_acquire";
inline constexpr const char* kClusterRelease = "urlsieve_cluster_v2_release";
inline constexpr const char* kClusterRead = "urlsieve_cluster_v2_read";
inline constexpr const char* kClusterAck = "urlsieve_cluster_v2_ack";
inline constexpr const char* kClusterProbe = "urlsieve_cluster_v2_probe";

// The library's source (cluster_function.lua, byte for byte, embedded at build time by
// cmake/EmbedFile.cmake), for FUNCTION LOAD REPLACE.
const std::string& ClusterLibrarySource();

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CLUSTER_CLUSTER_FUNCTION_H_
