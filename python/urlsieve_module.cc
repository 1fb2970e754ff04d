// urlsieve._core: SeenFilter, and the content-seen test (simhash, payload_digest, ContentSeenSet,
// NearDuplicateIndex), for Python (pybind11). The package's __init__.py re-exports it.
//
// Batches cross once: insert_many collects the URLs while it holds the GIL, then canonicalizes and
// inserts them with the GIL released. Thread-safety: a SeenFilter may be shared by Python threads;
// close() waits for no one, but every call holds its own reference to the native filter, so closing
// while another thread inserts is safe (that insert finishes on the still-open filter).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/duration.h"
#include "dedup/content/content_seen_set.h"
#include "dedup/content/near_duplicate_index.h"
#include "dedup/content/simhash.h"
#include "dedup/content_seen_filter.h"
#include "dedup/seen_filter.h"
#include "redis/redis_waits.h"

namespace py = pybind11;

namespace urlsieve {
namespace {

// Raised for every failure that is not the caller's bad input (ValueError) or an OS error.
PyObject* g_error = nullptr;
// A subclass of it: the Redis server is unreachable, restarting or timing out (kUnavailable); a
// retry may succeed.
PyObject* g_unavailable = nullptr;

[[noreturn]] void Throw(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      throw py::value_error(status.message());
    case StatusCode::kIoError:
      PyErr_SetString(PyExc_OSError, status.ToString().c_str());
      throw py::error_already_set();
    case StatusCode::kUnavailable:
      PyErr_SetString(g_unavailable, status.ToString().c_str());
      throw py::error_already_set();
    default:
      PyErr_SetString(g_error, status.ToString().c_str());
      throw py::error_already_set();
  }
}

// The UTF-8 bytes of a str, or the bytes of a bytes/bytearray; TypeError otherwise. The view is
// valid while `obj` is alive and the GIL is held.
std::string_view UrlBytes(py::handle obj) {
  if (PyUnicode_Check(obj.ptr())) {
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(obj.ptr(), &n);
    if (p == nullptr) throw py::error_already_set();  // e.g. lone surrogates
    return {p, static_cast<size_t>(n)};
  }
  if (PyBytes_Check(obj.ptr())) {
    return {PyBytes_AS_STRING(obj.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(obj.ptr()))};
  }
  if (PyByteArray_Check(obj.ptr())) {
    return {PyByteArray_AS_STRING(obj.ptr()), static_cast<size_t>(PyByteArray_GET_SIZE(obj.ptr()))};
  }
  throw py::type_error("urlsieve: a URL must be str or bytes, not " +
                       std::string(py::str(py::type::of(obj).attr("__name__"))));
}

// revisit_after= (docs/features/generational.md, "The generational seen set"): None (never), whole
// seconds (an int, or a float with no fraction), a datetime.timedelta, or a duration string ("7d",
// "12h"; base/duration.h). ValueError for a negative or fractional number or a bad string.
std::chrono::seconds RevisitAfter(const py::object& value) {
  if (value.is_none()) return std::chrono::seconds(0);
  if (py::isinstance<py::str>(value)) {
    Result<std::chrono::seconds> parsed = ParseDuration(py::cast<std::string>(value));
    if (!parsed.ok()) Throw(parsed.status());
    return *parsed;
  }
  double seconds = 0;
  if (py::hasattr(value, "total_seconds")) {
    seconds = py::cast<double>(value.attr("total_seconds")());
  } else if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) {
    if (py::isinstance<py::bool_>(value)) throw py::type_error("revisit_after must not be a bool");
    seconds = py::cast<double>(value);
  } else {
    throw py::type_error(
        "revisit_after must be seconds (int), a timedelta or a duration such as "
        "\"7d\", not " +
        std::string(py::str(py::type::of(value).attr("__name__"))));
  }
  if (!(seconds >= 0) || seconds != static_cast<double>(static_cast<int64_t>(seconds))) {
    throw py::value_error("revisit_after must be a non-negative whole number of seconds");
  }
  return std::chrono::seconds(static_cast<int64_t>(seconds));
}

