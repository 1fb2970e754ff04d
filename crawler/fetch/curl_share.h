// CurlShare: the libcurl caches every fetcher thread of a crawl shares — DNS and TLS sessions.
//
// One CurlShare serves many Fetchers (one per thread). libcurl calls back into it to lock each kind
// of shared data; it keeps one mutex per curl_lock_data, as curl_share_setopt(3) requires.
//
// The connection cache is deliberately NOT shared (CURL_LOCK_DATA_CONNECT): libcurl documents that
// sharing connections between concurrent threads is not supported (CURLSHOPT_SHARE(3); KNOWN_BUGS
// "A shared connection cache is not thread-safe", curl/curl#9404). Keep-alive still works: each
// Fetcher's easy handle keeps its own connection cache between transfers.
//
// Thread-safety: shared; internally locked. It must outlive every Fetcher created with it.
#ifndef URLSIEVE_CRAWLER_FETCH_CURL_SHARE_H_
#define URLSIEVE_CRAWLER_FETCH_CURL_SHARE_H_

#include <curl/curl.h>

#include <array>
#include <memory>
#include <mutex>

#include "base/status.h"

namespace urlsieve {

// Runs curl_global_init once per process (thread-safe; later calls return the first outcome).
// libcurl requires it before any other call while only one thread runs; call it early in main.
// CurlShare::Create and Fetcher::Create call it too.
Status EnsureCurlGlobalInit();

class CurlShare {
 public:
  static Result<std::unique_ptr<CurlShare>> Create();
  ~CurlShare();
  CurlShare(const CurlShare&) = delete;
  CurlShare& operator=(const CurlShare&) = delete;

  // The handle to pass to CURLOPT_SHARE.
  CURLSH* handle() const { return share_; }

 private:
  CurlShare() = default;
  static void Lock(CURL* easy, curl_lock_data data, curl_lock_access access, void* self);
  static void Unlock(CURL* easy, curl_lock_data data, void* self);

  CURLSH* share_ = nullptr;
  // Indexed by curl_lock_data. Shared-access requests take the mutex exclusively: simpler, and the
  // critical sections are short lookups.
  std::array<std::mutex, CURL_LOCK_DATA_LAST> mutexes_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_FETCH_CURL_SHARE_H_
