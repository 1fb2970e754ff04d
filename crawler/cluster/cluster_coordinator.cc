#include "crawler/cluster/cluster_coordinator.h"

#include <signal.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <unordered_set>
#include <utility>

#include "crawler/cluster/cluster_function.h"
#include "crawler/cluster/cluster_keys.h"
#include "crawler/cluster/cluster_redis.h"
#include "crawler/cluster/rendezvous.h"
#include "redis/redis_client.h"
#include "dedup/redis_seen_set.h"

namespace urlsieve {

uint32_t ClusterPartitionOf(std::string_view politeness_key, uint32_t partitions) {
  if (partitions == 0) return 0;
  const uint64_t hash = XXH3_64bits(politeness_key.data(), politeness_key.size());
  // The high 64 bits of hash * partitions, in 64-bit halves (exact: the low half's own low 32
  // bits cannot carry past bit 64).
  const uint64_t high = (hash >> 32) * partitions;
  const uint64_t low = (hash & 0xffffffffu) * partitions;
  return static_cast<uint32_t>((high + (low >> 32)) >> 32);
}

namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kFastTick{100};         // while a wanted partition is not held, or draining
constexpr milliseconds kMaxBeatInterval{500};  // membership is read at least this often
constexpr milliseconds kMinIdleBackoff{10};
constexpr std::chrono::seconds kColdAfter{10};   // without an entry: asked every cold_poll
constexpr milliseconds kMinProbeInterval{1000};  // inbox lengths for Totals, at most this often
constexpr size_t kMaxPartitionsPerPoll = 64;     // reads (Function calls) per Poll
constexpr size_t kMaxProbesPerPoll = 256;        // XLEN probes per Poll
constexpr size_t kAckChunk = 512;

std::string RandomHex(size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device device;
  std::string out;
  for (size_t i = 0; i < bytes; ++i) {
    unsigned value = device() & 0xff;
    out += kHex[value >> 4];
    out += kHex[value & 15];
  }
  return out;
}

std::string HostName() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof(buffer) - 1) != 0) return "unknown";
  return buffer;
}

// The settings as a JSON object in its canonical text ("" is {}); nullopt when not an object.
std::optional<nlohmann::json> ParseSettings(std::string_view text) {
  if (text.empty()) return nlohmann::json::object();
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  return json;
}

// "key (cluster: X, this node: Y), ..." for every key whose value differs.
std::string SettingsDifference(const nlohmann::json& cluster, const nlohmann::json& mine) {
  std::map<std::string, std::pair<std::string, std::string>> differ;
  for (const auto& [key, value] : cluster.items()) {
    auto it = mine.find(key);
    if (it == mine.end()) {
      differ[key] = {value.dump(), "(unset)"};
    } else if (*it != value) {
      differ[key] = {value.dump(), it->dump()};
    }
  }
  for (const auto& [key, value] : mine.items()) {
    if (!cluster.contains(key)) differ[key] = {"(unset)", value.dump()};
  }
  std::string out;
  for (const auto& [key, values] : differ) {
    if (!out.empty()) out += ", ";
    out += key;
    out += " (cluster: ";
    out += values.first;
    out += ", this node: ";
    out += values.second;
    out += ")";
  }
  return out;
}

}  // namespace

class ClusterCoordinator::Impl {
 public:
  explicit Impl(const ClusterOptions& options)
      : options_(options),
        pool_(options.address, options.timeouts),
        server_(options.address.ToString()),
        token_(RandomHex(8)),
        lease_value_(ClusterLeaseValue(options.node_id, token_)),
        meta_key_(ClusterMetaKey(options.name)),
        nodes_key_(ClusterNodesKey(options.name)),
        node_key_(ClusterNodeKey(options.name, options.node_id)),
        parts_(options.partitions) {
    what_ = "the crawl cluster '";
    what_ += options.name;
    what_ += "' at ";
    what_ += server_;
    renew_interval_ = std::max(milliseconds(1), options.lease_ttl / 5);
    beat_interval_ = std::min(renew_interval_, kMaxBeatInterval);
    probe_interval_ = std::max(renew_interval_, kMinProbeInterval);
    // docs/features/cluster.md, "The crawl cluster": a lease is used until its last renewal was
    // sent + lease_ttl - handover_delay - margin, so the next owner (who may take it the moment it
    // lapses) never sends a request to one of its hosts within handover_delay of ours; the margin
    // covers clock rates and the time between MayFetch and the request.
    valid_for_ = options.lease_ttl - options.handover_delay - options.lease_ttl / 10;
    for (uint32_t p = 0; p < options.partitions; ++p) {
      parts_[p].lease_key = ClusterLeaseKey(options.name, p);
      parts_[p].inbox_key = RedisInboxKey(options.name, p);
    }
    totals_.name = options.name;
    totals_.server = server_;
    totals_.partitions = options.partitions;
  }

  ~Impl() { StopThread(); }

  Status Join(std::vector<std::string>* notices);

  const std::string& identity() const { return identity_; }
  const std::string& what() const { return what_; }
  uint32_t partitions() const { return options_.partitions; }
  const std::string& node_id() const { return options_.node_id; }

  Result<std::vector<InboxEntry>> Poll(size_t max);
  void Nudge(std::span<const uint32_t> partitions);
  Status Ack(std::span<const InboxEntry> entries);
  void Forget(std::span<const InboxEntry> entries);
  bool MayFetch(uint32_t partition, const uint64_t* tenure) const;
  Status MarkSeeded();
  Result<bool> Finished();
  void Publish(const NodeCounters& counters) {
    std::lock_guard<std::mutex> lock(mu_);
    published_ = counters;
  }
  ClusterStatus Totals() const {
    std::lock_guard<std::mutex> lock(mu_);
    totals_asked_ = true;
    return totals_;
  }
  Status error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  Status Leave(bool finished);