class PySeenFilter {
 public:
  // The opt-in canonicalization rules come as keyword arguments named as in kCanonicalizeRules
  // (urlsieve.CANONICALIZE_RULES), with tracking_exceptions (a list of "HOST:NAME" strings) for
  // strip_tracking_params; anything else there is a TypeError, as an unknown keyword is.
  // redis / name (redis_name here): a seen set shared in Redis (SeenFilterOptions::redis_url,
  // redis_name).
  PySeenFilter(uint64_t capacity, double fp_rate, std::optional<std::string> state_dir, bool exact,
               size_t max_url_length, bool rebuild_bloom, std::optional<std::string> redis,
               std::optional<std::string> redis_name, uint64_t redis_front_cache_keys,
               const py::object& revisit_after, uint32_t generations, const py::kwargs& rules) {
    SeenFilterOptions o;
    o.revisit_after = RevisitAfter(revisit_after);
    o.generations = generations;
    o.capacity = capacity;
    o.fp_rate = fp_rate;
    o.state_dir = state_dir.value_or("");
    o.exact = exact;
    o.redis_url = redis.value_or("");
    o.redis_name = redis_name.value_or("");
    o.redis_front_cache_keys = redis_front_cache_keys;
    for (auto [key, value] : rules) {
      const std::string name = py::str(key);
      // Keyword-only flags, taken from the kwargs (SeenFilterOptions): deletable, and
      // accept_loss (redis_accept_loss: repair a shared set that lost data at open).
      if (name == "deletable" || name == "accept_loss") {
        try {
          (name == "deletable" ? o.deletable : o.redis_accept_loss) = py::cast<bool>(value);
        } catch (const py::cast_error&) {
          throw py::type_error("SeenFilter(): " + name + " must be a bool, not " +
                               std::string(py::str(py::type::of(value).attr("__name__"))));
        }
        continue;
      }
      // tracking_exceptions: the "HOST:NAME" strings of strip_tracking_params (SeenFilter::Open
      // says which is malformed, as ValueError).
      if (name == "tracking_exceptions") {
        if (value.is_none()) continue;
        if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value)) {
          throw py::type_error(
              "SeenFilter(): tracking_exceptions must be a list of \"HOST:NAME\" strings, not "
              "one string");
        }
        try {
          o.canonicalize.tracking_exceptions = py::cast<std::vector<std::string>>(value);
        } catch (const py::cast_error&) {
          throw py::type_error(
              "SeenFilter(): tracking_exceptions must be a list of \"HOST:NAME\" strings, not " +
              std::string(py::str(py::type::of(value).attr("__name__"))));
        }
        continue;
      }
      auto rule = std::find_if(std::begin(kCanonicalizeRules), std::end(kCanonicalizeRules),
                               [&](const CanonicalizeRule& r) { return r.name == name; });
      if (rule == std::end(kCanonicalizeRules)) {
        throw py::type_error("SeenFilter() got an unexpected keyword argument '" + name + "'");
      }
      try {
        o.canonicalize.*rule->member = py::cast<bool>(value);  // as a bool parameter converts
      } catch (const py::cast_error&) {
        throw py::type_error("SeenFilter(): " + name + " must be a bool, not " +
                             std::string(py::str(py::type::of(value).attr("__name__"))));
      }
    }
    o.canonicalize.max_length = max_url_length;
    o.rebuild_bloom = rebuild_bloom;
    std::optional<Result<std::unique_ptr<SeenFilter>>> opened;
    {
      py::gil_scoped_release release;
      opened.emplace(SeenFilter::Open(o));
    }
    if (!opened->ok()) Throw(opened->status());
    filter_ = std::shared_ptr<SeenFilter>(std::move(*opened).value());
  }

  bool InsertIfNew(py::handle url) {
    std::string_view v = UrlBytes(url);
    std::shared_ptr<SeenFilter> f = Get();
    // A single short URL is cheaper to insert than to release and retake the GIL for.
    Result<bool> r = f->InsertIfNew(v);
    if (!r.ok()) Throw(r.status());
    return *r;
  }

  // One bool per URL, or None for an invalid URL when invalid="none"; with invalid="raise" (the
  // default) an invalid URL raises ValueError naming it and its index, and nothing of the batch is
  // inserted (a caller must never lose the verdicts of URLs that were inserted before the error).
  //
  // Memory is what bounds a big batch, so the URLs are not copied: the batch holds a reference to
  // each (str and bytes are immutable, so their bytes stay put while the GIL is released) and
  // inserts in chunks. The price of "nothing inserted" is a validation pass that canonicalizes
  // each URL once more.
  py::list InsertMany(py::iterable urls, const std::string& invalid) {
    bool raise = invalid == "raise";
    if (!raise && invalid != "none") throw py::value_error("invalid must be 'raise' or 'none'");
    std::vector<py::object> refs;
    std::vector<std::string_view> views;
    for (py::handle url : urls) {
      py::object ref = py::reinterpret_borrow<py::object>(url);
      if (PyByteArray_Check(url.ptr())) ref = py::bytes(std::string(UrlBytes(url)));  // mutable
      views.push_back(UrlBytes(ref));
      refs.push_back(std::move(ref));
    }
    std::shared_ptr<SeenFilter> f = Get();
    const size_t n = views.size();
    std::vector<uint8_t> verdicts(n);  // Verdict per URL
    size_t first_invalid = n;
    Status first_error;
    Status failed;
    {
      py::gil_scoped_release release;
      if (raise) {
        const UrlCanonicalizer& canon = f->canonicalizer();
        std::string key;
        for (size_t i = 0; i < n && first_invalid == n; ++i) {
          Status s = canon.CanonicalizeTo(views[i], &key);
          if (!s.ok()) {
            first_invalid = i;
            first_error = std::move(s);
          }
        }
      }
      constexpr size_t kChunk = 16384;
      std::vector<SeenResult> results;
      for (size_t begin = 0; first_invalid == n && begin < n && failed.ok(); begin += kChunk) {
        size_t count = std::min(kChunk, n - begin);
        failed = f->InsertIfNewBatch(std::span(views).subspan(begin, count), &results);
        for (size_t i = 0; i < count && failed.ok(); ++i) {
          verdicts[begin + i] = static_cast<uint8_t>(results[i].verdict);
        }
      }
    }
    if (first_invalid < n) {
      std::string url(views[first_invalid]);
      throw py::value_error("invalid URL at index " + std::to_string(first_invalid) + " (" +
                            py::repr(py::bytes(url)).cast<std::string>() +
                            "): " + first_error.message() + "; nothing was inserted");
    }
    if (!failed.ok()) Throw(failed);
    py::list out(n);
    for (size_t i = 0; i < n; ++i) {
      switch (static_cast<Verdict>(verdicts[i])) {
        case Verdict::kNew:
          out[i] = py::bool_(true);
          break;
        case Verdict::kSeen:
          out[i] = py::bool_(false);
          break;
        case Verdict::kInvalid:
          out[i] = py::none();
          break;
      }
    }
    return out;
  }

  // For keys that are not URLs (the Scrapy filter's request keys): no canonicalization. Such keys
  // must not start with "http://" or "https://" unless they are canonical URL keys.
  bool InsertKeyIfNew(py::handle key) {
    std::string_view v = UrlBytes(key);
    std::shared_ptr<SeenFilter> f = Get();
    std::vector<uint8_t> is_new;
    Status s = f->InsertKeysIfNew(std::span<const std::string_view>(&v, 1), &is_new);
    if (!s.ok()) Throw(s);
    return is_new[0] != 0;
  }

  bool Contains(py::handle url) {
    std::string_view v = UrlBytes(url);
    Result<bool> r = Get()->Contains(v);
    if (!r.ok()) Throw(r.status());
    return *r;
  }

  // True when the URL was in the filter and is forgotten (its next insert is new); Error
  // (UNSUPPORTED) for a plain Bloom filter, ValueError for an invalid URL.
  bool Forget(py::handle url) {
    std::string_view v = UrlBytes(url);
    std::shared_ptr<SeenFilter> f = Get();
    Result<bool> r = f->Forget(v);
    if (!r.ok()) Throw(r.status());
    return *r;
  }

  std::string Canonicalize(py::handle url) {
    std::string_view v = UrlBytes(url);
    std::string key;
    Status s = Get()->canonicalizer().CanonicalizeTo(v, &key);
    if (!s.ok()) Throw(s);
    return key;
  }

  py::dict Stats() {
    SeenStats s = Get()->Stats();
    py::dict d;
    d["capacity"] = s.capacity;
    d["fp_rate"] = s.fp_rate;
    d["exact"] = s.exact;
    d["generation"] = s.generation;
    d["bloom_inserted"] = s.bloom_inserted;
    d["bloom_capacity"] = s.bloom_capacity;
    d["bloom_layers"] = s.bloom_layers;
    d["bloom_bytes"] = s.bloom_bytes;
    d["bloom_fill_ratio"] = s.bloom_fill_ratio;
    d["bloom_expected_fp_rate"] = s.bloom_expected_fp_rate;
    d["stored_keys"] = s.stored_keys;
    d["maybe_lookups"] = s.maybe_lookups;
    d["false_positives"] = s.false_positives;
    d["revisit_after"] = s.revisit_after_s;  // seconds; 0: URLs are never new again
    d["generations"] = s.generations;
    d["live_generations"] = s.live_generations;
    d["bloom_bits_per_key"] =
        s.bloom_inserted ? 8.0 * static_cast<double>(s.bloom_bytes) / s.bloom_inserted : 0.0;
    return d;
  }

  std::vector<std::string> Notices() {
    std::vector<std::string> texts;
    for (const SeenNotice& n : Get()->notices()) texts.push_back(n.text);
    return texts;
  }

  // The Redis set's name, or None for a local filter.
  std::optional<std::string> RedisName() {
    const std::string& name = Get()->options().redis_name;
    if (name.empty()) return std::nullopt;
    return name;
  }

  std::optional<std::string> StateDir() {
    const std::string& dir = Get()->options().state_dir;
    if (dir.empty()) return std::nullopt;
    return dir;
  }

  void Save() {
    std::shared_ptr<SeenFilter> f = Get();
    Status s;
    {
      py::gil_scoped_release release;
      s = f->Save();
    }
    if (!s.ok()) Throw(s);
  }

  // Saves (a persistent filter) and releases it; a second close is a no-op.
  void Close() {
    std::shared_ptr<SeenFilter> f;
    {
      std::lock_guard<std::mutex> lock(mu_);
      f = std::move(filter_);
    }
    if (f == nullptr) return;
    Status s;
    {
      py::gil_scoped_release release;
      s = f->SaveForClose();
      f.reset();
    }
    if (!s.ok()) Throw(s);
  }

  bool closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return filter_ == nullptr;
  }

 private:
  std::shared_ptr<SeenFilter> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    if (filter_ == nullptr) throw py::value_error("operation on a closed urlsieve.SeenFilter");
    return filter_;
  }

  std::mutex mu_;  // guards filter_ (Python threads may call close() while others insert)
  std::shared_ptr<SeenFilter> filter_;
};

