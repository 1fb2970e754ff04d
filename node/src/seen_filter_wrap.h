// SeenFilterWrap: the JavaScript class `SeenFilter` (node/index.js re-exports it) over a
// urlsieve::SeenFilter (dedup/seen_filter.h). Single URLs are answered synchronously on the
// JavaScript thread (a local insert costs less than a trip to a worker thread); insertMany and
// save run on libuv's thread pool (Napi::AsyncWorker) and return Promises, so a big batch or a
// snapshot write never blocks the event loop.
//
// Thread-safety: JavaScript calls arrive on one thread; the workers share the native filter (which
// is thread-safe) through their own shared_ptr, so a batch in flight keeps it alive. close() while
// a batch or a save is pending is refused (FAILED_PRECONDITION): the state directory stays locked
// until the last reference goes, and a save racing the close could miss the batch's inserts.
#ifndef URLSIEVE_NODE_SRC_SEEN_FILTER_WRAP_H_
#define URLSIEVE_NODE_SRC_SEEN_FILTER_WRAP_H_

#include <napi.h>

#include <memory>

#include "dedup/seen_filter.h"

namespace urlsieve::node {

class SeenFilterWrap : public Napi::ObjectWrap<SeenFilterWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit SeenFilterWrap(const Napi::CallbackInfo& info);

  // The pending count of asynchronous operations (insertMany, save): the worker calls Done when
  // its Promise is settled.
  void Done() { --pending_; }

 private:
  Napi::Value InsertIfNew(const Napi::CallbackInfo& info);
  Napi::Value InsertMany(const Napi::CallbackInfo& info);
  Napi::Value InsertKeyIfNew(const Napi::CallbackInfo& info);
  Napi::Value Contains(const Napi::CallbackInfo& info);
  Napi::Value Forget(const Napi::CallbackInfo& info);
  Napi::Value Canonicalize(const Napi::CallbackInfo& info);
  Napi::Value Stats(const Napi::CallbackInfo& info);
  Napi::Value Save(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Notices(const Napi::CallbackInfo& info);
  Napi::Value StateDir(const Napi::CallbackInfo& info);
  Napi::Value RedisName(const Napi::CallbackInfo& info);
  Napi::Value Closed(const Napi::CallbackInfo& info);

  // The open filter, or null after throwing "closed" (`method` names the call).
  SeenFilter* Get(const Napi::Env& env, const char* method);
  // The URL argument's UTF-8 bytes into *out, or false after throwing a TypeError.
  static bool UrlArg(const Napi::CallbackInfo& info, const char* method, std::string* out);

  std::shared_ptr<SeenFilter> filter_;
  int pending_ = 0;
};

}  // namespace urlsieve::node

#endif  // URLSIEVE_NODE_SRC_SEEN_FILTER_WRAP_H_
