// Known tracking parameters: query parameters that record where a visit came from (a campaign, an
// ad click, a mail, a share) and never select content. The opt-in rule strip_tracking_params
// (CanonicalizeOptions, url_canonicalizer.h) removes them from the key, except where a per-host
// exception keeps one (docs/features/canonicalization.md, "Tracking parameters").
//
// Where the names come from. Every name below is on at least one of these public lists, and is
// known as attribution or click tracking (most from their vendors' documentation); generic names
// that some site uses for content (ref, source, campaign, cid, sid, spm, __s, fb_source, ...) are
// left out even where a list strips them. The lists, as known when this table was written (from
// memory: there was no network access to check them against their current versions):
//   - Firefox's query stripping list (Enhanced Tracking Protection, strict mode;
//     privacy.query_stripping, the "query-stripping" remote settings collection);
//   - Brave's query filter (brave-core, components/query_filter);
//   - ClearURLs' rules (data.min.json, the globalRules provider);
//   - AdGuard's URL Tracking filter;
//   - the vendors' own documentation: Google Analytics campaign parameters (utm_*) and linker
//     (_ga, _gl), Google Ads auto-tagging (gclid, gclsrc, gbraid, wbraid, gad_source, dclid),
//     Google Merchant Center (srsltid), Microsoft Advertising (msclkid), Meta (fbclid), Instagram
//     (igshid), TikTok (ttclid), X/Twitter (twclid), LinkedIn (li_fat_id), Yandex (yclid,
//     _openstat), Matomo (mtm_*, pk_campaign...), HubSpot (_hsenc, _hsmi, __hstc, __hssc, __hsfp,
//     hsCtaTracking, hsa_*), Mailchimp (mc_cid, mc_eid), Marketo (mkt_tok), MailerLite
//     (ml_subscriber, ml_subscriber_hash), Omeda (oly_anon_id, oly_enc_id), Vero (vero_conv,
//     vero_id), Wicked Reports (wickedid), Branch (_branch_match_id).
//
// Matching: a parameter's name as the key spells it (percent-encoding normalized, so
// "utm%5Fsource" is "utm_source"), ASCII case-insensitively: the lists compare so (Firefox
// lowercases the name), the names are conventionally lowercase, and "UTM_SOURCE" selects no more
// content than "utm_source". A name of kTrackingParams matches whole; a prefix of
// kTrackingParamPrefixes matches every name that starts with it ("utm_" matches utm_source,
// utm_id, utm_anything).
//
// The list has a version (kTrackingParamsVersion, url_canonicalizer.h), stored with a state that
// uses the rule: a list is never changed in place, since a state's keys must not change under it.
// Adding or removing a name makes a new version, and the old list stays for the states made with it
// (as kCurrentKeyVersion does for the key function).
//
// Thread-safety: constant tables and pure functions.
#ifndef URLSIEVE_URL_TRACKING_PARAMS_H_
#define URLSIEVE_URL_TRACKING_PARAMS_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace urlsieve {