 private:
  struct Partition {
    std::string lease_key;
    std::string inbox_key;
    bool wanted = false;
    bool held = false;
    bool draining = false;  // held, wanted by another node: released once nothing is outstanding
    bool busy = false;      // a read or a release of it is under way
    uint64_t epoch = 0;     // counts acquisitions and losses: a reply of an older epoch is stale
    SteadyClock::time_point valid_until{};
    SteadyClock::time_point next_acquire{};
    SteadyClock::time_point next_ask{};
    milliseconds idle_backoff{0};
    SteadyClock::time_point last_entry{};  // the last read that brought entries, or the acquisition
    std::string claim_cursor;        // XAUTOCLAIM resumes here; "" when the claim is through
    bool reclaim = false;            // an entry was forgotten: claim the pending entries again
    bool hot = false;     // read at every Poll: its last read brought entries, or it was nudged
    uint64_t nudges = 0;  // counts Nudge calls: a read or probe sent before one cannot cool it
    std::unordered_set<std::string> outstanding;
  };

  void StartThread() {
    thread_ = std::thread([this] { Run(); });
  }
  void StopThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void Run();
  // One round of the heartbeat thread; returns when it wants to run again.
  SteadyClock::time_point Tick(RedisClient& client);
  Status Beat(RedisClient& client, milliseconds ttl, const std::string& state);
  Status RenewAll(RedisClient& client);
  Status ProbeTotals(RedisClient& client);
  Status ReleaseDrained(RedisClient& client);
  Status AcquireWanted(RedisClient& client);
  // Under mu_.
  void MarkLost(uint32_t p);
  void Fail(Status status);

  Status LoadLibrary(RedisClient& client) { return LoadClusterLibrary(client); }
  Status Call(RedisClient& client, std::span<const RedisCommand> commands,
              std::vector<RedisReply>* replies) {
    return RunClusterFunctions(client, commands, replies);
  }
  RedisCommand Fcall(const char* function, std::initializer_list<std::string> keys,
                     std::vector<std::string> args) const {
    return ClusterFcall(function, keys, std::move(args));
  }
  std::string Where(std::string_view doing) const {
    std::string out(doing);
    out += " (";
    out += what_;
    out += ")";
    return out;
  }
  Status StateLost(const std::string& detail) const {
    std::string message = "coordination state lost: ";
    message += what_;
    message += ": ";
    message += detail;
    message +=
        " (the Redis server restarted without persistence, or its data was flushed); the node "
        "stops rather than re-crawl or end the crawl silently";
    return Status::FailedPrecondition(std::move(message));
  }
  Status ReplyError(const RedisReply& reply, std::string_view doing) const;

  const ClusterOptions options_;
  ClusterClientPool pool_;
  const std::string server_;
  const std::string token_;
  const std::string lease_value_;
  const std::string meta_key_;
  const std::string nodes_key_;
  const std::string node_key_;
  std::string what_;
  std::string identity_;
  milliseconds renew_interval_{};
  milliseconds beat_interval_{};
  milliseconds probe_interval_{};
  milliseconds valid_for_{};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool wake_ = false;  // a drained partition can be released now
  bool left_ = false;
  mutable bool totals_asked_ = false;  // inbox lengths are probed only for a caller of Totals
  bool need_beat_ = true;  // after a fault: the next round beats first (a lost state shows there)
  Status error_;
  NodeCounters published_;
  ClusterStatus totals_;
  std::vector<std::string> live_;
  std::vector<Partition> parts_;
  size_t outstanding_ = 0;
  uint32_t rotate_ = 0;       // where the next probes start
  uint32_t read_rotate_ = 0;  // where the next reads start (when more than a Poll's are hot)
  SteadyClock::time_point next_beat_{};
  SteadyClock::time_point next_renew_{};
  SteadyClock::time_point next_probe_{};
  std::thread thread_;
};

Status ClusterCoordinator::Impl::ReplyError(const RedisReply& reply, std::string_view doing) const {
  if (reply.str.rfind("STATELOST", 0) == 0) return StateLost(reply.str);
  return RedisErrorStatus(server_, Where(doing), reply);
}

void ClusterCoordinator::Impl::Fail(Status status) {
  if (error_.ok()) error_ = std::move(status);
  for (uint32_t p = 0; p < parts_.size(); ++p) {
    if (parts_[p].held) MarkLost(p);
  }
}

void ClusterCoordinator::Impl::MarkLost(uint32_t p) {
  Partition& part = parts_[p];
  outstanding_ -= part.outstanding.size();
  part.outstanding.clear();
  part.held = false;
  part.draining = false;
  part.claim_cursor.clear();
  part.reclaim = false;
  part.valid_until = SteadyClock::time_point{};
  ++part.epoch;
}

