#include "options.h"

#include <cmath>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "base/duration.h"
#include "errors.h"

namespace urlsieve::node {
namespace {

std::string CamelCase(std::string_view snake) {
  std::string out;
  bool upper = false;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return out;
}

// Each reader throws a JavaScript exception and returns false on a bad value.
bool ReadBool(const Napi::Value& v, const std::string& key, bool* out) {
  if (!v.IsBoolean()) {
    ArgTypeError(v.Env(), "option " + key + " must be a boolean").ThrowAsJavaScriptException();
    return false;
  }
  *out = v.As<Napi::Boolean>().Value();
  return true;
}

bool ReadString(const Napi::Value& v, const std::string& key, std::string* out) {
  if (v.IsNull()) {
    out->clear();
    return true;
  }
  if (!v.IsString()) {
    ArgTypeError(v.Env(), "option " + key + " must be a string").ThrowAsJavaScriptException();
    return false;
  }
  *out = v.As<Napi::String>().Utf8Value();
  return true;
}

// trackingExceptions: null (none) or an array of "HOST:NAME" strings (SeenFilter::Open checks
// each).
bool ReadStringList(const Napi::Value& v, const std::string& key, std::vector<std::string>* out) {
  out->clear();
  if (v.IsNull()) return true;
  if (!v.IsArray()) {
    ArgTypeError(v.Env(), "option " + key + " must be an array of strings")
        .ThrowAsJavaScriptException();
    return false;
  }
  Napi::Array array = v.As<Napi::Array>();
  for (uint32_t i = 0; i < array.Length(); ++i) {
    Napi::Value item = array.Get(i);
    if (!item.IsString()) {
      ArgTypeError(v.Env(), "option " + key + " must be an array of strings")
          .ThrowAsJavaScriptException();
      return false;
    }
    out->push_back(item.As<Napi::String>().Utf8Value());
  }
  return true;
}

// A non-negative whole number up to 2^53 (a JavaScript number holds no more exactly).
bool ReadCount(const Napi::Value& v, const std::string& key, uint64_t* out) {
  if (!v.IsNumber()) {
    ArgTypeError(v.Env(), "option " + key + " must be a number").ThrowAsJavaScriptException();
    return false;
  }
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 9007199254740992.0) || std::floor(d) != d) {
    Napi::RangeError::New(v.Env(), "urlsieve: option " + key +
                                       " must be a non-negative whole number, not " +
                                       v.ToString().Utf8Value())
        .ThrowAsJavaScriptException();
    return false;
  }
  *out = static_cast<uint64_t>(d);
  return true;
}

// revisitAfter: null/undefined/0 (never), whole seconds, or a duration string ("7d", "12h").
bool ReadRevisitAfter(const Napi::Value& v, std::chrono::seconds* out) {
  if (v.IsNull()) {
    *out = std::chrono::seconds(0);
    return true;
  }
  if (v.IsString()) {
    Result<std::chrono::seconds> parsed = ParseDuration(v.As<Napi::String>().Utf8Value());
    if (!parsed.ok()) {
      StatusError(v.Env(), "option revisitAfter", parsed.status()).ThrowAsJavaScriptException();
      return false;
    }
    *out = *parsed;
    return true;
  }
  uint64_t seconds = 0;
  if (!ReadCount(v, "revisitAfter (seconds, or a duration such as \"7d\")", &seconds)) return false;
  *out = std::chrono::seconds(static_cast<int64_t>(seconds));
  return true;
}

}  // namespace

std::vector<std::string> RuleOptionNames() {
  std::vector<std::string> names;
  for (const CanonicalizeRule& rule : kCanonicalizeRules) names.push_back(CamelCase(rule.name));
  return names;
}

bool ReadOptions(const Napi::Value& value, SeenFilterOptions* o) {
  Napi::Env env = value.Env();
  if (value.IsUndefined() || value.IsNull()) return true;
  if (!value.IsObject() || value.IsArray()) {
    ArgTypeError(env, "new SeenFilter(options): options must be an object")
        .ThrowAsJavaScriptException();
    return false;
  }
  Napi::Object object = value.As<Napi::Object>();
  Napi::Array keys = object.GetPropertyNames();
  const std::vector<std::string> rules = RuleOptionNames();
  uint64_t max_url_length = o->canonicalize.max_length;
  uint64_t generations = o->generations;
  for (uint32_t i = 0; i < keys.Length(); ++i) {
    const std::string key = keys.Get(i).ToString().Utf8Value();
    Napi::Value v = object.Get(key);
    if (v.IsUndefined()) continue;
    bool ok = true;
    if (key == "capacity") {
      ok = ReadCount(v, key, &o->capacity);
    } else if (key == "fpRate") {
      if (!v.IsNumber()) {
        ArgTypeError(env, "option fpRate must be a number").ThrowAsJavaScriptException();
        return false;
      }
      o->fp_rate = v.As<Napi::Number>().DoubleValue();  // SeenFilter::Open checks the range
    } else if (key == "stateDir") {
      ok = ReadString(v, key, &o->state_dir);
    } else if (key == "exact") {
      ok = ReadBool(v, key, &o->exact);
    } else if (key == "maxUrlLength") {
      ok = ReadCount(v, key, &max_url_length);
    } else if (key == "rebuildBloom") {
      ok = ReadBool(v, key, &o->rebuild_bloom);
    } else if (key == "redis") {
      ok = ReadString(v, key, &o->redis_url);
    } else if (key == "name") {
      ok = ReadString(v, key, &o->redis_name);
    } else if (key == "redisFrontCacheKeys") {
      ok = ReadCount(v, key, &o->redis_front_cache_keys);
    } else if (key == "revisitAfter") {
      ok = ReadRevisitAfter(v, &o->revisit_after);
    } else if (key == "generations") {
      ok = ReadCount(v, key, &generations);
    } else if (key == "deletable") {
      ok = ReadBool(v, key, &o->deletable);
    } else if (key == "trackingExceptions") {
      ok = ReadStringList(v, key, &o->canonicalize.tracking_exceptions);
    } else {
      auto rule = std::find(rules.begin(), rules.end(), key);
      if (rule == rules.end()) {
        ArgTypeError(env, "new SeenFilter(options): unknown option '" + key + "'")
            .ThrowAsJavaScriptException();
        return false;
      }
      ok = ReadBool(v, key, &(o->canonicalize.*kCanonicalizeRules[rule - rules.begin()].member));
    }
    if (!ok) return false;
  }
  o->canonicalize.max_length = static_cast<size_t>(max_url_length);
  // Out of [1, 256] is SeenFilter::Open's InvalidArgument; only the cast must not wrap.
  o->generations = static_cast<uint32_t>(std::min<uint64_t>(generations, UINT32_MAX));
  return true;
}

}  // namespace urlsieve::node
