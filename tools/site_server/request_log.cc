#include "tools/site_server/request_log.h"

#include <cerrno>
#include <cstring>

namespace urlsieve::site {

RequestLog::RequestLog() : start_(std::chrono::steady_clock::now()) {}

RequestLog::~RequestLog() {
  if (file_ != nullptr) std::fclose(file_);
}

Status RequestLog::MirrorToFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return Status::IoError(path + ": " + std::strerror(errno));
  std::lock_guard lock(mu_);
  if (file_ != nullptr) std::fclose(file_);
  file_ = file;
  return Status::Ok();
}

uint64_t RequestLog::Add(LoggedRequest request) {
  std::lock_guard lock(mu_);
  entries_.push_back(std::move(request));
  added_.notify_all();
  return cleared_ + entries_.size() - 1;
}

void RequestLog::Answered(uint64_t id, int status, uint64_t body_bytes) {
  std::lock_guard lock(mu_);
  if (id < cleared_ || id - cleared_ >= entries_.size()) return;
  LoggedRequest& request = entries_[id - cleared_];
  request.status = status;
  request.body_bytes = body_bytes;
  if (file_ != nullptr) {
    // A tab inside a header value would shift the columns.
    auto field = [](const std::optional<std::string>& value) {
      std::string out = value.value_or("-");
      for (char& c : out) c = c == '\t' ? ' ' : c;
      return out;
    };
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(request.time - start_).count();
    std::fprintf(file_, "%lld\t%d\t%d\t%s\t%s\t%s\t%d\t%llu\t%s\t%s\n", static_cast<long long>(ms),
                 request.host, request.port, request.method.c_str(), request.host_header.c_str(),
                 request.target.c_str(), status, static_cast<unsigned long long>(body_bytes),
                 field(request.if_none_match).c_str(), field(request.if_modified_since).c_str());
    std::fflush(file_);
  }
  added_.notify_all();
}

bool RequestLog::WaitUntil(const std::function<bool(const std::vector<LoggedRequest>&)>& done,
                           std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return added_.wait_for(lock, timeout, [&] { return done(entries_); });
}

std::vector<LoggedRequest> RequestLog::Snapshot() const {
  std::lock_guard lock(mu_);
  return entries_;
}

size_t RequestLog::Count(int host, const std::string& resource) const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const LoggedRequest& e : entries_) n += e.host == host && e.resource == resource;
  return n;
}

size_t RequestLog::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

void RequestLog::Clear() {
  std::lock_guard lock(mu_);
  cleared_ += entries_.size();
  entries_.clear();
}

}  // namespace urlsieve::site