Status ClusterCoordinator::Impl::Join(std::vector<std::string>* notices) {
  auto settings = ParseSettings(options_.settings);
  if (!settings) {
    return Status::InvalidArgument("joining " + what_ +
                                   ": the settings are not a JSON object: " + options_.settings);
  }
  auto client = pool_.Take();
  if (!client.ok()) {
    return Status(client.status().code(), "joining " + what_ + ": " + client.status().message());
  }
  URLSIEVE_RETURN_IF_ERROR(LoadLibrary(**client));
  // The settings are compared as JSON first, so that the message can name the keys that differ;
  // the register Function compares the stored text again, atomically.
  std::string settings_text = settings->dump();
  std::string takeover;  // the token of a dead previous instance of this node id
  for (int attempt = 0;; ++attempt) {
    auto meta = (*client)->Run(RedisCommand{{"HGETALL", meta_key_}, 1});
    if (!meta.ok()) return meta.status();
    if (meta->is_error()) return ReplyError(*meta, "reading the cluster's meta hash");
    std::map<std::string, std::string> fields;
    for (size_t i = 0; i + 1 < meta->elements.size(); i += 2) {
      fields[meta->elements[i].str] = meta->elements[i + 1].str;
    }
    if (!fields.empty()) {
      if (fields["format"] != kClusterFormat) {
        return Status::FailedPrecondition(what_ + ": " + meta_key_ +
                                          " is not a urlsieve crawl cluster (format '" +
                                          fields["format"] + "')");
      }
      if (fields["version"] != std::to_string(kClusterFormatVersion)) {
        return Status::Unsupported(what_ + " has format version " + fields["version"] +
                                   "; this urlsieve reads version " +
                                   std::to_string(kClusterFormatVersion));
      }
      if (fields["partitions"] != std::to_string(options_.partitions)) {
        return Status::FailedPrecondition(what_ + " has " + fields["partitions"] +
                                          " partitions, this node was given " +
                                          std::to_string(options_.partitions));
      }
      auto stored = ParseSettings(fields["settings"]);
      if (!stored) {
        return Status::Corruption(what_ +
                                  ": its settings are not a JSON object: " + fields["settings"]);
      }
      if (*stored != *settings) {
        return Status::FailedPrecondition(
            what_ + " was created with other settings than this node's: " +
            SettingsDifference(*stored, *settings) +
            "; the nodes of a cluster must share them (their keys and partitions would not agree)");
      }
      settings_text = fields["settings"];
    }
    std::vector<RedisCommand> commands = {
        Fcall(kClusterRegister, {meta_key_, nodes_key_, node_key_},
              {RandomHex(16), std::to_string(options_.partitions), settings_text,
               std::string(kClusterFormat), std::to_string(kClusterFormatVersion), options_.node_id,
               token_, HostName(), std::to_string(::getpid()),
               std::to_string(options_.lease_ttl.count()), takeover})};
    std::vector<RedisReply> replies;
    URLSIEVE_RETURN_IF_ERROR(Call(**client, commands, &replies));
    const RedisReply& reply = replies[0];
    if (reply.is_error()) {
      if (reply.str.rfind("MISMATCH", 0) == 0 && attempt < 3) continue;  // changed meanwhile
      if (reply.str.rfind("LIVE ", 0) == 0) {
        long long left_ms = 0;
        char host[256] = {};
        long long pid = 0;
        char token[64] = {};
        std::sscanf(reply.str.c_str(), "LIVE %lld %255s %lld %63s", &left_ms, host, &pid, token);
        // The same node id restarted on this machine (--resume after a kill -9): the previous
        // process is gone, so nothing can renew its leases; they lapse and are claimed as a dead
        // node's would be.
        if (takeover.empty() && attempt < 3 && HostName() == host && pid > 0 && pid != ::getpid() &&
            ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
          takeover = token;
          if (notices != nullptr) {
            notices->push_back("node '" + options_.node_id + "' takes over from its previous " +
                               "instance (pid " + std::to_string(pid) +
                               " on this host, no longer running)");
          }
          continue;
        }
        return Status::FailedPrecondition(
            what_ + " already has a live node '" + options_.node_id + "' (host " + host + ", pid " +
            std::to_string(pid) + "); its heartbeat expires in " + std::to_string(left_ms) +
            " ms. Give this node another --node-id, or stop the other one first");
      }
      return ReplyError(reply, "registering node '" + options_.node_id + "'");
    }
    if (reply.elements.size() < 2) {
      return Status::Corruption(server_ + ": " + Where("registering") +
                                ": an unexpected reply to " + kClusterRegister);
    }
    identity_ = reply.elements[1].str;
    if (notices != nullptr) {
      std::string notice = reply.elements[0].integer == 1 ? "created " : "joined ";
      notice += what_;
      notice += " as node '";
      notice += options_.node_id;
      notice += "' (";
      notice += std::to_string(options_.partitions);
      notice += " partitions)";
      notices->push_back(std::move(notice));
    }
    break;
  }
  pool_.Give(std::move(client).value());
  StartThread();
  return Status::Ok();
}

void ClusterCoordinator::Impl::Run() {
  std::unique_ptr<RedisClient> client;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_ || !error_.ok()) return;
    }
    SteadyClock::time_point wake = SteadyClock::now() + kFastTick;
    if (client == nullptr) {
      auto taken = pool_.Take();
      if (taken.ok()) {
        client = std::move(taken).value();
      } else {
        std::lock_guard<std::mutex> lock(mu_);
        need_beat_ = true;
      }
    }
    if (client != nullptr) wake = Tick(*client);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, wake, [this] { return stop_ || wake_; });
    wake_ = false;
  }
}

