// The C API (dedup/urlsieve.h) over SeenFilter and ContentSeenFilter. Every entry point catches
// every exception: a C caller, or a language binding unwinding through C frames, must never see
// one.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/content/content_seen_set.h"
#include "dedup/content/simhash.h"
#include "dedup/content_seen_filter.h"
#include "dedup/seen_filter.h"
#include "dedup/urlsieve.h"

struct urlsieve_filter {
  std::unique_ptr<urlsieve::SeenFilter> filter;
};

struct urlsieve_content_set {
  std::unique_ptr<urlsieve::ContentSeenFilter> set;
};

namespace {

using urlsieve::Status;
using urlsieve::StatusCode;

urlsieve_status ToCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return URLSIEVE_OK;
    case StatusCode::kInvalidArgument:
      return URLSIEVE_INVALID_ARGUMENT;
    case StatusCode::kNotFound:
      return URLSIEVE_NOT_FOUND;
    case StatusCode::kCorruption:
      return URLSIEVE_CORRUPTION;
    case StatusCode::kIoError:
      return URLSIEVE_IO_ERROR;
    case StatusCode::kFailedPrecondition:
      return URLSIEVE_FAILED_PRECONDITION;
    case StatusCode::kUnsupported:
      return URLSIEVE_UNSUPPORTED;
    case StatusCode::kUnavailable:
      return URLSIEVE_UNAVAILABLE;
  }
  return URLSIEVE_INTERNAL;
}

urlsieve_status Fail(urlsieve_error* error, urlsieve_status code, std::string_view message) {
  if (error != nullptr) {
    error->code = code;
    size_t n = std::min(message.size(), sizeof(error->message) - 1);
    std::memcpy(error->message, message.data(), n);
    error->message[n] = '\0';
  }
  return code;
}

urlsieve_status Report(urlsieve_error* error, const Status& status) {
  return Fail(error, ToCode(status.code()), status.ok() ? "ok" : status.message());
}

// Runs body() and turns whatever it throws into a status: the boundary the header promises.
template <typename Body>
urlsieve_status Guard(urlsieve_error* error, Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(error, URLSIEVE_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return Fail(error, URLSIEVE_INTERNAL, e.what());
  } catch (...) {
    return Fail(error, URLSIEVE_INTERNAL, "unknown exception");
  }
}

// Reads a caller's options struct that may be older (smaller) than ours: fields past its
// struct_size keep their defaults.
urlsieve_options ReadOptions(const urlsieve_options* given) {
  urlsieve_options o;
  urlsieve_options_init(&o);
  size_t n = std::min(given->struct_size, sizeof(o));
  std::memcpy(&o, given, n);
  o.struct_size = sizeof(o);
  return o;
}

urlsieve_content_options ReadContentOptions(const urlsieve_content_options* given) {
  urlsieve_content_options o;
  urlsieve_content_options_init(&o);
  size_t n = std::min(given->struct_size, sizeof(o));
  std::memcpy(&o, given, n);
  o.struct_size = sizeof(o);
  return o;
}

// Writes a copy into a caller's buffer as snprintf does (at most capacity - 1 bytes and a NUL) and
// its whole length to *size.
void WriteCopy(std::string_view copy, char* buffer, size_t capacity, size_t* size) {
  *size = copy.size();
  if (buffer == nullptr || capacity == 0) return;
  size_t n = std::min(copy.size(), capacity - 1);
  if (n > 0) std::memcpy(buffer, copy.data(), n);  // an empty view's data() may be null
  buffer[n] = '\0';
}

urlsieve::ContentFingerprint Fingerprint(uint64_t digest, uint64_t simhash, int has_simhash) {
  urlsieve::ContentFingerprint f;
  f.digest = digest;
  if (has_simhash != 0) f.simhash = simhash;
  return f;
}

// The first version of urlsieve_content_verdict ends with first_data_size: every caller has the
// fields up to there.
constexpr size_t kContentVerdictMinSize =
    offsetof(urlsieve_content_verdict, first_data_size) + sizeof(size_t);

}  // namespace

