// libstdc++'s <regex> trips GCC's -Wmaybe-uninitialized in std::function's move constructor when
// optimizing with sanitizers (a known false positive); only this file instantiates it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "crawler/crawl/scope.h"

#include <regex>

namespace urlsieve {

struct Scope::Patterns {
  std::vector<std::regex> allow;
  std::vector<std::regex> deny;
};

Scope::Scope(ScopeOptions options)
    : options_(std::move(options)), patterns_(std::make_unique<Patterns>()) {}

Scope::~Scope() = default;

std::string_view ScopeReasonName(ScopeReason reason) {
  switch (reason) {
    case ScopeReason::kAccept:
      return "accept";
    case ScopeReason::kScheme:
      return "scope-scheme";
    case ScopeReason::kUrlLength:
      return "scope-url-length";
    case ScopeReason::kDepth:
      return "scope-depth";
    case ScopeReason::kRepeatedSegments:
      return "scope-repeated-segments";
    case ScopeReason::kOffSite:
      return "scope-off-site";
    case ScopeReason::kDenied:
      return "scope-denied";
    case ScopeReason::kNotAllowed:
      return "scope-not-allowed";
    case ScopeReason::kInvalidUrl:
      return "scope-invalid-url";
    case ScopeReason::kCount:
      break;
  }
  return "?";
}

ScopeOptions ScopeOptions::FromConfig(const CrawlConfig& config) {
  ScopeOptions o;
  o.mode = config.scope.mode;
  o.allow = config.scope.allow;
  o.deny = config.scope.deny;
  o.max_url_length = config.scope.max_url_length;
  o.max_depth = config.crawl.max_depth;
  o.max_repeated_segments = config.scope.max_repeated_segments;
  return o;
}

bool HasRepeatedSegments(std::string_view path, int times) {
  if (times < 2) return false;
  std::vector<std::string_view> segs;
  size_t i = path.empty() || path[0] != '/' ? 0 : 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    segs.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  const size_t n = segs.size();
  const size_t k = static_cast<size_t>(times);
  // A block of `len` segments repeated k times in a row is a stretch where segs[j] == segs[j+len]
  // holds for (k-1)*len consecutive j.
  for (size_t len = 1; len * k <= n; ++len) {
    size_t run = 0;
    for (size_t j = 0; j + len < n; ++j) {
      run = segs[j] == segs[j + len] ? run + 1 : 0;
      if (run >= (k - 1) * len) return true;
    }
  }
  return false;
}

Result<std::unique_ptr<Scope>> Scope::Create(const ScopeOptions& options,
                                             const std::vector<CanonicalUrl>& seeds) {
  if (options.max_repeated_segments == 1 || options.max_repeated_segments < 0) {
    return Status::InvalidArgument("scope.max_repeated_segments must be 0 (off) or >= 2");
  }
  if (options.max_depth < 0) return Status::InvalidArgument("max_depth must be >= 0");
  if (options.mode != ScopeMode::kAny && seeds.empty() && !options.seeds_may_come_later) {
    return Status::InvalidArgument("scope mode \"" + std::string(ScopeModeName(options.mode)) +
                                   "\" needs at least one seed");
  }
  std::unique_ptr<Scope> scope(new Scope(options));
  for (const CanonicalUrl& seed : seeds) {
    scope->hosts_.insert(options.mode == ScopeMode::kDomain ? RegistrableDomain(seed.host())
                                                            : std::string(seed.host()));
  }
  auto compile = [](const std::vector<std::string>& patterns, const char* what,
                    std::vector<std::regex>* out) -> Status {
    for (const std::string& p : patterns) {
      try {
        out->emplace_back(p, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        return Status::InvalidArgument(std::string("invalid scope.") + what + " pattern \"" + p +
                                       "\": " + e.what());
      }
    }
    return Status::Ok();
  };
  URLSIEVE_RETURN_IF_ERROR(compile(options.allow, "allow", &scope->patterns_->allow));
  URLSIEVE_RETURN_IF_ERROR(compile(options.deny, "deny", &scope->patterns_->deny));
  return scope;
}

void Scope::AddSeed(const CanonicalUrl& seed) {
  if (options_.mode == ScopeMode::kAny) return;
  std::string host = options_.mode == ScopeMode::kDomain ? RegistrableDomain(seed.host())
                                                         : std::string(seed.host());
  {
    std::shared_lock<std::shared_mutex> lock(hosts_mu_);
    if (hosts_.find(host) != hosts_.end()) return;
  }
  std::unique_lock<std::shared_mutex> lock(hosts_mu_);
  hosts_.insert(std::move(host));
}

bool Scope::HostInScope(std::string_view host) const {
  // Only a cluster node's hosts change after Create.
  std::shared_lock<std::shared_mutex> lock(hosts_mu_, std::defer_lock);
  if (options_.seeds_may_come_later) lock.lock();
  switch (options_.mode) {
    case ScopeMode::kAny:
      return true;
    case ScopeMode::kHost:
      return hosts_.find(host) != hosts_.end();
    case ScopeMode::kDomain: {
      // The host or any parent domain of it is a seed's registrable domain: one lookup per label
      // instead of a public suffix list query per URL.
      std::string_view rest = host;
      while (true) {
        if (hosts_.find(rest) != hosts_.end()) return true;
        size_t dot = rest.find('.');
        if (dot == std::string_view::npos) return false;
        rest.remove_prefix(dot + 1);
      }
    }
  }
  return false;
}

ScopeReason Scope::Decide(const CanonicalUrl& url, int depth) const {
  if (url.scheme() != "http" && url.scheme() != "https") return ScopeReason::kScheme;
  if (url.key().size() > options_.max_url_length) return ScopeReason::kUrlLength;
  if (depth > options_.max_depth) return ScopeReason::kDepth;
  if (HasRepeatedSegments(url.path(), options_.max_repeated_segments)) {
    return ScopeReason::kRepeatedSegments;
  }
  if (!HostInScope(url.host())) return ScopeReason::kOffSite;
  for (const std::regex& re : patterns_->deny) {
    if (std::regex_search(url.key(), re)) return ScopeReason::kDenied;
  }
  if (patterns_->allow.empty()) return ScopeReason::kAccept;
  for (const std::regex& re : patterns_->allow) {
    if (std::regex_search(url.key(), re)) return ScopeReason::kAccept;
  }
  return ScopeReason::kNotAllowed;
}

ScopeDecision Scope::Check(const CanonicalUrl& url, int depth) const {
  ScopeReason reason = Decide(url, depth);
  if (reason != ScopeReason::kAccept) Record(reason);
  return {reason};
}

void Scope::Record(ScopeReason reason, uint64_t count) const {
  counts_[static_cast<size_t>(reason)].fetch_add(count, std::memory_order_relaxed);
}

uint64_t Scope::rejections(ScopeReason reason) const {
  return counts_[static_cast<size_t>(reason)].load(std::memory_order_relaxed);
}

std::vector<std::pair<std::string_view, uint64_t>> Scope::Rejections() const {
  std::vector<std::pair<std::string_view, uint64_t>> out;
  for (size_t i = 1; i < counts_.size(); ++i) {
    uint64_t n = counts_[i].load(std::memory_order_relaxed);
    if (n != 0) out.emplace_back(ScopeReasonName(static_cast<ScopeReason>(i)), n);
  }
  return out;
}

}  // namespace urlsieve