SteadyClock::time_point ClusterCoordinator::Impl::Tick(RedisClient& client) {
  const SteadyClock::time_point now = SteadyClock::now();
  bool beat_due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    beat_due = need_beat_ || now >= next_beat_;
  }
  if (beat_due) {
    Status status = Beat(client, options_.lease_ttl, "running");
    std::lock_guard<std::mutex> lock(mu_);
    if (!status.ok()) {
      if (status.code() == StatusCode::kUnavailable) {
        need_beat_ = true;
      } else {
        Fail(status);  // the state is lost, or the node's id was taken over: fatal
      }
      return SteadyClock::now() + kFastTick;
    }
    need_beat_ = false;
    next_beat_ = now + beat_interval_;
  }
  bool renew_due;
  bool probe_due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    renew_due = now >= next_renew_;
    probe_due = totals_asked_ && now >= next_probe_;
  }
  // Each step stops the round at a fault: the next round beats first.
  auto faulted = [this](const Status& status) {
    if (status.ok()) return false;
    std::lock_guard<std::mutex> lock(mu_);
    if (status.code() == StatusCode::kUnavailable) {
      need_beat_ = true;
    } else if (status.message().rfind("coordination state lost", 0) == 0) {
      Fail(status);
    } else {
      need_beat_ = true;  // an unexpected reply: try again, beating first
    }
    return true;
  };
  if (renew_due) {
    if (faulted(RenewAll(client))) return SteadyClock::now() + kFastTick;
    std::lock_guard<std::mutex> lock(mu_);
    next_renew_ = now + renew_interval_;
  }
  if (faulted(ReleaseDrained(client))) return SteadyClock::now() + kFastTick;
  if (faulted(AcquireWanted(client))) return SteadyClock::now() + kFastTick;
  if (probe_due) {
    if (!faulted(ProbeTotals(client))) {
      std::lock_guard<std::mutex> lock(mu_);
      next_probe_ = now + probe_interval_;
      totals_asked_ = false;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  SteadyClock::time_point wake = std::min(next_beat_, next_renew_);
  for (const Partition& part : parts_) {
    if ((part.wanted && !part.held) || part.draining) {
      wake = std::min(wake, SteadyClock::now() + kFastTick);
      break;
    }
  }
  return wake;
}

Status ClusterCoordinator::Impl::Beat(RedisClient& client, milliseconds ttl,
                                      const std::string& state) {
  NodeCounters counters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    counters = published_;
  }
  std::vector<RedisCommand> commands = {
      Fcall(kClusterHeartbeat, {meta_key_, nodes_key_, node_key_},
            {identity_, options_.node_id, token_, std::to_string(ttl.count()), state,
             std::to_string(counters.pages), std::to_string(counters.errors),
             std::to_string(counters.links_new)})};
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(Call(client, commands, &replies));
  const RedisReply& reply = replies[0];
  if (reply.is_error()) {
    if (reply.str.rfind("TAKEN", 0) == 0) {
      return Status::FailedPrecondition(what_ + ": another instance of node '" + options_.node_id +
                                        "' joined after this one's heartbeat expired (" +
                                        reply.str +
                                        "); this one stops, its leases are no longer its own");
    }
    return ReplyError(reply, "heartbeat of node '" + options_.node_id + "'");
  }
  if (reply.type != RedisReply::Type::kArray || reply.elements.size() < 2 ||
      (reply.elements.size() - 2) % 9 != 0) {
    return Status::Corruption(server_ + ": " + Where("heartbeat") + ": an unexpected reply");
  }
  const long long now_ms = reply.elements[0].integer;
  std::vector<std::string> live;
  std::vector<ClusterNodeStatus> nodes;
  uint64_t pages = 0;
  uint64_t errors = 0;
  for (size_t i = 2; i + 9 <= reply.elements.size(); i += 9) {
    ClusterNodeStatus node;
    node.id = reply.elements[i].str;
    const long long expiry = std::atoll(reply.elements[i + 1].str.c_str());
    node.alive = expiry > now_ms;
    node.state = reply.elements[i + 2].str;
    node.counters.pages = std::strtoull(reply.elements[i + 3].str.c_str(), nullptr, 10);
    node.counters.errors = std::strtoull(reply.elements[i + 4].str.c_str(), nullptr, 10);
    node.counters.links_new = std::strtoull(reply.elements[i + 5].str.c_str(), nullptr, 10);
    node.host = reply.elements[i + 6].str;
    node.pid = std::atoll(reply.elements[i + 7].str.c_str());
    if (!reply.elements[i + 8].str.empty()) {
      node.heartbeat_age_ms = std::max(0LL, now_ms - std::atoll(reply.elements[i + 8].str.c_str()));
    }
    pages += node.counters.pages;
    errors += node.counters.errors;
    if (node.alive) live.push_back(node.id);
    nodes.push_back(std::move(node));
  }
  std::sort(live.begin(), live.end());
  std::lock_guard<std::mutex> lock(mu_);
  totals_.seeded = reply.elements[1].str == "1";
  totals_.pages = pages;
  totals_.errors = errors;
  uint32_t held = 0;
  for (const Partition& part : parts_) held += part.held ? 1 : 0;
  for (ClusterNodeStatus& node : nodes) {
    if (node.id == options_.node_id) node.partitions = held;
  }
  totals_.nodes = std::move(nodes);
  if (ttl.count() > 0 && live != live_) {
    live_ = std::move(live);
    // A node that does not see itself alive (its own beat was just written) still wants
    // nothing: it cannot be.
    const std::vector<int> owners = RendezvousAssign(live_, options_.partitions);
    for (uint32_t p = 0; p < options_.partitions; ++p) {
      const bool wanted =
          owners[p] >= 0 && live_[static_cast<size_t>(owners[p])] == options_.node_id;
      parts_[p].wanted = wanted;
      if (parts_[p].held) parts_[p].draining = !wanted;
    }
  }
  return Status::Ok();
}

Status ClusterCoordinator::Impl::RenewAll(RedisClient& client) {
  std::vector<uint32_t> which;
  std::vector<uint64_t> epochs;
  std::vector<RedisCommand> commands;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t p = 0; p < parts_.size(); ++p) {
      if (!parts_[p].held) continue;
      which.push_back(p);
      epochs.push_back(parts_[p].epoch);
      commands.push_back(Fcall(kClusterRenew, {parts_[p].lease_key},
                               {lease_value_, std::to_string(options_.lease_ttl.count())}));
    }
  }
  if (commands.empty()) return Status::Ok();
  const SteadyClock::time_point sent = SteadyClock::now();
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(Call(client, commands, &replies));
  Status first;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < which.size(); ++i) {
    Partition& part = parts_[which[i]];
    const RedisReply& reply = replies[i];
    if (reply.is_error()) {
      if (first.ok()) first = ReplyError(reply, "renewing " + part.lease_key);
      continue;
    }
    if (part.epoch != epochs[i] || !part.held) continue;
    if (!reply.elements.empty() && reply.elements[0].integer == 1) {
      part.valid_until = sent + valid_for_;
    } else {
      MarkLost(which[i]);  // it lapsed (and was taken, or may have been): not ours any more
    }
  }
  return first;
}

