#include "tools/site_server/generated_site.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <string_view>
#include <utility>

namespace urlsieve::site {
namespace {

// Feeds deflate (gzip wrapper) from `next_chunk` until it returns an empty view.
std::string Gzip(const std::function<std::string_view()>& next_chunk) {
  z_stream z{};
  // windowBits 15 + 16: gzip header and trailer instead of zlib's (RFC 1952).
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
  std::string out;
  char buffer[64 * 1024];
  int flush = Z_NO_FLUSH;
  while (flush != Z_FINISH) {
    const std::string_view chunk = next_chunk();
    flush = chunk.empty() ? Z_FINISH : Z_NO_FLUSH;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(chunk.data()));
    z.avail_in = static_cast<uInt>(chunk.size());
    do {
      z.next_out = reinterpret_cast<Bytef*>(buffer);
      z.avail_out = sizeof(buffer);
      deflate(&z, flush);
      out.append(buffer, sizeof(buffer) - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

// Gzip of `count` spaces, without materializing them.
std::string GzipSpaces(std::uint64_t count) {
  const std::string block(1 << 20, ' ');
  return Gzip([&]() -> std::string_view {
    const std::uint64_t n = std::min<std::uint64_t>(count, block.size());
    count -= n;
    return std::string_view(block.data(), n);
  });
}

// Parses a decimal integer in [0, max]; -1 when it is not one.
long long ParseNumber(std::string_view s, long long max) {
  long long value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0 || value > max) return -1;
  return value;
}

// Value of `key` in a raw query string ("a=1&b=2"), or "".
std::string QueryParam(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.size() > key.size() && pair.starts_with(key) && pair[key.size()] == '=') {
      return std::string(pair.substr(key.size() + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

std::string A(const std::string& href, const std::string& text, const std::string& rel = "") {
  return "<li><a href=\"" + HtmlEscape(href) + "\"" + (rel.empty() ? "" : " rel=\"" + rel + "\"") +
         ">" + HtmlEscape(text) + "</a></li>\n";
}

std::string List(const std::string& items) { return "<ul>\n" + items + "</ul>"; }

SiteResponse Robots(const std::string& text) {
  SiteResponse r;
  r.content_type = "text/plain; charset=utf-8";
  r.body = text;
  return r;
}

// A 1x1 transparent PNG.
const unsigned char kPng[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
    0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00,
    0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78,
    0x9c, 0x63, 0x60, 0x00, 0x02, 0x00, 0x00, 0x05, 0x00, 0x01, 0xe9, 0xfa, 0xdc, 0xd8,
    0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

constexpr const char* kPdf =
    "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
    "2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
    "trailer << /Root 1 0 R >>\n%%EOF\n";

}  // namespace

std::string GzipCompress(const std::string& data) {
  bool done = false;
  return Gzip([&]() -> std::string_view {
    if (done) return {};
    done = true;
    return data;
  });
}

GeneratedSite::GeneratedSite(GeneratedSiteOptions options, std::vector<std::string> origins)
    : options_(std::move(options)),
      origins_(std::move(origins)),
      pages_(origins_.size()),
      expectations_(origins_.size()),
      busy_served_(new std::atomic<bool>[origins_.size()]) {
  for (size_t h = 0; h < origins_.size(); ++h) busy_served_[h] = false;
  BuildMainHost();
  for (int h = 1; h < hosts(); ++h) BuildSatellite(h);
}

void GeneratedSite::Add(int host, const std::string& resource, SiteResponse response,
                        Expect expect) {
  pages_[host][resource] = std::move(response);
  if (expect == Expect::kFetch) expectations_[host].must_fetch.insert(resource);
  if (expect == Expect::kNotFetch) expectations_[host].must_not_fetch.insert(resource);
}

void GeneratedSite::BuildMainHost() {
  const std::string& o = origins_[0];
  const int n = std::max(1, options_.page_count);
  HostExpectations& expect = expectations_[0];

  std::string robots =
      "# urlsieve test site\nUser-agent: *\nDisallow: /private/\n"
      "Allow: /private/public-note\nDisallow: /*?session=\n";
  if (!options_.crawl_delay.empty()) robots += "Crawl-delay: " + options_.crawl_delay + "\n";
  Add(0, "/robots.txt", Robots(robots), Expect::kFetch);

  std::string index;
  index += A("/about", "About");
  index += A("/pages/1", "The page chain");
  index += A("/cycle/a", "A cycle");
  index += A("/spellings", "One page, many spellings");
  index += A("/nofollow", "A nofollow link");
  index += A("/meta-nofollow", "A meta robots nofollow page");
  index += A("/base/", "A page with <base href>");
  index += A("/calendar/2026/11", "The calendar (infinite)");
  index += A("/redirect/301", "301 to /about");
  index += A("/redirect/302", "302 to /pages/2");
  index += A("/chain/1", "A chain of redirects");
  index += A("/loop/a", "A redirect loop");
  index += A("/private/secret", "Disallowed by robots.txt");
  index += A("/private/public-note", "Allowed by a longer Allow rule");
  index += A("/pages/3?session=abc", "Disallowed by a wildcard rule");
  index += A("/large", "A page larger than the body cap");
  index += A("/gzip", "A gzip-encoded page");
  index += A("/gzip-bomb", "A gzip bomb");
  index += A("/slow", "A slow page");
  index += A("/image.png", "An image");
  index += A("/doc.pdf", "A PDF");
  index += A("/missing", "A missing page (404)");
  index += A("/error", "A server error (500)");
  index += A("/busy", "Too many requests (429, then 200)");
  for (int h = 1; h < hosts(); ++h) index += A(origins_[h] + "/", "Host " + std::to_string(h));
  Add(0, "/", HtmlPage("urlsieve test site", List(index)), Expect::kFetch);
  Add(0, "/about", HtmlPage("About", List(A("/", "Home") + A("/pages/1", "Pages"))),
      Expect::kFetch);

  for (int i = 1; i <= n; ++i) {
    std::string links = A("/", "Home");
    if (i < n) links += A("/pages/" + std::to_string(i + 1), "Next");
    if (i > 1) links += A("/pages/" + std::to_string(i - 1), "Previous");
    links += A("/pages/" + std::to_string((i * 7) % n + 1), "Elsewhere");
    Add(0, "/pages/" + std::to_string(i), HtmlPage("Page " + std::to_string(i), List(links)),
        Expect::kFetch);
  }
  Add(0, "/cycle/a", HtmlPage("Cycle A", List(A("/cycle/b", "B"))), Expect::kFetch);
  Add(0, "/cycle/b", HtmlPage("Cycle B", List(A("c", "C (relative)"))), Expect::kFetch);
  Add(0, "/cycle/c", HtmlPage("Cycle C", List(A(o + "/cycle/a", "A (absolute)"))), Expect::kFetch);

  // Equivalent spellings (RFC 3986 §6.2.2 and the canonicalizer's rules): each group must be
  // fetched once, whichever spelling comes first.
  const std::string caps = "HTTP://" + o.substr(std::string_view("http://").size());
  const std::string authority = o.substr(std::string_view("http:").size());  // "//127.0.0.1:p"
  std::string spellings;
  for (const std::string& href :
       {std::string("/pages/1"), std::string("pages/1"), std::string("./pages/1"),
        std::string("/./pages/1"), std::string("/pages/../pages/1"), std::string("/pages/1#top"),
        std::string("/pages/%31"), std::string("/%70ages/1"), o + "/pages/1", caps + "/pages/1",
        authority + "/pages/1", o + "/pages/1#frag"}) {
    spellings += A(href, "Page 1 as " + href);
  }
  if (o.ends_with(":80")) spellings += A(o.substr(0, o.size() - 3) + "/pages/1", "default port");
  for (const char* href : {"/~user/", "/%7Euser/", "/%7euser/", "/%7Euser/#me"}) {
    spellings += A(href, std::string("~user as ") + href);
  }
  for (const char* href : {"/caf%C3%A9", "/caf%c3%a9"}) {
    spellings += A(href, std::string("café as ") + href);
  }
  spellings += A("#self", "This page");
  Add(0, "/spellings", HtmlPage("Spellings", List(spellings)), Expect::kFetch);
  Add(0, "/~user/", HtmlPage("~user", List(A("/", "Home"))), Expect::kFetch);
  Add(0, "/caf\xc3\xa9", HtmlPage("Café", List(A("/", "Home"))), Expect::kFetch);

  Add(0, "/nofollow",
      HtmlPage("Nofollow",
               List(A("/only-via-nofollow", "Do not follow", "nofollow") + A("/", "Home"))),
      Expect::kFetch);
  Add(0, "/only-via-nofollow", HtmlPage("Should not be here", ""), Expect::kNotFetch);
  Add(0, "/meta-nofollow",
      HtmlPage("Meta nofollow", List(A("/only-via-meta-nofollow", "Do not follow")),
               "<meta name=\"robots\" content=\"noindex, nofollow\">\n"),
      Expect::kFetch);
  Add(0, "/only-via-meta-nofollow", HtmlPage("Should not be here", ""), Expect::kNotFetch);

  Add(0, "/base/",
      HtmlPage("Base href", List(A("child", "Resolves against <base>")),
               "<base href=\"/base-target/\">\n"),
      Expect::kFetch);
  Add(0, "/base-target/child", HtmlPage("Base target", List(A("/", "Home"))), Expect::kFetch);
  expect.must_not_fetch.insert("/base/child");  // resolved against the page URL, not <base>

  Add(0, "/redirect/301", Redirect(301, "/about"), Expect::kFetch);
  Add(0, "/redirect/302", Redirect(302, o + "/pages/2"), Expect::kFetch);
  Add(0, "/chain/1", Redirect(302, "/chain/2"), Expect::kFetch);
  Add(0, "/chain/2", Redirect(302, o + "/chain/3"), Expect::kFetch);
  Add(0, "/chain/3", Redirect(301, "end"), Expect::kFetch);
  Add(0, "/chain/end", HtmlPage("End of the chain", List(A("/", "Home"))), Expect::kFetch);
  Add(0, "/loop/a", Redirect(302, "/loop/b"), Expect::kFetch);
  Add(0, "/loop/b", Redirect(302, "/loop/a"), Expect::kFetch);

  Add(0, "/private/secret", HtmlPage("Secret", ""), Expect::kNotFetch);
  Add(0, "/private/public-note", HtmlPage("Public note", List(A("/", "Home"))), Expect::kFetch);
  Add(0, "/pages/3?session=abc", HtmlPage("Session page", ""), Expect::kNotFetch);

  SiteResponse large =
      HtmlPage("Large", "<p>" + std::string(options_.large_page_bytes, 'x') + "</p>");
  Add(0, "/large", std::move(large), Expect::kFetch);
  SiteResponse gz = HtmlPage("Gzip", List(A("/gzip-child", "Found in a gzip body")));
  gz.body = GzipCompress(gz.body);
  gz.headers.emplace_back("Content-Encoding", "gzip");
  Add(0, "/gzip", std::move(gz), Expect::kFetch);
  Add(0, "/gzip-child", HtmlPage("Gzip child", List(A("/", "Home"))), Expect::kFetch);
  expect.must_fetch.insert("/gzip-bomb");
  // Compressed on its first request: on a loaded machine the answer may come after a crawl's
  // timeout, and the crawl retries it (as it does /slow).
  expect.may_repeat.insert("/gzip-bomb");
  expect.must_fetch.insert("/slow");
  expect.may_repeat.insert("/slow");

  SiteResponse png;
  png.content_type = "image/png";
  png.body.assign(reinterpret_cast<const char*>(kPng), sizeof(kPng));
  Add(0, "/image.png", std::move(png), Expect::kFetch);
  SiteResponse pdf;
  pdf.content_type = "application/pdf";
  pdf.body = kPdf;
  Add(0, "/doc.pdf", std::move(pdf), Expect::kFetch);

  SiteResponse missing = HtmlPage("Not found", "<p>No such page.</p>");
  missing.status = 404;
  Add(0, "/missing", std::move(missing), Expect::kFetch);
  SiteResponse error = HtmlPage("Server error", "<p>Something broke.</p>");
  error.status = 500;
  Add(0, "/error", std::move(error), Expect::kFetch);
  expect.may_repeat.insert("/error");
  expect.must_fetch.insert("/busy");
  expect.may_repeat.insert("/busy");
}

void GeneratedSite::BuildSatellite(int h) {
  const int k = std::max(3, options_.satellite_pages);
  const int kind = (h - 1) % 3;  // 0: robots 404, 1: robots redirected, 2: robots 503
  const Expect pages = kind == 2 ? Expect::kNotFetch : Expect::kFetch;
  std::string links = A(origins_[0] + "/", "Main host");
  for (int i = 1; i <= k; ++i) links += A("/s/" + std::to_string(i), "S" + std::to_string(i));
  Add(h, "/", HtmlPage("Host " + std::to_string(h), List(links)), pages);
  for (int i = 1; i <= k; ++i) {
    const Expect e = kind == 1 && i == 3 ? Expect::kNotFetch : pages;
    Add(h, "/s/" + std::to_string(i),
        HtmlPage("S" + std::to_string(i),
                 List(A("/", "Home") + A("/s/" + std::to_string(i % k + 1), "Next"))),
        e);
  }
  if (kind == 0) {
    SiteResponse none = PlainStatus(404, "no robots.txt here");
    Add(h, "/robots.txt", std::move(none), Expect::kFetch);
  } else if (kind == 1) {
    Add(h, "/robots.txt", Redirect(301, "/moved-robots.txt"), Expect::kFetch);
    Add(h, "/moved-robots.txt", Robots("User-agent: *\nDisallow: /s/3\n"), Expect::kFetch);
  } else {
    SiteResponse down = PlainStatus(503, "robots.txt unavailable");
    down.headers.emplace_back("Retry-After", "2");
    Add(h, "/robots.txt", std::move(down), Expect::kFetch);
    expectations_[h].may_repeat.insert("/robots.txt");
  }
}

const std::string& GeneratedSite::GzipBomb() {
  std::call_once(bomb_once_, [this] { bomb_ = GzipSpaces(options_.gzip_bomb_bytes); });
  return bomb_;
}

SiteResponse GeneratedSite::Handle(const SiteRequest& request) {
  if (request.host >= 0 && request.host < hosts()) {
    const auto& table = pages_[request.host];
    if (auto it = table.find(request.resource); it != table.end()) return it->second;
    // Like most real sites, ignore a query the page does not know.
    const std::string path = request.resource.substr(0, request.resource.find('?'));
    if (auto it = table.find(path); it != table.end() && path != request.resource) {
      return it->second;
    }
  }
  return Dynamic(request);
}

SiteResponse GeneratedSite::Dynamic(const SiteRequest& request) {
  const std::string_view resource = request.resource;
  const size_t q = resource.find('?');
  const std::string_view path = resource.substr(0, q);
  const std::string_view query = q == std::string_view::npos ? "" : resource.substr(q + 1);
  auto suffix_number = [&](std::string_view prefix, long long max) -> long long {
    return path.starts_with(prefix) ? ParseNumber(path.substr(prefix.size()), max) : -1;
  };
  constexpr long long kMaxBytes = 1LL << 30;

  if (request.host == 0) {
    if (path == "/busy") {
      if (!busy_served_[0].exchange(true)) {
        SiteResponse r = PlainStatus(429, "slow down");
        r.headers.emplace_back("Retry-After", "1");
        return r;
      }
      return HtmlPage("Busy, but not any more", List(A("/", "Home")));
    }
    if (path == "/gzip-bomb") {
      SiteResponse r;
      r.body = GzipBomb();
      r.headers.emplace_back("Content-Encoding", "gzip");
      return r;
    }
    if (path.starts_with("/calendar/")) {
      const std::string_view ym = path.substr(std::string_view("/calendar/").size());
      const size_t slash = ym.find('/');
      const long long year = ParseNumber(ym.substr(0, slash), 9999);
      const long long month =
          slash == std::string_view::npos ? -1 : ParseNumber(ym.substr(slash + 1), 12);
      if (year >= 1 && month >= 1) {
        const long long next_year = month == 12 ? year + 1 : year;
        const long long next_month = month == 12 ? 1 : month + 1;
        return HtmlPage(
            "Calendar " + std::to_string(year) + "/" + std::to_string(month),
            List(A("/calendar/" + std::to_string(next_year) + "/" + std::to_string(next_month),
                   "Next month") +
                 A("/", "Home")));
      }
    }
  }
  if (path == "/slow") {
    const long long ms = ParseNumber(QueryParam(query, "ms"), 60'000);
    SiteResponse r = HtmlPage("Slow", List(A("/", "Home")));
    r.delay = ms >= 0 ? std::chrono::milliseconds(ms) : options_.slow_delay;
    return r;
  }
  if (path == "/trickle") {
    const long long bytes = ParseNumber(QueryParam(query, "bytes"), 1 << 20);
    const long long ms = ParseNumber(QueryParam(query, "ms"), 10'000);
    SiteResponse r;
    r.body.assign(bytes >= 0 ? bytes : 100, ' ');
    r.trickle_interval = std::chrono::milliseconds(ms >= 0 ? ms : 100);
    return r;
  }
  if (long long code = suffix_number("/status/", 599); code >= 200) {
    SiteResponse r = PlainStatus(static_cast<int>(code), "status " + std::to_string(code));
    if (code == 429 || code == 503) {
      // Digits only: a test's choice of delay, e.g. 999999 (a server asking to wait 11 days).
      const std::string retry_after = QueryParam(query, "retry_after");
      const bool digits = !retry_after.empty() && retry_after.size() <= 12 &&
                          retry_after.find_first_not_of("0123456789") == std::string::npos;
      r.headers.emplace_back("Retry-After", digits ? retry_after : "2");
    }
    return r;
  }
  if (long long n = suffix_number("/size/", kMaxBytes); n >= 0) {
    SiteResponse r;
    r.body.assign(n, 'x');
    return r;
  }
  if (long long n = suffix_number("/gzip-size/", kMaxBytes); n >= 0) {
    SiteResponse r;
    r.body = GzipSpaces(n);
    r.headers.emplace_back("Content-Encoding", "gzip");
    return r;
  }
  if (long long n = suffix_number("/robots-hops/", 100); n >= 0) {
    if (n > 0) return Redirect(301, "/robots-hops/" + std::to_string(n - 1));
    return Robots("User-agent: *\nDisallow: /hidden/\n");
  }
  SiteResponse r = HtmlPage("Not found", "<p>No such page.</p>");
  r.status = 404;
  return r;
}

}  // namespace urlsieve::site
