#include "workers.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <utility>

#include "errors.h"
#include "seen_filter_wrap.h"

namespace urlsieve::node {

PromiseWorker::PromiseWorker(Napi::Env env, SeenFilterWrap* wrap, Napi::Object self,
                             std::shared_ptr<SeenFilter> filter)
    : Napi::AsyncWorker(env, "urlsieve"),
      filter_(std::move(filter)),
      deferred_(Napi::Promise::Deferred::New(env)),
      wrap_(wrap),
      self_(Napi::Persistent(self)) {}

void PromiseWorker::OnOK() {
  Napi::Env env = Env();
  Finish();
  if (status_.ok()) {
    deferred_.Resolve(value(env));
  } else {
    deferred_.Reject(StatusError(env, what(), status_).Value());
  }
}

void PromiseWorker::OnError(const Napi::Error& error) {
  Finish();
  deferred_.Reject(error.Value());
}

void PromiseWorker::Finish() {
  filter_.reset();  // before the Promise settles: a close() in its continuation sees no batch
  wrap_->Done();
  self_.Reset();
}

InsertManyWorker::InsertManyWorker(Napi::Env env, SeenFilterWrap* wrap, Napi::Object self,
                                   std::shared_ptr<SeenFilter> filter, std::string bytes,
                                   std::vector<size_t> ends, bool throw_on_invalid)
    : PromiseWorker(env, wrap, self, std::move(filter)),
      bytes_(std::move(bytes)),
      ends_(std::move(ends)),
      throw_on_invalid_(throw_on_invalid) {}

void InsertManyWorker::Execute() {
  const size_t n = ends_.size();
  std::vector<std::string_view> views(n);
  for (size_t i = 0, begin = 0; i < n; begin = ends_[i++]) {
    views[i] = std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }
  if (throw_on_invalid_) {
    // "Nothing inserted" costs a validation pass: a caller must not lose the verdicts of URLs
    // inserted before the bad one.
    const UrlCanonicalizer& canon = filter_->canonicalizer();
    std::string key;
    for (size_t i = 0; i < n; ++i) {
      Status s = canon.CanonicalizeTo(views[i], &key);
      if (!s.ok()) {
        what_ = "insertMany: invalid URL at index " + std::to_string(i) + " (" +
                std::string(views[i].substr(0, 200)) + "); nothing was inserted";
        status_ = std::move(s);
        return;
      }
    }
  }
  // In chunks: the batch's per-URL results (a SeenResult holds a Status) stay small.
  constexpr size_t kChunk = 16384;
  verdicts_.resize(n);
  std::vector<SeenResult> results;
  for (size_t begin = 0; begin < n; begin += kChunk) {
    const size_t count = std::min(kChunk, n - begin);
    status_ = filter_->InsertIfNewBatch(std::span(views).subspan(begin, count), &results);
    if (!status_.ok()) return;
    for (size_t i = 0; i < count; ++i) {
      verdicts_[begin + i] = static_cast<uint8_t>(results[i].verdict);
    }
  }
}

Napi::Value InsertManyWorker::value(Napi::Env env) {
  Napi::Array out = Napi::Array::New(env, verdicts_.size());
  const Napi::Value yes = Napi::Boolean::New(env, true);
  const Napi::Value no = Napi::Boolean::New(env, false);
  for (size_t i = 0; i < verdicts_.size(); ++i) {
    switch (static_cast<Verdict>(verdicts_[i])) {
      case Verdict::kNew:
        out.Set(static_cast<uint32_t>(i), yes);
        break;
      case Verdict::kSeen:
        out.Set(static_cast<uint32_t>(i), no);
        break;
      case Verdict::kInvalid:
        out.Set(static_cast<uint32_t>(i), env.Null());
        break;
    }
  }
  return out;
}

}  // namespace urlsieve::node