Status ClusterCoordinator::Impl::ReleaseDrained(RedisClient& client) {
  std::vector<uint32_t> which;
  std::vector<RedisCommand> commands;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t p = 0; p < parts_.size(); ++p) {
      Partition& part = parts_[p];
      if (!part.held || !part.draining || part.busy || !part.outstanding.empty()) continue;
      part.busy = true;
      which.push_back(p);
      commands.push_back(Fcall(kClusterRelease, {part.lease_key},
                               {lease_value_, std::to_string(options_.handover_delay.count())}));
    }
  }
  if (commands.empty()) return Status::Ok();
  std::vector<RedisReply> replies;
  Status status = Call(client, commands, &replies);
  std::lock_guard<std::mutex> lock(mu_);
  Status first = status;
  for (size_t i = 0; i < which.size(); ++i) {
    Partition& part = parts_[which[i]];
    part.busy = false;
    if (!status.ok()) continue;
    if (replies[i].is_error()) {
      if (first.ok()) first = ReplyError(replies[i], "releasing " + part.lease_key);
      continue;
    }
    if (part.held) MarkLost(which[i]);  // released (or already not ours): either way, not held
  }
  return first;
}

Status ClusterCoordinator::Impl::AcquireWanted(RedisClient& client) {
  std::vector<uint32_t> which;
  std::vector<RedisCommand> commands;
  const SteadyClock::time_point now = SteadyClock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_) return Status::Ok();
    for (uint32_t p = 0; p < parts_.size(); ++p) {
      Partition& part = parts_[p];
      if (!part.wanted || part.held || part.busy || now < part.next_acquire) continue;
      which.push_back(p);
      commands.push_back(Fcall(kClusterAcquire, {part.lease_key},
                               {lease_value_, std::to_string(options_.lease_ttl.count())}));
    }
  }
  if (commands.empty()) return Status::Ok();
  const SteadyClock::time_point sent = SteadyClock::now();
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(Call(client, commands, &replies));
  Status first;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < which.size(); ++i) {
    Partition& part = parts_[which[i]];
    const RedisReply& reply = replies[i];
    if (reply.is_error()) {
      if (first.ok()) first = ReplyError(reply, "acquiring " + part.lease_key);
      continue;
    }
    if (reply.elements.empty()) continue;
    if (reply.elements[0].integer == 1) {
      if (!part.wanted) {
        // Unwanted meanwhile: keep it and drain it (nothing outstanding: released next round).
        part.draining = true;
      }
      part.held = true;
      ++part.epoch;
      part.valid_until = sent + valid_for_;
      part.claim_cursor = "0-0";  // the previous owner's unacknowledged entries first
      part.reclaim = false;
      part.idle_backoff = milliseconds(0);
      part.next_ask = SteadyClock::time_point{};
      part.last_entry = SteadyClock::now();
      continue;
    }
    long long pttl = reply.elements.size() >= 3 ? reply.elements[2].integer : 0;
    milliseconds wait;
    if (reply.elements.size() >= 2 && reply.elements[1].str == kClusterLeaseReleased) {
      wait = milliseconds(std::max(5LL, pttl));  // the cool-down: try the moment it ends
    } else {
      wait = std::clamp(milliseconds(pttl), milliseconds(50), milliseconds(250));
    }
    part.next_acquire = SteadyClock::now() + wait;
  }
  return first;
}

Status ClusterCoordinator::Impl::ProbeTotals(RedisClient& client) {
  std::vector<RedisCommand> commands;
  commands.reserve(parts_.size());
  for (const Partition& part : parts_) {
    commands.push_back(Fcall(kClusterProbe, {part.inbox_key}, {std::string(kRedisInboxGroup)}));
  }
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(Call(client, commands, &replies));
  uint64_t pending = 0;
  uint64_t in_flight = 0;
  for (size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].is_error()) return ReplyError(replies[i], "probing " + parts_[i].inbox_key);
    if (replies[i].elements.size() < 3) continue;
    pending += static_cast<uint64_t>(std::max(0LL, replies[i].elements[0].integer));
    in_flight += static_cast<uint64_t>(std::max(0LL, replies[i].elements[2].integer));
  }
  std::lock_guard<std::mutex> lock(mu_);
  totals_.pending = pending;
  totals_.in_flight = in_flight;
  uint32_t held = 0;
  for (const Partition& part : parts_) held += part.held ? 1 : 0;
  totals_.unowned_partitions = 0;  // not known without reading every lease (ReadClusterStatus)
  for (ClusterNodeStatus& node : totals_.nodes) {
    if (node.id == options_.node_id) node.partitions = held;
  }
  return Status::Ok();
}

