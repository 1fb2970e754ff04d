#include "crawler/fetch/curl_share.h"

#include <string>

namespace urlsieve {

Status EnsureCurlGlobalInit() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK) {
    return Status::FailedPrecondition(std::string("curl_global_init: ") + curl_easy_strerror(code));
  }
  return Status::Ok();
}

Result<std::unique_ptr<CurlShare>> CurlShare::Create() {
  URLSIEVE_RETURN_IF_ERROR(EnsureCurlGlobalInit());
  std::unique_ptr<CurlShare> share(new CurlShare());
  share->share_ = curl_share_init();
  if (share->share_ == nullptr) return Status::IoError("curl_share_init failed");
  CURLSHcode rc = CURLSHE_OK;
  auto set = [&](CURLSHoption option, auto value) {
    if (rc == CURLSHE_OK) rc = curl_share_setopt(share->share_, option, value);
  };
  set(CURLSHOPT_LOCKFUNC, &CurlShare::Lock);
  set(CURLSHOPT_UNLOCKFUNC, &CurlShare::Unlock);
  set(CURLSHOPT_USERDATA, static_cast<void*>(share.get()));
  set(CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  set(CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  if (rc != CURLSHE_OK) {
    return Status::IoError(std::string("curl_share_setopt: ") + curl_share_strerror(rc));
  }
  return share;
}

CurlShare::~CurlShare() {
  if (share_ != nullptr) curl_share_cleanup(share_);
}

void CurlShare::Lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
  static_cast<CurlShare*>(self)->mutexes_[data].lock();
}

void CurlShare::Unlock(CURL*, curl_lock_data data, void* self) {
  static_cast<CurlShare*>(self)->mutexes_[data].unlock();
}

}  // namespace urlsieve