// Whole names, lowercase ASCII, sorted (byte order; checked below): binary-searched.
inline constexpr std::string_view kTrackingParams[] = {
    "__hsfp",                // HubSpot
    "__hssc",                // HubSpot
    "__hstc",                // HubSpot
    "__twitter_impression",  // X/Twitter
    "_branch_match_id",      // Branch
    "_ga",                   // Google Analytics (analytics.js cross-domain linker)
    "_gl",                   // Google Analytics (gtag.js cross-domain linker)
    "_hsenc",                // HubSpot
    "_hsmi",                 // HubSpot
    "_openstat",             // Yandex
    "dclid",                 // Google Display & Video 360
    "fbclid",                // Meta
    "gad_source",            // Google Ads
    "gbraid",                // Google Ads
    "gclid",                 // Google Ads
    "gclsrc",                // Google Ads
    "hsctatracking",         // HubSpot (hsCtaTracking)
    "igshid",                // Instagram
    "li_fat_id",             // LinkedIn
    "mc_cid",                // Mailchimp
    "mc_eid",                // Mailchimp
    "mkt_tok",               // Marketo
    "ml_subscriber",         // MailerLite
    "ml_subscriber_hash",    // MailerLite
    "msclkid",               // Microsoft Advertising
    "oly_anon_id",           // Omeda
    "oly_enc_id",            // Omeda
    "pk_campaign",           // Matomo (Piwik)
    "pk_content",            // Matomo
    "pk_keyword",            // Matomo
    "pk_kwd",                // Matomo
    "pk_medium",             // Matomo
    "pk_source",             // Matomo
    "rb_clickid",            // on Firefox's and Brave's lists
    "s_cid",                 // Adobe Analytics
    "srsltid",               // Google Merchant Center
    "ttclid",                // TikTok
    "twclid",                // X/Twitter
    "vero_conv",             // Vero
    "vero_id",               // Vero
    "wbraid",                // Google Ads
    "wickedid",              // Wicked Reports
    "yclid",                 // Yandex
};

// Prefixes, lowercase ASCII, sorted, none a prefix of another.
inline constexpr std::string_view kTrackingParamPrefixes[] = {
    "hsa_",  // HubSpot ads: hsa_acc, hsa_cam, hsa_grp, hsa_ad, hsa_src, hsa_kw, ...
    "mtm_",  // Matomo: mtm_campaign, mtm_source, mtm_medium, mtm_keyword, ...
    "utm_",  // Google Analytics (Urchin): utm_source, utm_medium, utm_campaign, utm_term, ...
};

namespace tracking_params_internal {
constexpr bool IsLowerSorted(std::span<const std::string_view> names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) return false;
    for (char c : names[i]) {
      if (c >= 'A' && c <= 'Z') return false;
    }
    if (i > 0 && !(names[i - 1] < names[i])) return false;
  }
  return true;
}
}  // namespace tracking_params_internal
static_assert(tracking_params_internal::IsLowerSorted(kTrackingParams),
              "kTrackingParams must be lowercase, sorted and without repeats");
static_assert(tracking_params_internal::IsLowerSorted(kTrackingParamPrefixes),
              "kTrackingParamPrefixes must be lowercase, sorted and without repeats");

// Whether a query parameter named `name` (as the key spells it) is a known tracking parameter.
// One binary search in each table; no allocation.
bool IsTrackingParam(std::string_view name);

// Per-host exceptions: "HOST:NAME" keeps the tracking parameter NAME on HOST and on every host
// under it ("example.com:utm_source" keeps utm_source on example.com and shop.example.com).
// HOST is a host as the key spells it: ASCII letters, digits, '-', '.' and '_' (an IDN in its
// xn-- form; not an IPv6 literal); NAME is a parameter name of RFC 3986 unreserved characters
// (letters, digits, '-', '.', '_', '~'). Both are matched ASCII case-insensitively, as the list is.
// An exception for a name that is not on the list changes nothing.
//
// "" when `exception` is well-formed, else why not (for a flag's or a config key's error).
std::string CheckTrackingException(std::string_view exception);
// InvalidArgument naming the first malformed exception, if any.
Status CheckTrackingExceptions(std::span<const std::string> exceptions);
// The exceptions lowercased, sorted and without repeats; malformed ones are dropped. Two lists
// that keep the same parameters on the same hosts normalize to the same list: what a state stores.
std::vector<std::string> NormalizeTrackingExceptions(std::span<const std::string> exceptions);
// Whether the normalized `exceptions` keep the parameter `name` on `host` (a canonical host,
// lowercase).
bool KeepsTrackingParam(std::span<const std::string> exceptions, std::string_view host,
                        std::string_view name);

}  // namespace urlsieve

#endif  // URLSIEVE_URL_TRACKING_PARAMS_H_
