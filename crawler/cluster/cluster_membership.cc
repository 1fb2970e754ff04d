// A node's membership of its crawl cluster (crawler/cluster/cluster_coordinator.h, "Ownership"):
// joining (the meta hash checked or created, the node registered, a dead previous instance of the
// same node id taken over) and the heartbeat, whose reply lists the live nodes and so decides which
// partitions this node wants (rendezvous hashing: a join or a leave moves only that node's share).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>

#include "crawler/cluster/cluster_coordinator_impl.h"
#include "crawler/cluster/cluster_function.h"
#include "crawler/cluster/cluster_keys.h"
#include "crawler/cluster/cluster_settings.h"
#include "crawler/cluster/rendezvous.h"

namespace urlsieve {

namespace cluster_internal {

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

}  // namespace cluster_internal

namespace {

using cluster_internal::RandomHex;

std::string HostName() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof(buffer) - 1) != 0) return "unknown";
  return buffer;
}

// The register Function's "LIVE left_ms host pid token".
struct LiveNode {
  long long left_ms = 0;
  char host[256] = {};
  long long pid = 0;
  char token[64] = {};
};

LiveNode ParseLiveNode(const std::string& reply) {
  LiveNode node;
  std::sscanf(reply.c_str(), "LIVE %lld %255s %lld %63s", &node.left_ms, node.host, &node.pid,
              node.token);
  return node;
}

}  // namespace

