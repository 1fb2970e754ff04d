// The native module of the npm package `urlsieve` (node/index.js loads it): the SeenFilter class,
// the names of the opt-in canonicalization rules, and the version.
#include <napi.h>

#include "options.h"
#include "seen_filter_wrap.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("SeenFilter", urlsieve::node::SeenFilterWrap::Define(env));
  Napi::Array rules = Napi::Array::New(env);
  for (const std::string& name : urlsieve::node::RuleOptionNames()) {
    rules.Set(rules.Length(), Napi::String::New(env, name));
  }
  exports.Set("CANONICALIZE_RULES", rules);
  exports.Set("DEFAULT_REDIS_FRONT_CACHE_KEYS",
              Napi::Number::New(env, static_cast<double>(urlsieve::kDefaultRedisFrontCacheKeys)));
  exports.Set("version", Napi::String::New(env, URLSIEVE_VERSION));
  return exports;
}

}  // namespace

NODE_API_MODULE(urlsieve, Init)
