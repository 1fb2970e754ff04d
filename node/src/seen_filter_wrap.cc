#include "seen_filter_wrap.h"

#include <string>
#include <utility>
#include <vector>

#include "errors.h"
#include "options.h"
#include "workers.h"

namespace urlsieve::node {

Napi::Function SeenFilterWrap::Define(Napi::Env env) {
  return DefineClass(env, "SeenFilter",
                     {
                         InstanceMethod<&SeenFilterWrap::InsertIfNew>("insertIfNew"),
                         InstanceMethod<&SeenFilterWrap::InsertMany>("insertMany"),
                         InstanceMethod<&SeenFilterWrap::InsertKeyIfNew>("insertKeyIfNew"),
                         InstanceMethod<&SeenFilterWrap::Contains>("contains"),
                         InstanceMethod<&SeenFilterWrap::Forget>("forget"),
                         InstanceMethod<&SeenFilterWrap::Canonicalize>("canonicalize"),
                         InstanceMethod<&SeenFilterWrap::Stats>("stats"),
                         InstanceMethod<&SeenFilterWrap::Save>("save"),
                         InstanceMethod<&SeenFilterWrap::Close>("close"),
                         InstanceAccessor<&SeenFilterWrap::Notices>("notices"),
                         InstanceAccessor<&SeenFilterWrap::StateDir>("stateDir"),
                         InstanceAccessor<&SeenFilterWrap::RedisName>("redisName"),
                         InstanceAccessor<&SeenFilterWrap::Closed>("closed"),
                     });
}

SeenFilterWrap::SeenFilterWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<SeenFilterWrap>(info) {
  Napi::Env env = info.Env();
  SeenFilterOptions options;
  if (!ReadOptions(info[0], &options)) return;
  // Synchronous, as a constructor must be: a local open reads the state's files, a Redis open
  // connects (the Python module blocks there too).
  Result<std::unique_ptr<SeenFilter>> opened = SeenFilter::Open(options);
  if (!opened.ok()) {
    StatusError(env, "new SeenFilter", opened.status()).ThrowAsJavaScriptException();
    return;
  }
  filter_ = std::shared_ptr<SeenFilter>(std::move(opened).value());
}

SeenFilter* SeenFilterWrap::Get(const Napi::Env& env, const char* method) {
  if (filter_ == nullptr) {
    StatusError(env, method, Status(StatusCode::kFailedPrecondition, "the SeenFilter is closed"))
        .ThrowAsJavaScriptException();
  }
  return filter_.get();
}

bool SeenFilterWrap::UrlArg(const Napi::CallbackInfo& info, const char* method, std::string* out) {
  if (!info[0].IsString()) {
    ArgTypeError(info.Env(), std::string(method) + ": the URL must be a string")
        .ThrowAsJavaScriptException();
    return false;
  }
  *out = info[0].As<Napi::String>().Utf8Value();
  return true;
}

Napi::Value SeenFilterWrap::InsertIfNew(const Napi::CallbackInfo& info) {
  std::string url;
  if (!UrlArg(info, "insertIfNew", &url)) return {};
  SeenFilter* f = Get(info.Env(), "insertIfNew");
  if (f == nullptr) return {};
  Result<bool> r = f->InsertIfNew(url);
  if (!r.ok()) {
    StatusError(info.Env(), "insertIfNew", r.status()).ThrowAsJavaScriptException();
    return {};
  }
  return Napi::Boolean::New(info.Env(), *r);
}

Napi::Value SeenFilterWrap::InsertMany(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArray()) {
    ArgTypeError(env, "insertMany: urls must be an array of strings").ThrowAsJavaScriptException();
    return {};
  }
  bool throw_on_invalid = true;
  if (info[1].IsObject()) {
    Napi::Value invalid = info[1].As<Napi::Object>().Get("invalid");
    const std::string mode = invalid.IsString() ? invalid.As<Napi::String>().Utf8Value() : "";
    if (!invalid.IsUndefined() && mode != "throw" && mode != "null") {
      ArgTypeError(env, "insertMany: option invalid must be \"throw\" or \"null\"")
          .ThrowAsJavaScriptException();
      return {};
    }
    throw_on_invalid = mode != "null";
  }
  if (Get(env, "insertMany") == nullptr) return {};
  // The strings' bytes go straight into one buffer: no std::string per URL.
  Napi::Array urls = info[0].As<Napi::Array>();
  const uint32_t n = urls.Length();
  std::string bytes;
  std::vector<size_t> ends(n);
  for (uint32_t i = 0; i < n; ++i) {
    Napi::Value url = urls.Get(i);
    if (!url.IsString()) {
      ArgTypeError(env, "insertMany: urls[" + std::to_string(i) + "] is not a string")
          .ThrowAsJavaScriptException();
      return {};
    }
    size_t length = 0;
    napi_get_value_string_utf8(env, url, nullptr, 0, &length);
    const size_t begin = bytes.size();
    bytes.resize(begin + length + 1);  // napi writes a terminating NUL
    napi_get_value_string_utf8(env, url, bytes.data() + begin, length + 1, &length);
    bytes.resize(begin + length);
    ends[i] = bytes.size();
  }
  auto* worker = new InsertManyWorker(env, this, Value(), filter_, std::move(bytes),
                                      std::move(ends), throw_on_invalid);
  ++pending_;
  worker->Queue();
  return worker->promise();
}