Status ClusterCoordinator::Impl::Join(std::vector<std::string>* notices) {
  auto settings = ParseClusterSettings(options_.settings);
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
    auto fields = ReadMeta(**client);
    if (!fields.ok()) return fields.status();
    if (!fields->empty()) {
      auto stored = CheckClusterMeta(*fields, options_.partitions, *settings, what_, meta_key_);
      if (!stored.ok()) return stored.status();
      settings_text = std::move(stored).value();
    }
    std::vector<RedisCommand> commands = {RegisterCommand(settings_text, takeover)};
    std::vector<RedisReply> replies;
    URLSIEVE_RETURN_IF_ERROR(Call(**client, commands, &replies));
    const RedisReply& reply = replies[0];
    if (reply.is_error()) {
      if (reply.str.rfind("MISMATCH", 0) == 0 && attempt < 3) continue;  // changed meanwhile
      if (reply.str.rfind("LIVE ", 0) == 0) {
        if (takeover.empty() && attempt < 3 &&
            TakeOverDeadInstance(reply.str, &takeover, notices)) {
          continue;
        }
        return LiveNodeError(reply.str);
      }
      return ReplyError(reply, "registering node '" + options_.node_id + "'");
    }
    if (reply.elements.size() < 4) {
      return Status::Corruption(server_ + ": " + Where("registering") +
                                ": an unexpected reply to " + kClusterRegister);
    }
    identity_ = reply.elements[1].str;
    {
      std::lock_guard<std::mutex> lock(mu_);
      recrawl_round_ = std::strtoull(reply.elements[2].str.c_str(), nullptr, 10);
      recrawl_revisit_s_ = std::atoll(reply.elements[3].str.c_str());
    }
    // A meta hash a failover forgot right after its creation would be "coordination state lost"
    // for every node that joined: on the replicas before anyone works under it.
    URLSIEVE_RETURN_IF_ERROR(WaitForReplicas(**client, std::span(&meta_key_, 1)));
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

Result<RedisReply> ClusterCoordinator::Impl::WriteMeta(RedisCommand command,
                                                       std::string_view doing) {
  auto client = pool_.Take();
  if (!client.ok()) return client.status();
  std::vector<RedisReply> replies;
  Status status = Call(**client, std::span(&command, 1), &replies);
  if (status.ok() && !replies[0].is_error()) {
    status = WaitForReplicas(**client, std::span(&meta_key_, 1));
  }
  pool_.Give(std::move(client).value());
  URLSIEVE_RETURN_IF_ERROR(status);
  if (replies[0].is_error()) {
    Status error = ReplyError(replies[0], doing);
    if (error.message().rfind("coordination state lost", 0) == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      Fail(error);
    }
    return error;
  }
  return std::move(replies[0]);
}

Result<std::map<std::string, std::string>> ClusterCoordinator::Impl::ReadMeta(RedisClient& client) {
  auto meta = client.Run(RedisCommand{{"HGETALL", meta_key_}, 1});
  if (!meta.ok()) return meta.status();
  if (meta->is_error()) return ReplyError(*meta, "reading the cluster's meta hash");
  std::map<std::string, std::string> fields;
  for (size_t i = 0; i + 1 < meta->elements.size(); i += 2) {
    fields[meta->elements[i].str] = meta->elements[i + 1].str;
  }
  return fields;
}

RedisCommand ClusterCoordinator::Impl::RegisterCommand(const std::string& settings_text,
                                                       const std::string& takeover) const {
  return Fcall(kClusterRegister, {meta_key_, nodes_key_, node_key_},
               {RandomHex(16), std::to_string(options_.partitions), settings_text,
                std::string(kClusterFormat), std::to_string(kClusterFormatVersion),
                options_.node_id, token_, HostName(), std::to_string(::getpid()),
                std::to_string(options_.lease_ttl.count()), takeover});
}

bool ClusterCoordinator::Impl::TakeOverDeadInstance(const std::string& live_reply,
                                                    std::string* takeover,
                                                    std::vector<std::string>* notices) const {
  const LiveNode live = ParseLiveNode(live_reply);
  // The same node id restarted on this machine (--resume after a kill -9): the previous process
  // is gone, so nothing can renew its leases; they lapse and are claimed as a dead node's would
  // be.
  if (HostName() != live.host || live.pid <= 0 || live.pid == ::getpid() ||
      ::kill(static_cast<pid_t>(live.pid), 0) == 0 || errno != ESRCH) {
    return false;
  }
  *takeover = live.token;
  if (notices != nullptr) {
    notices->push_back("node '" + options_.node_id + "' takes over from its previous " +
                       "instance (pid " + std::to_string(live.pid) +
                       " on this host, no longer running)");
  }
  return true;
}

Status ClusterCoordinator::Impl::LiveNodeError(const std::string& live_reply) const {
  const LiveNode live = ParseLiveNode(live_reply);
  return Status::FailedPrecondition(
      what_ + " already has a live node '" + options_.node_id + "' (host " + live.host + ", pid " +
      std::to_string(live.pid) + "); its heartbeat expires in " + std::to_string(live.left_ms) +
      " ms. Give this node another --node-id, or stop the other " + "one first");
}

Status ClusterCoordinator::Impl::Beat(RedisClient& client, milliseconds ttl,
                                      const std::string& state) {
  NodeCounters counters;
  bool idle;
  uint64_t list = 0;    // the number of the list of partitions appended to that this beat sends
  std::string targets;  // that list
  {
    std::lock_guard<std::mutex> lock(mu_);
    counters = published_;
    idle = idle_;
    list = appended_lists_;
    if (!appended_to_.empty()) {
      // A new number for every send: a beat whose reply is lost may have published it, and
      // the partitions are sent again under the next number (a receiver that sees a number
      // skipped sweeps).
      list = ++appended_lists_;
      if (appended_to_.size() > cluster_internal::kMaxAppendedList) {
        targets = "*";
      } else {
        for (uint32_t p : appended_to_) {
          if (!targets.empty()) targets += ',';
          targets += std::to_string(p);
        }
      }
    }
  }
  const SteadyClock::time_point sent = SteadyClock::now();
  std::vector<RedisCommand> commands = {
      Fcall(kClusterHeartbeat, {meta_key_, nodes_key_, node_key_},
            {identity_, options_.node_id, token_, std::to_string(ttl.count()), state,
             std::to_string(counters.pages), std::to_string(counters.errors),
             std::to_string(counters.links_new), idle ? "1" : "0", std::to_string(list), targets})};
  std::vector<RedisReply> replies;
  if (Status called = Call(client, commands, &replies); !called.ok()) {
    if (called.code() == StatusCode::kUnavailable) {
      std::lock_guard<std::mutex> lock(mu_);
      beat_missed_ = true;
    }
    return called;
  }
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
  auto heartbeat = ParseHeartbeat(reply, {});
  if (!heartbeat.ok()) return heartbeat.status();
  std::lock_guard<std::mutex> lock(mu_);
  if (beat_missed_ || (tenure_ != 0 && heartbeat->tenure != tenure_)) {
    // docs/features/cluster.md, "Failover": Redis did not answer, or this node's own expiry
    // passed: a failover or a stall longer than the lease TTL, which ended the other nodes'
    // expiries too. They get one lease TTL to beat again before their partitions are taken
    // (which would fetch again what they recorded and have not yet acknowledged).
    beat_missed_ = false;
    outage_grace_until_ = sent + options_.lease_ttl;
  }
  if (sent < outage_grace_until_) heartbeat = ParseHeartbeat(reply, live_);
  if (!heartbeat.ok()) return heartbeat.status();
  // Published: what was appended since is for the next list.
  if (!targets.empty()) appended_to_.clear();
  RecordHeartbeat(*heartbeat);
  tenures_ = std::move(heartbeat->tenures);
  NoteActivity(*heartbeat);
  if (heartbeat->tenure != tenure_) {
    // A new tenure (the first, or this node's expiry had passed: another may have judged it dead
    // and taken its leases). Every lease of the old one is lost here; the wanted ones are taken
    // again, over the old value, under the new.
    for (uint32_t p = 0; p < parts_.size(); ++p) {
      if (parts_[p].held) MarkLost(p);
    }
    tenure_ = heartbeat->tenure;
    lease_value_ = ClusterLeaseValue(options_.node_id, token_, tenure_);
  } else if (ttl.count() > 0) {
    // docs/features/cluster.md, "Ownership": one heartbeat keeps every lease of the tenure.
    for (Partition& part : parts_) {
      if (part.held) part.valid_until = std::max(part.valid_until, sent + valid_for_);
    }
  }
  if (ttl.count() > 0 && heartbeat->live != live_) AssignPartitions(std::move(heartbeat->live));
  return Status::Ok();
}

// The reply: Redis TIME (ms), seeded, the re-crawl round and its revisit_after, then 14 fields a
// node: id, expiry, state, pages, errors, links_new, host, pid, beat_ms, token, tenure, idle,
// appended, appended_to.
Result<ClusterCoordinator::Impl::Heartbeat> ClusterCoordinator::Impl::ParseHeartbeat(
    const RedisReply& reply, const std::vector<std::string>& kept) const {
  constexpr size_t kHead = 4;
  constexpr size_t kFields = 14;
  if (reply.type != RedisReply::Type::kArray || reply.elements.size() < kHead ||
      (reply.elements.size() - kHead) % kFields != 0) {
    return Status::Corruption(server_ + ": " + Where("heartbeat") + ": an unexpected reply");
  }
  const long long now_ms = reply.elements[0].integer;
  Heartbeat heartbeat;
  heartbeat.seeded = reply.elements[1].str == "1";
  heartbeat.recrawl_round = std::strtoull(reply.elements[2].str.c_str(), nullptr, 10);
  heartbeat.recrawl_revisit_s = std::atoll(reply.elements[3].str.c_str());
  for (size_t i = kHead; i + kFields <= reply.elements.size(); i += kFields) {
    ClusterNodeStatus node;
    node.id = reply.elements[i].str;
    const long long expiry = std::atoll(reply.elements[i + 1].str.c_str());
    node.state = reply.elements[i + 2].str;
    node.alive = expiry > now_ms ||
                 (node.state == "running" && std::binary_search(kept.begin(), kept.end(), node.id));
    node.counters.pages = std::strtoull(reply.elements[i + 3].str.c_str(), nullptr, 10);
    node.counters.errors = std::strtoull(reply.elements[i + 4].str.c_str(), nullptr, 10);
    node.counters.links_new = std::strtoull(reply.elements[i + 5].str.c_str(), nullptr, 10);
    node.host = reply.elements[i + 6].str;
    node.pid = std::atoll(reply.elements[i + 7].str.c_str());
    if (!reply.elements[i + 8].str.empty()) {
      node.heartbeat_age_ms = std::max(0LL, now_ms - std::atoll(reply.elements[i + 8].str.c_str()));
    }
    const uint64_t tenure = std::strtoull(reply.elements[i + 10].str.c_str(), nullptr, 10);
    if (node.id == options_.node_id && reply.elements[i + 9].str == token_) {
      heartbeat.tenure = tenure;
    }
    heartbeat.tenures[node.id] = NodeTenure{tenure, node.alive};
    if (node.id != options_.node_id) {
      heartbeat.appended[node.id] = {std::strtoull(reply.elements[i + 12].str.c_str(), nullptr, 10),
                                     reply.elements[i + 13].str};
    }
    if (node.alive && reply.elements[i + 11].str != "1") heartbeat.all_idle = false;
    heartbeat.pages += node.counters.pages;
    heartbeat.errors += node.counters.errors;
    if (node.alive) heartbeat.live.push_back(node.id);
    heartbeat.nodes.push_back(std::move(node));
  }
  std::sort(heartbeat.live.begin(), heartbeat.live.end());
  return heartbeat;
}

void ClusterCoordinator::Impl::NoteActivity(const Heartbeat& heartbeat) {
  // docs/features/cluster.md, "Inboxes → local frontier": each node publishes, with its heartbeat,
  // the partitions it did not hold whose inboxes it appended to, in numbered lists. A held one
  // named is read at the next Poll. A list skipped (a number jumped, a node first seen with lists
  // behind it) or one of too many partitions ("*") makes a sweep: every held inbox probed once.
  bool appended = false;
  bool sweep = false;
  for (const auto& [id, list] : heartbeat.appended) {
    auto [seen, first] = others_appended_.try_emplace(id, 0);
    if (list.number == seen->second) continue;
    appended = true;
    if (list.number != seen->second + 1 || list.targets == "*") {
      sweep = true;
    } else {
      for (std::string_view rest = list.targets; !rest.empty();) {
        const size_t comma = rest.find(',');
        const uint64_t p = std::strtoull(std::string(rest.substr(0, comma)).c_str(), nullptr, 10);
        if (p < parts_.size() && parts_[p].held) MarkActive(parts_[p]);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
    }
    seen->second = list.number;
  }
  if (sweep) ++sweep_;
  cluster_quiet_ = heartbeat.all_idle && !appended;
}

void ClusterCoordinator::Impl::AssignPartitions(std::vector<std::string> live) {
  live_ = std::move(live);
  // A node that does not see itself alive (its own beat was just written) still wants nothing: it
  // cannot be.
  const std::vector<int> owners = RendezvousAssign(live_, options_.partitions);
  for (uint32_t p = 0; p < options_.partitions; ++p) {
    const bool wanted = owners[p] >= 0 && live_[static_cast<size_t>(owners[p])] == options_.node_id;
    parts_[p].wanted = wanted;
    if (parts_[p].held) parts_[p].draining = !wanted;
  }
}

}  // namespace urlsieve