// ---- The content-seen test (docs/features/content-seen.md, "For embedders") ----

// Texts and bodies above this size are fingerprinted with the GIL released; below it, releasing
// and retaking the GIL costs more than the hash.
constexpr size_t kReleaseGilBytes = 16 * 1024;

// The bytes of a str (UTF-8), bytes, bytearray or memoryview-free buffer, kept alive (and, for a
// mutable bytearray, copied) by `keep` so that they stay put while the GIL is released.
std::string_view Bytes(py::handle obj, const char* what, py::object* keep) {
  if (PyByteArray_Check(obj.ptr())) {
    *keep = py::bytes(PyByteArray_AS_STRING(obj.ptr()), PyByteArray_GET_SIZE(obj.ptr()));
  } else if (PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr())) {
    *keep = py::reinterpret_borrow<py::object>(obj);
  } else {
    throw py::type_error(std::string("urlsieve: ") + what + " must be str or bytes, not " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  if (PyUnicode_Check(keep->ptr())) {
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(keep->ptr(), &n);
    if (p == nullptr) throw py::error_already_set();
    return {p, static_cast<size_t>(n)};
  }
  return {PyBytes_AS_STRING(keep->ptr()), static_cast<size_t>(PyBytes_GET_SIZE(keep->ptr()))};
}

// A Python int as 64 unsigned bits: ValueError outside 0 .. 2^64 - 1, TypeError for a non-int
// (a bool is an int, but never a fingerprint).
uint64_t U64(py::handle value, const char* what) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) {
    throw py::type_error(std::string("urlsieve: ") + what + " must be an int, not " +
                         std::string(py::str(py::type::of(value).attr("__name__"))));
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(value.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error(std::string("urlsieve: ") + what + " must be in 0 .. 2**64 - 1");
  }
  return static_cast<uint64_t>(v);
}

