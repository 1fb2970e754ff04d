#include "url/url_canonicalize_rules.h"

#include <algorithm>
#include <string>
#include <vector>

#include "url/tracking_params.h"

namespace urlsieve {
namespace {

constexpr std::string_view kSessionIdNames[] = {"jsessionid",   "phpsessid", "sid",
                                                "aspsessionid", "cfid",      "cftoken"};

bool IsSessionIdParam(std::string_view param) {
  const std::string_view name = param.substr(0, param.find('='));
  for (std::string_view id : kSessionIdNames) {
    if (url_chars::EqualsLower(name, id)) return true;
  }
  return false;
}

}  // namespace

bool ApplyQueryRules(size_t begin, std::string_view host, const CanonicalizeOptions& options,
                     KeyWriter* w) {
  const size_t end = w->pos();
  if (options.strip_session_ids || options.strip_tracking_params || options.sort_query) {
    thread_local std::vector<std::string_view> params;
    thread_local std::string joined;
    params.clear();
    const std::string_view query = w->View(begin, end);
    size_t b = 0;
    for (;;) {
      const size_t amp = query.find('&', b);
      params.push_back(query.substr(b, amp == std::string_view::npos ? amp : amp - b));
      if (amp == std::string_view::npos) break;
      b = amp + 1;
    }
    const size_t found = params.size();
    if (options.strip_session_ids) {
      params.erase(std::remove_if(params.begin(), params.end(), IsSessionIdParam), params.end());
      if (params.empty()) return false;  // the query carried nothing but session ids
    }
    if (options.strip_tracking_params) {
      auto tracking = [&](std::string_view param) {
        // Parameters are split on '&' only, as the URL Standard's application/x-www-form-urlencoded
        // parser does; a parameter holding a ';' is kept whole, since a server that still splits
        // on ';' (HTML 4's recommendation) would read a second parameter in it.
        if (param.find(';') != std::string_view::npos) return false;
        const std::string_view name = param.substr(0, param.find('='));
        return IsTrackingParam(name) &&
               !KeepsTrackingParam(options.tracking_exceptions, host, name);
      };
      params.erase(std::remove_if(params.begin(), params.end(), tracking), params.end());
      if (params.empty()) return false;  // the query carried nothing but tracking parameters
    }
    // Nothing removed and nothing to sort (the common case): the query stays as it is written.
    if (params.size() == found && !options.sort_query) {
      return !(options.drop_empty_query && end == begin);
    }
    if (options.sort_query) {
      // Empty parameters ("a=1&&b=2", a trailing '&') say nothing; once the order is gone, neither
      // does their position.
      params.erase(std::remove(params.begin(), params.end(), std::string_view()), params.end());
      auto name = [](std::string_view param) { return param.substr(0, param.find('=')); };
      auto by_name = [&](std::string_view x, std::string_view y) { return name(x) < name(y); };
      if (params.size() > 32) {
        std::stable_sort(params.begin(), params.end(), by_name);
      } else {  // insertion sort: stable, allocation-free, fastest for a handful of parameters
        for (size_t k = 1; k < params.size(); ++k) {
          const std::string_view param = params[k];
          size_t j = k;
          for (; j > 0 && by_name(param, params[j - 1]); --j) params[j] = params[j - 1];
          params[j] = param;
        }
      }
    }
    joined.clear();
    for (size_t k = 0; k < params.size(); ++k) {
      if (k > 0) joined.push_back('&');
      joined.append(params[k]);
    }
    w->set_pos(begin);
    w->Put(joined);
  }
  return !(options.drop_empty_query && w->pos() == begin);
}

}  // namespace urlsieve