Napi::Value SeenFilterWrap::InsertKeyIfNew(const Napi::CallbackInfo& info) {
  std::string key;
  if (!UrlArg(info, "insertKeyIfNew", &key)) return {};
  SeenFilter* f = Get(info.Env(), "insertKeyIfNew");
  if (f == nullptr) return {};
  std::string_view view(key);
  std::vector<uint8_t> is_new;
  Status s = f->InsertKeysIfNew(std::span<const std::string_view>(&view, 1), &is_new);
  if (!s.ok()) {
    StatusError(info.Env(), "insertKeyIfNew", s).ThrowAsJavaScriptException();
    return {};
  }
  return Napi::Boolean::New(info.Env(), is_new[0] != 0);
}

Napi::Value SeenFilterWrap::Contains(const Napi::CallbackInfo& info) {
  std::string url;
  if (!UrlArg(info, "contains", &url)) return {};
  SeenFilter* f = Get(info.Env(), "contains");
  if (f == nullptr) return {};
  Result<bool> r = f->Contains(url);
  if (!r.ok()) {
    StatusError(info.Env(), "contains", r.status()).ThrowAsJavaScriptException();
    return {};
  }
  return Napi::Boolean::New(info.Env(), *r);
}

Napi::Value SeenFilterWrap::Forget(const Napi::CallbackInfo& info) {
  std::string url;
  if (!UrlArg(info, "forget", &url)) return {};
  SeenFilter* f = Get(info.Env(), "forget");
  if (f == nullptr) return {};
  Result<bool> r = f->Forget(url);
  if (!r.ok()) {
    StatusError(info.Env(), "forget", r.status()).ThrowAsJavaScriptException();
    return {};
  }
  return Napi::Boolean::New(info.Env(), *r);
}

Napi::Value SeenFilterWrap::Canonicalize(const Napi::CallbackInfo& info) {
  std::string url;
  if (!UrlArg(info, "canonicalize", &url)) return {};
  SeenFilter* f = Get(info.Env(), "canonicalize");
  if (f == nullptr) return {};
  std::string key;
  Status s = f->canonicalizer().CanonicalizeTo(url, &key);
  if (!s.ok()) {
    StatusError(info.Env(), "canonicalize", s).ThrowAsJavaScriptException();
    return {};
  }
  return Napi::String::New(info.Env(), key);
}

Napi::Value SeenFilterWrap::Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  SeenFilter* f = Get(env, "stats");
  if (f == nullptr) return {};
  const SeenStats s = f->Stats();
  Napi::Object o = Napi::Object::New(env);
  auto number = [&](const char* name, double value) { o.Set(name, Napi::Number::New(env, value)); };
  number("capacity", static_cast<double>(s.capacity));
  number("fpRate", s.fp_rate);
  o.Set("exact", Napi::Boolean::New(env, s.exact));
  o.Set("deletable", Napi::Boolean::New(env, s.deletable));
  number("generation", static_cast<double>(s.generation));
  number("bloomInserted", static_cast<double>(s.bloom_inserted));
  number("bloomCapacity", static_cast<double>(s.bloom_capacity));
  number("bloomLayers", s.bloom_layers);
  number("bloomBytes", static_cast<double>(s.bloom_bytes));
  number("bloomFillRatio", s.bloom_fill_ratio);
  number("bloomExpectedFpRate", s.bloom_expected_fp_rate);
  number("bloomBitsPerKey", s.bloom_inserted ? 8.0 * static_cast<double>(s.bloom_bytes) /
                                                   static_cast<double>(s.bloom_inserted)
                                             : 0.0);
  number("storedKeys", static_cast<double>(s.stored_keys));
  number("maybeLookups", static_cast<double>(s.maybe_lookups));
  number("falsePositives", static_cast<double>(s.false_positives));
  number("revisitAfter", static_cast<double>(s.revisit_after_s));  // seconds; 0: never
  number("generations", s.generations);
  number("liveGenerations", s.live_generations);
  return o;
}

Napi::Value SeenFilterWrap::Save(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (Get(env, "save") == nullptr) return {};
  auto* worker = new SaveWorker(env, this, Value(), filter_);
  ++pending_;
  worker->Queue();
  return worker->promise();
}

Napi::Value SeenFilterWrap::Close(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (filter_ == nullptr) return env.Undefined();  // a second close is a no-op
  if (pending_ > 0) {
    StatusError(env, "close",
                Status(StatusCode::kFailedPrecondition,
                       std::to_string(pending_) +
                           " insertMany/save call(s) still pending: await them before close()"))
        .ThrowAsJavaScriptException();
    return {};
  }
  std::shared_ptr<SeenFilter> f = std::move(filter_);
  Status s = f->SaveForClose();
  f.reset();  // releases the state directory's lock
  if (!s.ok()) {
    StatusError(env, "close", s).ThrowAsJavaScriptException();
    return {};
  }
  return env.Undefined();
}

Napi::Value SeenFilterWrap::Notices(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  SeenFilter* f = Get(env, "notices");
  if (f == nullptr) return {};
  Napi::Array out = Napi::Array::New(env);
  for (const SeenNotice& n : f->notices()) out.Set(out.Length(), Napi::String::New(env, n.text));
  return out;
}

Napi::Value SeenFilterWrap::StateDir(const Napi::CallbackInfo& info) {
  SeenFilter* f = Get(info.Env(), "stateDir");
  if (f == nullptr) return {};
  const std::string& dir = f->options().state_dir;
  return dir.empty() ? info.Env().Null() : Napi::String::New(info.Env(), dir);
}

Napi::Value SeenFilterWrap::RedisName(const Napi::CallbackInfo& info) {
  SeenFilter* f = Get(info.Env(), "redisName");
  if (f == nullptr) return {};
  const std::string& name = f->options().redis_name;
  return name.empty() ? info.Env().Null() : Napi::String::New(info.Env(), name);
}

Napi::Value SeenFilterWrap::Closed(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), filter_ == nullptr);
}

}  // namespace urlsieve::node
