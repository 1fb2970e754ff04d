// The asynchronous operations of SeenFilterWrap, each a Napi::AsyncWorker on libuv's thread pool:
// InsertManyWorker (SeenFilter::InsertIfNewBatch over a batch of URLs) and SaveWorker
// (SeenFilter::Save). Each settles a Promise and then tells its wrapper it is done.
//
// Thread-safety: the constructor and On* run on the JavaScript thread; Execute on a pool thread,
// touching only the worker's own copies and the (thread-safe) native filter.
#ifndef URLSIEVE_NODE_SRC_WORKERS_H_
#define URLSIEVE_NODE_SRC_WORKERS_H_

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dedup/seen_filter.h"

namespace urlsieve::node {

class SeenFilterWrap;

// Settles `deferred` and releases the wrapper's pending count; the base of both workers.
class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, SeenFilterWrap* wrap, Napi::Object self,
                std::shared_ptr<SeenFilter> filter);
  Napi::Promise promise() { return deferred_.Promise(); }

 protected:
  // Resolves with value(), or rejects with the Status the Execute left in status_.
  void OnOK() override;
  void OnError(const Napi::Error& error) override;
  virtual Napi::Value value(Napi::Env env) { return env.Undefined(); }
  virtual std::string what() const = 0;

  std::shared_ptr<SeenFilter> filter_;
  Status status_;

 private:
  void Finish();

  Napi::Promise::Deferred deferred_;
  SeenFilterWrap* wrap_;
  Napi::ObjectReference self_;  // keeps the wrapper (and so wrap_) alive until Finish
};

// insertMany(urls, {invalid}): one boolean per URL (null for an invalid URL with invalid: "null").
// With invalid: "throw" an invalid URL rejects naming its index, and nothing is inserted.
class InsertManyWorker : public PromiseWorker {
 public:
  // The URLs are copied into one buffer here, on the JavaScript thread (a JavaScript string cannot
  // be read from another thread).
  InsertManyWorker(Napi::Env env, SeenFilterWrap* wrap, Napi::Object self,
                   std::shared_ptr<SeenFilter> filter, std::string bytes, std::vector<size_t> ends,
                   bool throw_on_invalid);

 protected:
  void Execute() override;
  Napi::Value value(Napi::Env env) override;
  std::string what() const override { return what_; }

 private:
  std::string bytes_;         // the URLs, back to back
  std::vector<size_t> ends_;  // the end offset of each
  bool throw_on_invalid_;
  std::vector<uint8_t> verdicts_;  // Verdict per URL
  std::string what_ = "insertMany";
};

class SaveWorker : public PromiseWorker {
 public:
  using PromiseWorker::PromiseWorker;

 protected:
  void Execute() override { status_ = filter_->Save(); }
  std::string what() const override { return "save"; }
};

}  // namespace urlsieve::node

#endif  // URLSIEVE_NODE_SRC_WORKERS_H_