int ShingleWords(int shingle_words) {
  if (shingle_words < 1 || shingle_words > 16) {
    throw py::value_error("urlsieve: shingle_words must be 1 .. 16, not " +
                          std::to_string(shingle_words));
  }
  return shingle_words;
}

uint64_t PySimHash(py::handle text, int shingle_words) {
  py::object keep;
  std::string_view v = Bytes(text, "text", &keep);
  SimHashOptions o;
  o.shingle_words = ShingleWords(shingle_words);
  if (v.size() < kReleaseGilBytes) return SimHash(v, o);
  py::gil_scoped_release release;
  return SimHash(v, o);
}

uint64_t PyPayloadDigest(py::handle body) {
  py::object keep;
  std::string_view v = Bytes(body, "body", &keep);
  if (v.size() < kReleaseGilBytes) return PayloadDigest(v);
  py::gil_scoped_release release;
  return PayloadDigest(v);
}

// What ContentSeenSet.test answers (ContentVerdict in C++), with the page's own fingerprints so
// that a caller can forget it later without hashing it again.
struct PyContentVerdict {
  std::string kind;  // "first", "exact", "near"
  bool refetch = false;
  std::optional<std::string> first_id;   // exact, near: the first copy's id
  std::optional<py::object> first_data;  // ... and its data (str; bytes when not UTF-8)
  int distance = 0;                      // near: the simhashes' Hamming distance
  uint64_t digest = 0;                   // this page's digest
  std::optional<uint64_t> simhash;       // this page's simhash (None without a text)