Result<std::vector<InboxEntry>> ClusterCoordinator::Impl::Poll(size_t max) {
  struct Ask {
    uint32_t partition;
    uint64_t epoch;
    uint64_t nudges;  // the partition's nudge count when asked
    bool probe;       // XLEN, not a read
    size_t known;     // probe: entries outstanding here when it was sent
    std::string cursor;
  };
  std::vector<Ask> asks;
  std::vector<RedisCommand> commands;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
    if (left_ || max == 0) return std::vector<InboxEntry>{};
    const size_t total_room =
        options_.max_outstanding > outstanding_ ? options_.max_outstanding - outstanding_ : 0;
    const size_t budget = std::min(max, total_room);
    if (budget == 0) return std::vector<InboxEntry>{};
    const SteadyClock::time_point now = SteadyClock::now();
    const uint32_t count = static_cast<uint32_t>(parts_.size());
    auto askable = [&](const Partition& part) {
      return part.held && !part.draining && !part.busy && now < part.valid_until &&
             part.outstanding.size() < options_.max_outstanding_per_partition;
    };
    auto wants_read = [](const Partition& part) {
      return part.hot || part.reclaim || !part.claim_cursor.empty();
    };
    // Reads go first to the partitions known to have entries (their last read brought some, this
    // node appended to them, or a claim is under way): they are asked at every Poll, so a busy
    // partition never waits behind the idle ones' rotation.
    // Those with entries (hot) come before those with only a claim to make.
    std::vector<uint32_t> reads;
    const size_t max_reads = std::min(budget, kMaxPartitionsPerPoll);
    for (int tier = 0; tier < 2; ++tier) {
      for (uint32_t k = 0; k < count && reads.size() < max_reads; ++k) {
        const uint32_t p = (read_rotate_ + k) % count;
        const Partition& part = parts_[p];
        if (askable(part) && wants_read(part) && part.hot == (tier == 0)) reads.push_back(p);
      }
    }
    if (!reads.empty()) read_rotate_ = (reads.back() + 1) % count;
    // The others, when due, are probed with XLEN (one plain command, no Function): an inbox
    // longer than what this node holds of it has something to read, and is read at the next
    // Poll. A probe that misses an entry (an Ack under way) only delays it to the next probe.
    std::vector<uint32_t> probes;
    uint32_t last = rotate_;
    for (uint32_t k = 0; k < count && probes.size() < kMaxProbesPerPoll; ++k) {
      const uint32_t p = (rotate_ + k) % count;
      const Partition& part = parts_[p];
      if (!askable(part) || wants_read(part) || now < part.next_ask) continue;
      probes.push_back(p);
      last = p;
    }
    if (!probes.empty()) rotate_ = (last + 1) % count;
    if (reads.empty() && probes.empty()) return std::vector<InboxEntry>{};
    const size_t share = reads.empty() ? 0 : std::max<size_t>(1, budget / reads.size());
    for (uint32_t p : reads) {
      Partition& part = parts_[p];
      const size_t room = options_.max_outstanding_per_partition - part.outstanding.size();
      const size_t n = std::min(room, share);
      if (part.claim_cursor.empty() && part.reclaim) {
        part.claim_cursor = "0-0";
        part.reclaim = false;
      }
      part.busy = true;
      asks.push_back({p, part.epoch, part.nudges, false, 0, part.claim_cursor});
      commands.push_back(Fcall(kClusterRead, {part.lease_key, part.inbox_key},
                               {lease_value_, std::string(kRedisInboxGroup), options_.node_id,
                                std::to_string(n), part.claim_cursor}));
    }
    for (uint32_t p : probes) {
      Partition& part = parts_[p];
      part.busy = true;
      asks.push_back({p, part.epoch, part.nudges, true, part.outstanding.size(), ""});
      commands.push_back(RedisCommand{{"XLEN", part.inbox_key}, 1});
    }
  }
  Status status;
  std::vector<RedisReply> replies;
  auto client = pool_.Take();
  if (client.ok()) {
    status = Call(**client, commands, &replies);
    pool_.Give(std::move(client).value());
  } else {
    status = client.status();
  }
  std::vector<InboxEntry> entries;
  std::lock_guard<std::mutex> lock(mu_);
  const SteadyClock::time_point now = SteadyClock::now();
  // A partition that had nothing is asked again later, the longer the quieter it has been (most
  // partitions of a crawl of few hosts stay empty).
  auto back_off = [&](Partition& part) {
    const milliseconds cap =
        now - part.last_entry < kColdAfter ? options_.max_idle_poll : options_.cold_poll;
    part.idle_backoff =
        std::clamp(part.idle_backoff * 2, kMinIdleBackoff, std::max(kMinIdleBackoff, cap));
    part.next_ask = now + part.idle_backoff;
  };
  for (size_t i = 0; i < asks.size(); ++i) {
    Partition& part = parts_[asks[i].partition];
    part.busy = false;
    if (!status.ok()) {
      // The call may have run and its reply been lost: entries read by XREADGROUP would sit in
      // this node's pending list, handed out by nothing but a claim.
      if (!asks[i].probe) part.reclaim = true;
      continue;
    }
    const RedisReply& reply = replies[i];
    if (reply.is_error()) {
      if (status.ok()) status = ReplyError(reply, "reading " + part.inbox_key);
      continue;
    }
    if (part.epoch != asks[i].epoch || !part.held) continue;  // stale: its entries stay pending
    if (asks[i].probe) {
      if (reply.integer > static_cast<long long>(asks[i].known)) {
        part.hot = true;
      } else if (part.nudges == asks[i].nudges) {
        back_off(part);
      }
      continue;
    }
    if (reply.elements.size() < 2) continue;
    if (reply.elements[0].str == "LOST") {
      MarkLost(asks[i].partition);
      continue;
    }
    if (!asks[i].cursor.empty()) {
      part.claim_cursor = reply.elements[1].str;
      if (part.claim_cursor == "0-0") part.claim_cursor.clear();
    }
    size_t got = 0;
    for (size_t e = 2; e + 1 < reply.elements.size(); e += 2) {
      std::string id = reply.elements[e].str;
      if (!part.outstanding.insert(id).second) continue;  // claimed while already here
      ++outstanding_;
      ++got;
      entries.push_back(InboxEntry{asks[i].partition, std::move(id),
                                   std::move(replies[i].elements[e + 1].str), part.epoch});
    }
    if (got > 0 || !part.claim_cursor.empty()) {
      part.hot = true;
      part.idle_backoff = milliseconds(0);
      part.next_ask = SteadyClock::time_point{};
      part.last_entry = now;
    } else if (part.nudges == asks[i].nudges) {
      // Nothing new (a nudge meanwhile keeps it hot: the append may have come after the read).
      part.hot = false;
      back_off(part);
    }
  }
  if (!status.ok()) {
    if (status.code() == StatusCode::kUnavailable) need_beat_ = true;
    if (entries.empty()) return status;
  }
  return entries;
}

