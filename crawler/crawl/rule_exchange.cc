#include "crawler/crawl/rule_exchange.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "redis/redis_address.h"
#include "redis/redis_client.h"
#include "url/dust_learner.h"

namespace urlsieve {

RuleExchange::RuleExchange(std::unique_ptr<RedisClient> client, std::string key)
    : client_(std::move(client)), key_(std::move(key)) {}

RuleExchange::~RuleExchange() = default;

Result<std::unique_ptr<RuleExchange>> RuleExchange::Open(const std::string& url,
                                                         const std::string& name) {
  Result<RedisAddress> address = RedisAddress::Parse(url);
  if (!address.ok()) return address.status();
  Result<std::unique_ptr<RedisClient>> client = RedisClient::Connect(*address);
  if (!client.ok()) return client.status();
  return std::unique_ptr<RuleExchange>(
      new RuleExchange(std::move(*client), "urlsieve:{" + name + ":dust}:rules"));
}

Result<std::vector<RuleExchange::SharedRule>> RuleExchange::List() {
  Result<RedisReply> all = client_->Run({{"HGETALL", key_}});
  if (!all.ok()) return all.status();
  if (all->is_error()) return RedisErrorStatus(client_->server(), "reading the URL rules", *all);
  std::vector<SharedRule> rules;
  for (size_t i = 0; i + 1 < all->elements.size(); i += 2) {
    const std::string& field = all->elements[i].str;
    const size_t space = field.find(' ');
    if (space == std::string::npos) continue;
    rules.push_back({field.substr(0, space), field.substr(space + 1), all->elements[i + 1].str});
  }
  std::sort(rules.begin(), rules.end(), [](const SharedRule& a, const SharedRule& b) {
    return a.origin != b.origin ? a.origin < b.origin : a.form < b.form;
  });
  return rules;
}

Status RuleExchange::Exchange(DustLearner* learner) {
  std::vector<RedisCommand> commands;
  for (const RuleRecord& r : learner->Records()) {
    if (r.pinned || r.forbidden) continue;  // a --rules-file is this crawl's own policy
    const bool retired = r.state == RuleState::kRetired || r.state == RuleState::kRejected;
    if (!retired && r.state != RuleState::kActive) continue;
    commands.push_back({{retired ? "HSET" : "HSETNX", key_, r.origin + " " + r.rule.Form(),
                         retired ? "retired" : "active"}});
  }
  commands.push_back({{"HGETALL", key_}});
  std::vector<RedisReply> replies;
  URLSIEVE_RETURN_IF_ERROR(client_->Pipeline(commands, &replies));
  for (const RedisReply& reply : replies) {
    if (reply.is_error()) return RedisErrorStatus(client_->server(), "sharing URL rules", reply);
  }
  const RedisReply& all = replies.back();
  for (size_t i = 0; i + 1 < all.elements.size(); i += 2) {
    const std::string& field = all.elements[i].str;
    const size_t space = field.find(' ');
    if (space == std::string::npos) continue;  // not ours: nothing to merge
    const std::string& state = all.elements[i + 1].str;
    if (state != "active" && state != "retired") continue;
    learner->Merge(std::string_view(field).substr(0, space),
                   std::string_view(field).substr(space + 1), state == "retired");
  }
  return Status::Ok();
}

}  // namespace urlsieve