extern "C" {

const char* urlsieve_version(void) { return "0.1.0"; }

const char* urlsieve_status_name(urlsieve_status code) {
  switch (code) {
    case URLSIEVE_OK:
      return "ok";
    case URLSIEVE_INVALID_ARGUMENT:
      return "invalid argument";
    case URLSIEVE_NOT_FOUND:
      return "not found";
    case URLSIEVE_CORRUPTION:
      return "corruption";
    case URLSIEVE_IO_ERROR:
      return "I/O error";
    case URLSIEVE_FAILED_PRECONDITION:
      return "failed precondition";
    case URLSIEVE_UNSUPPORTED:
      return "unsupported";
    case URLSIEVE_OUT_OF_MEMORY:
      return "out of memory";
    case URLSIEVE_INTERNAL:
      return "internal error";
    case URLSIEVE_BUFFER_TOO_SMALL:
      return "buffer too small";
    case URLSIEVE_UNAVAILABLE:
      return "unavailable";
  }
  return "unknown status";
}

void urlsieve_options_init(urlsieve_options* options) {
  if (options == nullptr) return;
  urlsieve::SeenFilterOptions d;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->capacity = d.capacity;
  options->fp_rate = d.fp_rate;
  options->state_dir = nullptr;
  options->exact = d.exact;
  options->max_url_length = d.canonicalize.max_length;
  options->redis_url = nullptr;
  options->redis_name = nullptr;
  options->redis_front_cache_keys = d.redis_front_cache_keys;
  options->revisit_after_seconds = 0;
  options->generations = d.generations;
  options->tracking_exceptions = nullptr;
}

urlsieve_status urlsieve_open(const urlsieve_options* options, urlsieve_filter** filter,
                              urlsieve_error* error) {
  if (filter != nullptr) *filter = nullptr;
  if (options == nullptr || filter == nullptr) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT,
                "urlsieve_open: options and filter must not be NULL");
  }
  if (options->struct_size < offsetof(urlsieve_options, sort_query)) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT,
                "urlsieve_open: options->struct_size not set (call urlsieve_options_init)");
  }
  return Guard(error, [&]() -> urlsieve_status {
    urlsieve_options o = ReadOptions(options);
    urlsieve::SeenFilterOptions so;
    so.capacity = o.capacity;
    so.fp_rate = o.fp_rate;
    if (o.state_dir != nullptr) so.state_dir = o.state_dir;
    so.exact = o.exact != 0;
    // One field per rule: the C struct is ABI, so it cannot be built from kCanonicalizeRules.
    static_assert(std::size(urlsieve::kCanonicalizeRules) == 6,
                  "a new rule needs a urlsieve_options field (dedup/urlsieve.h, appended, "
                  "struct_size-checked) and an assignment here");
    so.canonicalize.sort_query = o.sort_query != 0;
    so.canonicalize.drop_empty_query = o.drop_empty_query != 0;
    so.canonicalize.strip_session_ids = o.strip_session_ids != 0;
    so.canonicalize.strip_www = o.strip_www != 0;
    so.canonicalize.collapse_slashes = o.collapse_slashes != 0;
    so.canonicalize.strip_tracking_params = o.strip_tracking_params != 0;
    if (o.tracking_exception_count > 0 && o.tracking_exceptions == nullptr) {
      return Fail(error, URLSIEVE_INVALID_ARGUMENT,
                  "tracking_exceptions is NULL but tracking_exception_count is not 0");
    }
    for (size_t i = 0; i < o.tracking_exception_count; ++i) {
      if (o.tracking_exceptions[i] == nullptr) {
        return Fail(error, URLSIEVE_INVALID_ARGUMENT, "tracking_exceptions holds a NULL string");
      }
      so.canonicalize.tracking_exceptions.emplace_back(o.tracking_exceptions[i]);
    }
    so.canonicalize.max_length = o.max_url_length;
    so.rebuild_bloom = o.rebuild_bloom != 0;
    if (o.redis_url != nullptr) so.redis_url = o.redis_url;
    if (o.redis_name != nullptr) so.redis_name = o.redis_name;
    so.redis_front_cache_keys = o.redis_front_cache_keys;
    if (o.revisit_after_seconds > static_cast<uint64_t>(INT64_MAX)) {
      return Fail(error, URLSIEVE_INVALID_ARGUMENT, "revisit_after_seconds is too large");
    }
    so.revisit_after = std::chrono::seconds(static_cast<int64_t>(o.revisit_after_seconds));
    so.generations = o.generations;
    so.deletable = o.deletable != 0;
    auto opened = urlsieve::SeenFilter::Open(so);
    if (!opened.ok()) return Report(error, opened.status());
    auto handle = std::make_unique<urlsieve_filter>();
    handle->filter = std::move(opened).value();
    *filter = handle.release();
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_close(urlsieve_filter* filter, urlsieve_error* error) {
  if (filter == nullptr) return URLSIEVE_OK;
  std::unique_ptr<urlsieve_filter> owned(filter);
  return Guard(error,
               [&]() -> urlsieve_status { return Report(error, owned->filter->SaveForClose()); });
}

urlsieve_status urlsieve_insert_if_new(urlsieve_filter* filter, const char* url, size_t size,
                                       int* is_new, urlsieve_error* error) {
  if (filter == nullptr || (url == nullptr && size != 0) || is_new == nullptr) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_insert_if_new: NULL argument");
  }
  return Guard(error, [&]() -> urlsieve_status {
    auto r = filter->filter->InsertIfNew(std::string_view(url, size));
    if (!r.ok()) return Report(error, r.status());
    *is_new = *r ? 1 : 0;
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_insert_batch(urlsieve_filter* filter, const urlsieve_url* urls,
                                      size_t count, uint8_t* results, urlsieve_error* error) {
  if (filter == nullptr || (count != 0 && (urls == nullptr || results == nullptr))) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_insert_batch: NULL argument");
  }
  for (size_t i = 0; i < count; ++i) {
    if (urls[i].data == nullptr && urls[i].size != 0) {
      return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_insert_batch: a URL's data is NULL");
    }
  }
  return Guard(error, [&]() -> urlsieve_status {
    std::vector<std::string_view> views(count);
    for (size_t i = 0; i < count; ++i) views[i] = std::string_view(urls[i].data, urls[i].size);
    std::vector<urlsieve::SeenResult> out;
    Status s = filter->filter->InsertIfNewBatch(views, &out);
    if (!s.ok()) return Report(error, s);
    for (size_t i = 0; i < count; ++i) {
      switch (out[i].verdict) {
        case urlsieve::Verdict::kNew:
          results[i] = URLSIEVE_NEW;
          break;
        case urlsieve::Verdict::kSeen:
          results[i] = URLSIEVE_SEEN;
          break;
        case urlsieve::Verdict::kInvalid:
          results[i] = URLSIEVE_INVALID;
          break;
      }
    }
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_contains(const urlsieve_filter* filter, const char* url, size_t size,
                                  int* seen, urlsieve_error* error) {
  if (filter == nullptr || (url == nullptr && size != 0) || seen == nullptr) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_contains: NULL argument");
  }
  return Guard(error, [&]() -> urlsieve_status {
    auto r = filter->filter->Contains(std::string_view(url, size));
    if (!r.ok()) return Report(error, r.status());
    *seen = *r ? 1 : 0;
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_forget(urlsieve_filter* filter, const char* url, size_t size,
                                int* forgotten, urlsieve_error* error) {
  if (filter == nullptr || (url == nullptr && size != 0) || forgotten == nullptr) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_forget: NULL argument");
  }
  return Guard(error, [&]() -> urlsieve_status {
    auto r = filter->filter->Forget(std::string_view(url, size));
    if (!r.ok()) return Report(error, r.status());
    *forgotten = *r ? 1 : 0;
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_canonicalize(const urlsieve_filter* filter, const char* url, size_t size,
                                      char* buffer, size_t buffer_size, size_t* key_size,
                                      urlsieve_error* error) {
  if (filter == nullptr || (url == nullptr && size != 0) ||
      (buffer == nullptr && buffer_size != 0) || key_size == nullptr) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_canonicalize: NULL argument");
  }
  return Guard(error, [&]() -> urlsieve_status {
    std::string key;
    Status s = filter->filter->canonicalizer().CanonicalizeTo(std::string_view(url, size), &key);
    if (!s.ok()) return Report(error, s);
    *key_size = key.size();
    if (buffer_size <= key.size()) {
      return Fail(error, URLSIEVE_BUFFER_TOO_SMALL, "urlsieve_canonicalize: buffer too small");
    }
    std::memcpy(buffer, key.data(), key.size());
    buffer[key.size()] = '\0';
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_get_stats(const urlsieve_filter* filter, urlsieve_stats* stats,
                                   urlsieve_error* error) {
  if (filter == nullptr || stats == nullptr) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_get_stats: NULL argument");
  }
  if (stats->struct_size < offsetof(urlsieve_stats, capacity)) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT,
                "urlsieve_get_stats: set stats->struct_size = sizeof(urlsieve_stats)");
  }
  return Guard(error, [&]() -> urlsieve_status {
    urlsieve::SeenStats s = filter->filter->Stats();
    urlsieve_stats c;
    std::memset(&c, 0, sizeof(c));
    c.capacity = s.capacity;
    c.fp_rate = s.fp_rate;
    c.exact = s.exact ? 1 : 0;
    c.bloom_inserted = s.bloom_inserted;
    c.bloom_capacity = s.bloom_capacity;
    c.bloom_layers = s.bloom_layers;
    c.bloom_bytes = s.bloom_bytes;
    c.bloom_fill_ratio = s.bloom_fill_ratio;
    c.bloom_expected_fp_rate = s.bloom_expected_fp_rate;
    c.stored_keys = s.stored_keys;
    c.maybe_lookups = s.maybe_lookups;
    c.false_positives = s.false_positives;
    c.revisit_after_seconds = s.revisit_after_s;
    c.generations = s.generations;
    c.live_generations = s.live_generations;
    size_t n = std::min(stats->struct_size, sizeof(c));
    c.struct_size = stats->struct_size;
    std::memcpy(stats, &c, n);
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_save(urlsieve_filter* filter, urlsieve_error* error) {
  if (filter == nullptr)
    return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_save: NULL filter");
  return Guard(error, [&]() -> urlsieve_status { return Report(error, filter->filter->Save()); });
}

}  // extern "C"

// The content-seen test (docs/features/content-seen.md, "For embedders").
extern "C" {

uint64_t urlsieve_simhash(const char* text, size_t size, int shingle_words) {
  if (text == nullptr) return 0;
  try {
    urlsieve::SimHashOptions o;
    o.shingle_words = shingle_words;
    return urlsieve::SimHash(std::string_view(text, size), o);
  } catch (...) {
    return 0;  // only a word longer than 64 bytes allocates: out of memory
  }
}

int urlsieve_hamming_distance(uint64_t a, uint64_t b) { return urlsieve::HammingDistance(a, b); }

uint64_t urlsieve_payload_digest(const void* bytes, size_t size) {
  if (bytes == nullptr) size = 0;
  return urlsieve::PayloadDigest(
      std::string_view(bytes == nullptr ? "" : static_cast<const char*>(bytes), size));
}

int urlsieve_warc_payload_digest(const char* warc_digest, size_t size, uint64_t* digest) {
  if (warc_digest == nullptr || digest == nullptr) return 0;
  std::optional<uint64_t> d =
      urlsieve::DigestFromWarcPayloadDigest(std::string_view(warc_digest, size));
  if (!d.has_value()) return 0;
  *digest = *d;
  return 1;
}

void urlsieve_content_options_init(urlsieve_content_options* options) {
  if (options == nullptr) return;
  urlsieve::ContentSeenFilterOptions d;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->max_distance = d.max_distance;
  options->near = d.near ? 1 : 0;
  options->redis_url = nullptr;
  options->redis_name = nullptr;
}

void urlsieve_content_verdict_init(urlsieve_content_verdict* verdict) {
  if (verdict == nullptr) return;
  std::memset(verdict, 0, sizeof(*verdict));
  verdict->struct_size = sizeof(*verdict);
  verdict->first_id = nullptr;
  verdict->first_data = nullptr;
}

urlsieve_status urlsieve_content_set_open(const urlsieve_content_options* options,
                                          urlsieve_content_set** set, urlsieve_error* error) {
  if (set != nullptr) *set = nullptr;
  if (options == nullptr || set == nullptr) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT,
                "urlsieve_content_set_open: options and set must not be NULL");
  }
  if (options->struct_size < offsetof(urlsieve_content_options, redis_url)) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT,
                "urlsieve_content_set_open: options->struct_size not set (call "
                "urlsieve_content_options_init)");
  }
  return Guard(error, [&]() -> urlsieve_status {
    urlsieve_content_options o = ReadContentOptions(options);
    urlsieve::ContentSeenFilterOptions co;
    co.max_distance = o.max_distance;
    co.near = o.near != 0;
    if (o.redis_url != nullptr) co.redis_url = o.redis_url;
    if (o.redis_name != nullptr) co.redis_name = o.redis_name;
    auto opened = urlsieve::ContentSeenFilter::Open(co);
    if (!opened.ok()) return Report(error, opened.status());
    auto handle = std::make_unique<urlsieve_content_set>();
    handle->set = std::move(opened).value();
    *set = handle.release();
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_content_set_close(urlsieve_content_set* set, urlsieve_error* error) {
  if (set == nullptr) return URLSIEVE_OK;
  return Guard(error, [&]() -> urlsieve_status {
    delete set;
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_content_test(urlsieve_content_set* set, uint64_t digest, uint64_t simhash,
                                      int has_simhash, const char* id, size_t id_size,
                                      const void* data, size_t data_size,
                                      urlsieve_content_verdict* verdict, urlsieve_error* error) {
  if (set == nullptr || (id == nullptr && id_size != 0) || (data == nullptr && data_size != 0) ||
      verdict == nullptr) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_content_test: NULL argument");
  }
  if (verdict->struct_size < kContentVerdictMinSize) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT,
                "urlsieve_content_test: set verdict->struct_size (urlsieve_content_verdict_init)");
  }
  if ((verdict->first_id == nullptr && verdict->first_id_capacity != 0) ||
      (verdict->first_data == nullptr && verdict->first_data_capacity != 0)) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT,
                "urlsieve_content_test: a verdict buffer is NULL but its capacity is not 0");
  }
  return Guard(error, [&]() -> urlsieve_status {
    urlsieve::ContentCopy page;
    page.id.assign(id == nullptr ? "" : id, id_size);
    if (data_size != 0) page.data.assign(static_cast<const char*>(data), data_size);
    auto r = set->set->Test(Fingerprint(digest, simhash, has_simhash), page);
    if (!r.ok()) return Report(error, r.status());
    switch (r->kind) {
      case urlsieve::ContentVerdict::Kind::kFirst:
        verdict->kind = URLSIEVE_CONTENT_FIRST;
        break;
      case urlsieve::ContentVerdict::Kind::kExact:
        verdict->kind = URLSIEVE_CONTENT_EXACT;
        break;
      case urlsieve::ContentVerdict::Kind::kNear:
        verdict->kind = URLSIEVE_CONTENT_NEAR;
        break;
    }
    verdict->refetch = r->refetch ? 1 : 0;
    verdict->distance = r->kind == urlsieve::ContentVerdict::Kind::kNear ? r->distance : 0;
    const bool named = r->kind != urlsieve::ContentVerdict::Kind::kFirst;
    WriteCopy(named ? std::string_view(r->first.id) : std::string_view(), verdict->first_id,
              verdict->first_id_capacity, &verdict->first_id_size);
    WriteCopy(named ? std::string_view(r->first.data) : std::string_view(), verdict->first_data,
              verdict->first_data_capacity, &verdict->first_data_size);
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_content_forget(urlsieve_content_set* set, uint64_t digest,
                                        uint64_t simhash, int has_simhash, const char* id,
                                        size_t id_size, int* forgotten, urlsieve_error* error) {
  if (set == nullptr || (id == nullptr && id_size != 0) || forgotten == nullptr) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_content_forget: NULL argument");
  }
  return Guard(error, [&]() -> urlsieve_status {
    auto r = set->set->Forget(Fingerprint(digest, simhash, has_simhash),
                              std::string_view(id == nullptr ? "" : id, id_size));
    if (!r.ok()) return Report(error, r.status());
    *forgotten = *r ? 1 : 0;
    return URLSIEVE_OK;
  });
}

urlsieve_status urlsieve_content_set_size(const urlsieve_content_set* set, uint64_t* pages,
                                          urlsieve_error* error) {
  if (set == nullptr || pages == nullptr) {
    return Fail(error, URLSIEVE_INVALID_ARGUMENT, "urlsieve_content_set_size: NULL argument");
  }
  return Guard(error, [&]() -> urlsieve_status {
    *pages = set->set->size();
    return URLSIEVE_OK;
  });
}

}  // extern "C"