  std::string Repr() const {
    std::string r = "ContentVerdict(kind='" + kind + "'";
    if (refetch) r += ", refetch=True";
    if (first_id) r += ", first_id=" + py::repr(py::str(*first_id)).cast<std::string>();
    if (kind == "near") r += ", distance=" + std::to_string(distance);
    return r + ")";
  }
};

py::object DataObject(const std::string& data) {
  PyObject* s = PyUnicode_DecodeUTF8(data.data(), static_cast<Py_ssize_t>(data.size()), "strict");
  if (s != nullptr) return py::reinterpret_steal<py::object>(s);
  PyErr_Clear();  // stored by another caller (C, a shared Redis set) as bytes that are not UTF-8
  return py::bytes(data);
}

class PyContentSeenSet {
 public:
  PyContentSeenSet(int max_distance, bool near, int shingle_words, std::optional<std::string> redis,
                   std::optional<std::string> name) {
    ContentSeenFilterOptions o;
    o.max_distance = max_distance;
    o.near = near;
    o.redis_url = redis.value_or("");
    o.redis_name = name.value_or("");
    shingle_words_ = ShingleWords(shingle_words);
    std::optional<Result<std::unique_ptr<ContentSeenFilter>>> opened;
    {
      py::gil_scoped_release release;
      opened.emplace(ContentSeenFilter::Open(o));
    }
    if (!opened->ok()) Throw(opened->status());
    set_ = std::shared_ptr<ContentSeenFilter>(std::move(*opened).value());
  }

  // body: the bytes (str is taken as its UTF-8); text: the visible text, or None (no near test).
  PyContentVerdict Test(py::handle body, py::handle text, py::handle id, py::handle data) {
    py::object keep_body, keep_text;
    std::string_view b = Bytes(body, "body", &keep_body);
    std::optional<std::string_view> t;
    if (!text.is_none()) t = Bytes(text, "text", &keep_text);
    ContentFingerprint f;
    std::shared_ptr<ContentSeenFilter> set = Get();
    ContentCopy page = Copy(id, data);
    SimHashOptions so;
    so.shingle_words = shingle_words_;
    std::optional<Result<ContentVerdict>> r;
    {
      py::gil_scoped_release release;
      f.digest = PayloadDigest(b);
      if (t && set->options().near) f.simhash = SimHash(*t, so);
      r.emplace(set->Test(f, page));
    }
    return Verdict(*r, f);
  }

  // The same with fingerprints computed elsewhere (urlsieve.payload_digest, the first 8 bytes of
  // a SHA-1 as urlsieve.warc_payload_digest gives them, urlsieve.simhash).
  PyContentVerdict TestFingerprint(py::handle digest, py::handle simhash, py::handle id,
                                   py::handle data) {
    ContentFingerprint f = Fingerprint(digest, simhash);
    std::shared_ptr<ContentSeenFilter> set = Get();
    ContentCopy page = Copy(id, data);
    std::optional<Result<ContentVerdict>> r;
    {
      py::gil_scoped_release release;
      r.emplace(set->Test(f, page));
    }
    return Verdict(*r, f);
  }