void ClusterCoordinator::Impl::Nudge(std::span<const uint32_t> partitions) {
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t p : partitions) {
    if (p >= parts_.size()) continue;
    Partition& part = parts_[p];
    part.hot = true;
    ++part.nudges;
    part.idle_backoff = milliseconds(0);
    part.next_ask = SteadyClock::time_point{};
    part.last_entry = SteadyClock::now();
  }
}

Status ClusterCoordinator::Impl::Ack(std::span<const InboxEntry> entries) {
  if (entries.empty()) return Status::Ok();
  // An acknowledged entry's page is recorded: it is acknowledged even when the lease was lost
  // meanwhile (the new owner then finds it gone rather than fetching it again).
  std::map<uint32_t, std::vector<const InboxEntry*>> by_partition;
  for (const InboxEntry& entry : entries) {
    if (entry.partition >= parts_.size()) {
      return Status::InvalidArgument(Where("acknowledging") + ": partition " +
                                     std::to_string(entry.partition) + " does not exist");
    }
    by_partition[entry.partition].push_back(&entry);
  }
  std::vector<RedisCommand> commands;
  for (const auto& [p, list] : by_partition) {
    for (size_t start = 0; start < list.size(); start += kAckChunk) {
      std::vector<std::string> args = {std::string(kRedisInboxGroup)};
      for (size_t i = start; i < std::min(list.size(), start + kAckChunk); ++i) {
        args.push_back(list[i]->id);
      }
      commands.push_back(Fcall(kClusterAck, {parts_[p].inbox_key}, std::move(args)));
    }
  }
  auto client = pool_.Take();
  if (!client.ok()) return client.status();
  std::vector<RedisReply> replies;
  Status status = Call(**client, commands, &replies);
  pool_.Give(std::move(client).value());
  if (status.ok()) {
    for (size_t i = 0; i < replies.size(); ++i) {
      if (replies[i].is_error()) {
        status = ReplyError(replies[i], "acknowledging entries of " + commands[i].argv[3]);
        break;
      }
    }
  }
  if (!status.ok()) {
    // Nothing is forgotten here: the caller retries (XACK and XDEL are idempotent).
    if (status.code() == StatusCode::kUnavailable) {
      std::lock_guard<std::mutex> lock(mu_);
      need_beat_ = true;
    }
    return status;
  }
  std::lock_guard<std::mutex> lock(mu_);
  bool drained = false;
  for (const InboxEntry& entry : entries) {
    Partition& part = parts_[entry.partition];
    if (part.outstanding.erase(entry.id) > 0) {
      --outstanding_;
      drained = drained || (part.draining && part.outstanding.empty());
    }
  }
  if (drained) {
    wake_ = true;
    cv_.notify_all();
  }
  return Status::Ok();
}

void ClusterCoordinator::Impl::Forget(std::span<const InboxEntry> entries) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const InboxEntry& entry : entries) {
    if (entry.partition >= parts_.size()) continue;
    Partition& part = parts_[entry.partition];
    if (entry.tenure != part.epoch || part.outstanding.erase(entry.id) == 0) continue;
    --outstanding_;
    // Still this node's: the entry is in its pending list, and only a claim hands it out again.
    if (part.held && !part.draining) part.reclaim = true;
  }
}

bool ClusterCoordinator::Impl::MayFetch(uint32_t partition, const uint64_t* tenure) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (partition >= parts_.size() || !error_.ok()) return false;
  const Partition& part = parts_[partition];
  if (tenure != nullptr && *tenure != part.epoch) return false;
  return part.held && SteadyClock::now() < part.valid_until;
}

Status ClusterCoordinator::Impl::MarkSeeded() {
  auto client = pool_.Take();
  if (!client.ok()) return client.status();
  std::vector<RedisCommand> commands = {Fcall(kClusterSeed, {meta_key_}, {identity_})};
  std::vector<RedisReply> replies;
  Status status = Call(**client, commands, &replies);
  pool_.Give(std::move(client).value());
  URLSIEVE_RETURN_IF_ERROR(status);
  if (replies[0].is_error()) {
    Status error = ReplyError(replies[0], "marking the cluster seeded");
    if (error.message().rfind("coordination state lost", 0) == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      Fail(error);
    }
    return error;
  }
  std::lock_guard<std::mutex> lock(mu_);
  totals_.seeded = true;
  return Status::Ok();
}

Result<bool> ClusterCoordinator::Impl::Finished() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
    if (outstanding_ > 0) return false;  // entries in hand here are still in their inboxes
  }
  // Scan 0 is cheap (XLEN: one command per partition) and ends the check while the crawl runs;
  // scans 1 and 2 (the probe Function: lengths and entries-added counters) decide the end.
  std::vector<RedisCommand> lengths;
  std::vector<RedisCommand> probes;
  lengths.push_back(RedisCommand{{"HMGET", meta_key_, "identity", "seeded"}, 1});
  probes.push_back(lengths.back());
  for (const Partition& part : parts_) {
    lengths.push_back(RedisCommand{{"XLEN", part.inbox_key}, 1});
    probes.push_back(Fcall(kClusterProbe, {part.inbox_key}, {std::string(kRedisInboxGroup)}));
  }
  auto client = pool_.Take();
  if (!client.ok()) return client.status();
  std::unique_ptr<RedisClient> held = std::move(client).value();
  std::vector<long long> added(parts_.size(), -1);
  Result<bool> result = true;
  for (int scan = 0; scan < 3 && result.ok() && *result; ++scan) {
    std::vector<RedisReply> replies;
    Status status = Call(*held, scan == 0 ? lengths : probes, &replies);
    if (!status.ok()) {
      result = status;
      break;
    }
    const RedisReply& meta = replies[0];
    if (meta.is_error()) {
      result = ReplyError(meta, "reading the cluster's meta hash");
      break;
    }
    if (meta.elements.size() < 2 || meta.elements[0].str != identity_) {
      std::string detail = meta_key_;
      if (meta.elements.empty() || meta.elements[0].type == RedisReply::Type::kNil) {
        detail += " is missing";
      } else {
        detail += " is of cluster ";
        detail += meta.elements[0].str;
      }
      Status lost = StateLost(detail);
      std::lock_guard<std::mutex> lock(mu_);
      Fail(lost);
      result = lost;
      break;
    }
    bool over = meta.elements[1].str == "1";
    for (size_t i = 0; over && i < parts_.size(); ++i) {
      const RedisReply& reply = replies[i + 1];
      if (reply.is_error()) {
        result = ReplyError(reply, "probing " + parts_[i].inbox_key);
        break;
      }
      if (scan == 0) {
        over = reply.integer == 0;
        continue;
      }
      if (reply.elements.size() < 3 || reply.elements[0].integer != 0) over = false;
      if (over && scan == 2 && reply.elements[1].integer != added[i]) over = false;
      if (over) added[i] = reply.elements[1].integer;
    }
    if (result.ok() && !over) result = false;
  }
  pool_.Give(std::move(held));
  return result;
}

