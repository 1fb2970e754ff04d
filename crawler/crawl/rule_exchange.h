// RuleExchange: the learned URL rules (url/dust_learner.h) of the crawls that share a seen set in
// Redis — --seen-redis crawls on one set, the nodes of a cluster — so that a rule one crawl
// validated applies in all, and a rule one retires is retired in all (docs/features/dust.md,
// "Shared crawls").
//
// One Redis hash per shared set, "urlsieve:{NAME:dust}:rules": field "ORIGIN FORM", value
// "active" or "retired". A crawl publishes the rules it adopted (HSETNX: a retired rule stays
// retired) and those it retired or rejected (HSET: retired wins), then reads the hash and adopts
// the others' active rules (DustLearner::Merge; a forbidden one stays forbidden) and retires what
// they retired (its suppressed URLs are queued again). Evidence (support, checks) stays with the
// crawl that gathered it; `urlsieve rules` lists each crawl's own view.
//
// Thread-safety: none; the crawl calls Exchange from its monitor thread only.
#ifndef URLSIEVE_CRAWLER_CRAWL_RULE_EXCHANGE_H_
#define URLSIEVE_CRAWLER_CRAWL_RULE_EXCHANGE_H_

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace urlsieve {

class DustLearner;
class RedisClient;

class RuleExchange {
 public:
  // Connects to the Redis at `url` (redis://...), for the shared set `name`.
  static Result<std::unique_ptr<RuleExchange>> Open(const std::string& url,
                                                    const std::string& name);
  ~RuleExchange();

  // One round: publish, then merge the others'. Unavailable (naming the server) when Redis does
  // not answer; the next round tries again (nothing is lost: rules are published whole).
  Status Exchange(DustLearner* learner);

  const std::string& key() const { return key_; }

  // The shared rules as they stand: (origin, form, "active" | "retired"), in key order.
  struct SharedRule {
    std::string origin;
    std::string form;
    std::string state;
  };
  Result<std::vector<SharedRule>> List();

 private:
  RuleExchange(std::unique_ptr<RedisClient> client, std::string key);
  std::unique_ptr<RedisClient> client_;
  const std::string key_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_RULE_EXCHANGE_H_