  bool Forget(py::handle body, py::handle text, py::handle id) {
    py::object keep_body, keep_text;
    std::string_view b = Bytes(body, "body", &keep_body);
    std::optional<std::string_view> t;
    if (!text.is_none()) t = Bytes(text, "text", &keep_text);
    std::string page_id = Id(id);
    std::shared_ptr<ContentSeenFilter> set = Get();
    SimHashOptions so;
    so.shingle_words = shingle_words_;
    std::optional<Result<bool>> r;
    {
      py::gil_scoped_release release;
      ContentFingerprint f;
      f.digest = PayloadDigest(b);
      if (t && set->options().near) f.simhash = SimHash(*t, so);
      r.emplace(set->Forget(f, page_id));
    }
    if (!r->ok()) Throw(r->status());
    return **r;
  }

  bool ForgetFingerprint(py::handle digest, py::handle simhash, py::handle id) {
    ContentFingerprint f = Fingerprint(digest, simhash);
    std::string page_id = Id(id);
    std::shared_ptr<ContentSeenFilter> set = Get();
    std::optional<Result<bool>> r;
    {
      py::gil_scoped_release release;
      r.emplace(set->Forget(f, page_id));
    }
    if (!r->ok()) Throw(r->status());
    return **r;
  }

  uint64_t Size() { return Get()->size(); }
  int max_distance() { return Get()->options().max_distance; }
  bool near() { return Get()->options().near; }
  int shingle_words() const { return shingle_words_; }

  std::optional<std::string> RedisName() {
    const std::string& name = Get()->options().redis_name;
    if (name.empty()) return std::nullopt;
    return name;
  }

  void Close() {
    std::shared_ptr<ContentSeenFilter> s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      s = std::move(set_);
    }
    if (s == nullptr) return;
    py::gil_scoped_release release;  // a Redis set closes its connections
    s.reset();
  }

  bool closed() {
    std::lock_guard<std::mutex> lock(mu_);
    return set_ == nullptr;
  }

 private:
  std::shared_ptr<ContentSeenFilter> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    if (set_ == nullptr) throw py::value_error("operation on a closed urlsieve.ContentSeenSet");
    return set_;
  }

  static std::string Id(py::handle id) {
    py::object keep;
    return std::string(Bytes(id, "id", &keep));
  }

  static ContentCopy Copy(py::handle id, py::handle data) {
    ContentCopy page;
    page.id = Id(id);
    if (!data.is_none()) {
      py::object keep;
      page.data = std::string(Bytes(data, "data", &keep));
    }
    return page;
  }

  static ContentFingerprint Fingerprint(py::handle digest, py::handle simhash) {
    ContentFingerprint f;
    f.digest = U64(digest, "digest");
    if (!simhash.is_none()) f.simhash = U64(simhash, "simhash");
    return f;
  }

  static PyContentVerdict Verdict(const Result<ContentVerdict>& r, const ContentFingerprint& f) {
    if (!r.ok()) Throw(r.status());
    PyContentVerdict v;
    v.refetch = r->refetch;
    v.digest = f.digest;
    v.simhash = f.simhash;
    switch (r->kind) {
      case ContentVerdict::Kind::kFirst:
        v.kind = "first";
        return v;
      case ContentVerdict::Kind::kExact:
        v.kind = "exact";
        break;
      case ContentVerdict::Kind::kNear:
        v.kind = "near";
        v.distance = r->distance;
        break;
    }
    v.first_id = r->first.id;
    v.first_data = DataObject(r->first.data);
    return v;
  }

  std::mutex mu_;  // guards set_ (Python threads may call close() while others test)
  std::shared_ptr<ContentSeenFilter> set_;
  int shingle_words_ = 3;
};

// NearDuplicateIndex for Python. The C++ index is not thread-safe; every method here runs with
// the GIL held (each is a few bucket reads), which serialises them.
class PyNearDuplicateIndex {
 public:
  explicit PyNearDuplicateIndex(int max_distance) : index_(Check(max_distance)) {}

  py::object Find(py::handle fingerprint) const {
    return Match(index_.Find(U64(fingerprint, "fingerprint")));
  }
  void Insert(py::handle fingerprint, py::handle value) {
    index_.Insert(U64(fingerprint, "fingerprint"), Value(value));
  }
  py::object FindOrInsert(py::handle fingerprint, py::handle value) {
    return Match(index_.FindOrInsert(U64(fingerprint, "fingerprint"), Value(value)));
  }
  bool Erase(py::handle fingerprint, py::handle value) {
    return index_.Erase(U64(fingerprint, "fingerprint"), Value(value));
  }
  uint64_t Size() const { return index_.size(); }
  uint64_t MemoryBytes() const { return index_.memory_bytes(); }
  int MaxDistance() const { return index_.max_distance(); }