Status ClusterCoordinator::Impl::Leave(bool finished) {
  StopThread();
  std::vector<uint32_t> which;
  std::vector<RedisCommand> commands;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_) return Status::Ok();
    left_ = true;
    if (!error_.ok()) return error_;
    for (uint32_t p = 0; p < parts_.size(); ++p) {
      if (!parts_[p].held) continue;
      which.push_back(p);
      commands.push_back(Fcall(kClusterRelease, {parts_[p].lease_key},
                               {lease_value_, std::to_string(options_.handover_delay.count())}));
    }
  }
  auto client = pool_.Take();
  if (!client.ok()) return client.status();
  std::vector<RedisReply> replies;
  Status status = commands.empty() ? Status::Ok() : Call(**client, commands, &replies);
  if (status.ok()) {
    for (size_t i = 0; i < replies.size(); ++i) {
      if (replies[i].is_error()) {
        status = ReplyError(replies[i], "releasing " + commands[i].argv[3]);
        break;
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint32_t p : which) MarkLost(p);
  }
  Status beat = Beat(**client, milliseconds(0), finished ? "finished" : "stopped");
  pool_.Give(std::move(client).value());
  if (!status.ok()) return status;
  return beat;
}

ClusterCoordinator::ClusterCoordinator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterCoordinator::~ClusterCoordinator() = default;

Result<std::unique_ptr<ClusterCoordinator>> ClusterCoordinator::Join(
    const ClusterOptions& options, std::vector<std::string>* notices) {
  const std::string server = options.address.ToString();
  if (!IsClusterIdentifier(options.name)) {
    return Status::InvalidArgument("the cluster name '" + options.name +
                                   "' must be 1-64 characters of [A-Za-z0-9_.-]");
  }
  if (!IsClusterIdentifier(options.node_id)) {
    return Status::InvalidArgument("the node id '" + options.node_id +
                                   "' must be 1-64 characters of [A-Za-z0-9_.-]");
  }
  if (options.partitions < 1 || options.partitions > kMaxClusterPartitions) {
    return Status::InvalidArgument("a crawl cluster has 1 to " +
                                   std::to_string(kMaxClusterPartitions) + " partitions, not " +
                                   std::to_string(options.partitions));
  }
  if (options.lease_ttl.count() < 10) {
    return Status::InvalidArgument("the lease TTL must be at least 10 ms, not " +
                                   std::to_string(options.lease_ttl.count()) + " ms");
  }
  if (options.handover_delay.count() < 0 || options.handover_delay * 2 >= options.lease_ttl) {
    return Status::InvalidArgument("the hand-over delay (" +
                                   std::to_string(options.handover_delay.count()) +
                                   " ms, the politeness delay) must be below half the lease TTL (" +
                                   std::to_string(options.lease_ttl.count()) + " ms)");
  }
  if (options.max_outstanding_per_partition == 0 || options.max_outstanding == 0) {
    return Status::InvalidArgument("the bounds of outstanding entries must be positive");
  }
  auto impl = std::make_unique<Impl>(options);
  URLSIEVE_RETURN_IF_ERROR(impl->Join(notices));
  return std::unique_ptr<ClusterCoordinator>(new ClusterCoordinator(std::move(impl)));
}

const std::string& ClusterCoordinator::identity() const { return impl_->identity(); }
uint32_t ClusterCoordinator::partitions() const { return impl_->partitions(); }
const std::string& ClusterCoordinator::node_id() const { return impl_->node_id(); }
const std::string& ClusterCoordinator::what() const { return impl_->what(); }
Result<std::vector<InboxEntry>> ClusterCoordinator::Poll(size_t max) { return impl_->Poll(max); }
void ClusterCoordinator::Nudge(std::span<const uint32_t> partitions) { impl_->Nudge(partitions); }
Status ClusterCoordinator::Ack(std::span<const InboxEntry> entries) { return impl_->Ack(entries); }
void ClusterCoordinator::Forget(std::span<const InboxEntry> entries) { impl_->Forget(entries); }
bool ClusterCoordinator::MayFetch(uint32_t partition) const {
  return impl_->MayFetch(partition, nullptr);
}
bool ClusterCoordinator::MayFetch(const InboxEntry& entry) const {
  return impl_->MayFetch(entry.partition, &entry.tenure);
}
Status ClusterCoordinator::MarkSeeded() { return impl_->MarkSeeded(); }
Result<bool> ClusterCoordinator::Finished() { return impl_->Finished(); }
void ClusterCoordinator::Publish(const NodeCounters& counters) { impl_->Publish(counters); }
ClusterStatus ClusterCoordinator::Totals() const { return impl_->Totals(); }
Status ClusterCoordinator::error() const { return impl_->error(); }
Status ClusterCoordinator::Leave(bool finished) { return impl_->Leave(finished); }

}  // namespace urlsieve
