// RedisWaits: tells the user, once, that a Redis server does not answer within the command timeout
// — the server, what was being done, since when — and once when it answers again
// (docs/features/redis-seen-set.md, "Faults"). Every connection (redis_connection.h) reports its
// timeouts and its answers here, so a wait is visible whoever waits: `filter`, `crawl`, a cluster
// node, the C API, the Python module. Retries above (the seen set's, SeenRetry's) go on as before.
//
// The lines go to a sink the application installs (the Python module: a RuntimeWarning), or by
// default to stderr as "urlsieve: <line>".
//
// Thread-safety: all functions may be called from any thread. One mutex guards the servers in an
// outage; Answered() returns after one relaxed atomic load while none is, so the hot path (every
// reply) pays nothing. The sink is called outside the mutex.
#ifndef URLSIEVE_REDIS_REDIS_WAITS_H_
#define URLSIEVE_REDIS_REDIS_WAITS_H_

#include <functional>
#include <string>
#include <string_view>

namespace urlsieve {

using RedisWaitSink = std::function<void(const std::string& line)>;

// Replaces the sink (null: stderr); returns the previous one.
RedisWaitSink SetRedisWaitSink(RedisWaitSink sink);

// A command to `server` got no answer within `timeout_s`: said once per outage of that server.
void RedisNoAnswer(const std::string& server, std::string_view what, double timeout_s);
// `server` answered: if it was in an outage, says how long it lasted.
void RedisAnswered(const std::string& server);

}  // namespace urlsieve

#endif  // URLSIEVE_REDIS_REDIS_WAITS_H_