 private:
  static int Check(int max_distance) {
    if (max_distance < 0 || max_distance > 7) {
      throw py::value_error("urlsieve: max_distance must be 0 .. 7, not " +
                            std::to_string(max_distance));
    }
    return max_distance;
  }
  static uint64_t Value(py::handle value) {
    uint64_t v = U64(value, "value");
    if (v > NearDuplicateIndex::kMaxValue) {
      throw py::value_error("urlsieve: a NearDuplicateIndex value must be in 0 .. 2**48 - 1");
    }
    return v;
  }
  // (fingerprint, value, distance) or None.
  static py::object Match(const std::optional<NearMatch>& m) {
    if (!m) return py::none();
    return py::make_tuple(m->fingerprint, m->value, m->distance);
  }

  NearDuplicateIndex index_;
};

}  // namespace
}  // namespace urlsieve

PYBIND11_MODULE(_core, m) {
  using urlsieve::PySeenFilter;
  m.doc() = "urlsieve's URL-seen test (canonicalizer + Bloom filter + optional SQLite exact store)";
  m.attr("__version__") = URLSIEVE_VERSION;  // the CMake project's version (python/CMakeLists.txt)
  static py::exception<std::runtime_error> error(m, "Error", PyExc_RuntimeError);
  urlsieve::g_error = error.ptr();
  urlsieve::g_unavailable = PyErr_NewExceptionWithDoc(
      "urlsieve._core.UnavailableError",
      "The Redis server of a shared seen set is unreachable, restarting or timing out; the call "
      "had no effect that was reported, and a retry may succeed.",
      urlsieve::g_error, nullptr);
  if (urlsieve::g_unavailable == nullptr) throw py::error_already_set();
  // A Redis server that does not answer within the timeout, and its return: a RuntimeWarning
  // (redis/redis_waits.h), from whichever thread waited.
  urlsieve::SetRedisWaitSink([](const std::string& line) {
    if (!Py_IsInitialized() || _Py_IsFinalizing()) return;
    py::gil_scoped_acquire gil;
    if (PyErr_WarnEx(PyExc_RuntimeWarning, ("urlsieve: " + line).c_str(), 1) != 0) PyErr_Clear();
  });
  m.attr("UnavailableError") = py::handle(urlsieve::g_unavailable);
  // The names of the opt-in canonicalization rules, SeenFilter's keyword arguments (all False by
  // default), in the order of kCanonicalizeRules.
  py::tuple rules(std::size(urlsieve::kCanonicalizeRules));
  for (size_t i = 0; i < std::size(urlsieve::kCanonicalizeRules); ++i) {
    rules[i] = py::str(urlsieve::kCanonicalizeRules[i].name.data(),
                       urlsieve::kCanonicalizeRules[i].name.size());
  }
  m.attr("CANONICALIZE_RULES") = rules;
  m.attr("DEFAULT_REDIS_FRONT_CACHE_KEYS") = urlsieve::kDefaultRedisFrontCacheKeys;

  py::class_<PySeenFilter>(m, "SeenFilter")
      .def(py::init<uint64_t, double, std::optional<std::string>, bool, size_t, bool,
                    std::optional<std::string>, std::optional<std::string>, uint64_t,
                    const py::object&, uint32_t, const py::kwargs&>(),
           py::kw_only(), py::arg("capacity") = 10'000'000, py::arg("fp_rate") = 1e-3,
           py::arg("state_dir") = py::none(), py::arg("exact") = false,
           py::arg("max_url_length") = 2083, py::arg("rebuild_bloom") = false,
           py::arg("redis") = py::none(), py::arg("name") = py::none(),
           py::arg("redis_front_cache_keys") = urlsieve::SeenFilterOptions().redis_front_cache_keys,
           py::arg("revisit_after") = py::none(),
           py::arg("generations") = urlsieve::kDefaultGenerations)
      .def("insert_if_new", &PySeenFilter::InsertIfNew, py::arg("url"))
      .def("insert_many", &PySeenFilter::InsertMany, py::arg("urls"), py::kw_only(),
           py::arg("invalid") = "raise")
      .def("insert_key_if_new", &PySeenFilter::InsertKeyIfNew, py::arg("key"))
      .def("__contains__", &PySeenFilter::Contains, py::arg("url"))
      .def("forget", &PySeenFilter::Forget, py::arg("url"))
      .def("canonicalize", &PySeenFilter::Canonicalize, py::arg("url"))
      .def("stats", &PySeenFilter::Stats)
      .def_property_readonly("notices", &PySeenFilter::Notices)
      .def_property_readonly("state_dir", &PySeenFilter::StateDir)
      .def_property_readonly("redis_name", &PySeenFilter::RedisName)
      .def_property_readonly("closed", &PySeenFilter::closed)
      .def("save", &PySeenFilter::Save)
      .def("close", &PySeenFilter::Close)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PySeenFilter& self, py::args) { self.Close(); });

  // The content-seen test (docs/features/content-seen.md, "For embedders").
  using urlsieve::PyContentSeenSet;
  using urlsieve::PyContentVerdict;
  using urlsieve::PyNearDuplicateIndex;
  m.def("simhash", &urlsieve::PySimHash, py::arg("text"), py::arg("shingle_words") = 3);
  m.def(
      "hamming_distance",
      [](py::handle a, py::handle b) {
        return urlsieve::HammingDistance(urlsieve::U64(a, "a"), urlsieve::U64(b, "b"));
      },
      py::arg("a"), py::arg("b"));
  m.def("payload_digest", &urlsieve::PyPayloadDigest, py::arg("body"));
  m.def(
      "warc_payload_digest",
      [](const std::string& value) { return urlsieve::DigestFromWarcPayloadDigest(value); },
      py::arg("warc_digest"));
  py::class_<PyContentVerdict>(m, "ContentVerdict")
      .def_readonly("kind", &PyContentVerdict::kind)
      .def_readonly("refetch", &PyContentVerdict::refetch)
      .def_readonly("first_id", &PyContentVerdict::first_id)
      .def_readonly("first_data", &PyContentVerdict::first_data)
      .def_readonly("distance", &PyContentVerdict::distance)
      .def_readonly("digest", &PyContentVerdict::digest)
      .def_readonly("simhash", &PyContentVerdict::simhash)
      .def_property_readonly("duplicate",
                             [](const PyContentVerdict& v) { return v.kind != "first"; })
      .def("__repr__", &PyContentVerdict::Repr);
  py::class_<PyContentSeenSet>(m, "ContentSeenSet")
      .def(py::init<int, bool, int, std::optional<std::string>, std::optional<std::string>>(),
           py::arg("max_distance") = 3, py::arg("near") = true, py::kw_only(),
           py::arg("shingle_words") = 3, py::arg("redis") = py::none(),
           py::arg("name") = py::none())
      .def("test", &PyContentSeenSet::Test, py::arg("body"), py::arg("text"), py::arg("id"),
           py::arg("data") = "")
      .def("test_fingerprint", &PyContentSeenSet::TestFingerprint, py::arg("digest"),
           py::arg("simhash"), py::arg("id"), py::arg("data") = "")
      .def("forget", &PyContentSeenSet::Forget, py::arg("body"), py::arg("text"), py::arg("id"))
      .def("forget_fingerprint", &PyContentSeenSet::ForgetFingerprint, py::arg("digest"),
           py::arg("simhash"), py::arg("id"))
      .def("__len__", &PyContentSeenSet::Size)
      .def_property_readonly("max_distance", &PyContentSeenSet::max_distance)
      .def_property_readonly("near", &PyContentSeenSet::near)
      .def_property_readonly("shingle_words", &PyContentSeenSet::shingle_words)
      .def_property_readonly("redis_name", &PyContentSeenSet::RedisName)
      .def_property_readonly("closed", &PyContentSeenSet::closed)
      .def("close", &PyContentSeenSet::Close)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyContentSeenSet& self, py::args) { self.Close(); });
  py::class_<PyNearDuplicateIndex>(m, "NearDuplicateIndex")
      .def(py::init<int>(), py::arg("max_distance") = 3)
      .def("find", &PyNearDuplicateIndex::Find, py::arg("fingerprint"))
      .def("insert", &PyNearDuplicateIndex::Insert, py::arg("fingerprint"), py::arg("value"))
      .def("find_or_insert", &PyNearDuplicateIndex::FindOrInsert, py::arg("fingerprint"),
           py::arg("value"))
      .def("erase", &PyNearDuplicateIndex::Erase, py::arg("fingerprint"), py::arg("value"))
      .def("__len__", &PyNearDuplicateIndex::Size)
      .def_property_readonly("memory_bytes", &PyNearDuplicateIndex::MemoryBytes)
      .def_property_readonly("max_distance", &PyNearDuplicateIndex::MaxDistance);
}
