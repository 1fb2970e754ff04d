#include "crawler/page/link_extractor.h"

#include <gumbo.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/strings.h"

namespace urlsieve {
namespace {

// HTML's "ASCII whitespace".
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

// The URL parser strips leading and trailing C0 controls and spaces (WHATWG URL §4.4).
std::string_view TrimC0(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= 0x20) s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= 0x20) s.remove_suffix(1);
  return s;
}

// Calls fn(token) for each token of `s` split on any of `separators`.
template <typename Fn>
void ForEachToken(std::string_view s, std::string_view separators, Fn&& fn) {
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && separators.find(s[i]) != std::string_view::npos) ++i;
    size_t j = i;
    while (j < s.size() && separators.find(s[j]) == std::string_view::npos) ++j;
    if (j > i) fn(s.substr(i, j - i));
    i = j;
  }
}

constexpr std::string_view kHtmlSpaces = " \t\n\f\r";

uint8_t ParseRel(std::string_view rel) {
  uint8_t bits = 0;
  ForEachToken(rel, kHtmlSpaces, [&](std::string_view t) {
    if (EqualsIgnoreAsciiCase(t, "nofollow"))
      bits |= kRelNofollow;
    else if (EqualsIgnoreAsciiCase(t, "alternate"))
      bits |= kRelAlternate;
    else if (EqualsIgnoreAsciiCase(t, "next"))
      bits |= kRelNext;
    else if (EqualsIgnoreAsciiCase(t, "prev") || EqualsIgnoreAsciiCase(t, "previous"))
      bits |= kRelPrev;
    else if (EqualsIgnoreAsciiCase(t, "canonical"))
      bits |= kRelCanonical;
    else if (EqualsIgnoreAsciiCase(t, "stylesheet"))
      bits |= kRelStylesheet;
  });
  return bits;
}

// The scheme of a reference (RFC 3986 §3.1), ignoring the tabs and newlines the URL parser removes
// ("java\nscript:" is javascript:); empty for a relative reference.
std::string SchemeOf(std::string_view ref) {
  std::string scheme;
  for (char c : ref) {
    if (c == '\t' || c == '\n' || c == '\r') continue;
    if (c == ':') return scheme;
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool ok =
        alpha || (!scheme.empty() && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!ok || scheme.size() > 32) return {};
    scheme.push_back(AsciiLower(c));
  }
  return {};
}

bool IsHttpUrl(std::string_view url) {
  return StartsWithIgnoreAsciiCase(url, "http://") || StartsWithIgnoreAsciiCase(url, "https://");
}

struct RawRef {
  std::string_view ref;
  LinkSource source;
  uint8_t rel;
};

std::string_view Attr(const GumboElement& el, const char* name) {
  const GumboAttribute* a = gumbo_get_attribute(&el.attributes, name);
  return a == nullptr ? std::string_view() : std::string_view(a->value);
}
bool HasAttr(const GumboElement& el, const char* name) {
  return gumbo_get_attribute(&el.attributes, name) != nullptr;
}

// What the tree walk collects; references stay views into the gumbo output until resolved.
struct Collected {
  std::vector<RawRef> refs;
  std::optional<std::string_view> base;
  std::optional<std::string_view> canonical;
  bool noindex = false;
  bool nofollow = false;
};

void Visit(const GumboElement& el, Collected* c) {
  // In SVG and MathML only <a> is a link (SVG 2 §16.2); a <frame> or <meta> there is just a name.
  if (el.tag_namespace != GUMBO_NAMESPACE_HTML && el.tag != GUMBO_TAG_A) return;
  switch (el.tag) {
    case GUMBO_TAG_A:
    case GUMBO_TAG_AREA:
      if (HasAttr(el, "href")) {
        c->refs.push_back({Attr(el, "href"),
                           el.tag == GUMBO_TAG_A ? LinkSource::kA : LinkSource::kArea,
                           ParseRel(Attr(el, "rel"))});
      }
      break;
    case GUMBO_TAG_FRAME:
    case GUMBO_TAG_IFRAME:
      if (HasAttr(el, "src")) {
        c->refs.push_back({Attr(el, "src"),
                           el.tag == GUMBO_TAG_FRAME ? LinkSource::kFrame : LinkSource::kIframe,
                           0});
      }
      break;
    case GUMBO_TAG_LINK: {
      if (!HasAttr(el, "href")) break;
      uint8_t rel = ParseRel(Attr(el, "rel"));
      if ((rel & kRelCanonical) && !c->canonical) c->canonical = Attr(el, "href");
      // "alternate stylesheet" is a stylesheet, not another version of the page.
      if ((rel & (kRelAlternate | kRelNext | kRelPrev)) && !(rel & kRelStylesheet)) {
        c->refs.push_back({Attr(el, "href"), LinkSource::kLink, rel});
      }
      break;
    }
    case GUMBO_TAG_BASE:
      // HTML §4.2.3: the first base element with an href attribute sets the document base.
      if (!c->base && HasAttr(el, "href")) c->base = Attr(el, "href");
      break;
    case GUMBO_TAG_META: {
      if (EqualsIgnoreAsciiCase(Attr(el, "name"), "robots")) {
        ForEachToken(Attr(el, "content"), ", \t\n\f\r", [&](std::string_view t) {
          if (EqualsIgnoreAsciiCase(t, "noindex")) c->noindex = true;
          if (EqualsIgnoreAsciiCase(t, "nofollow")) c->nofollow = true;
          if (EqualsIgnoreAsciiCase(t, "none")) c->noindex = c->nofollow = true;
        });
      } else if (EqualsIgnoreAsciiCase(Attr(el, "http-equiv"), "refresh")) {
        if (auto target = ParseMetaRefresh(Attr(el, "content"))) {
          c->refs.push_back({*target, LinkSource::kMetaRefresh, 0});
        }
      }
      break;
    }
    default:
      break;
  }
}

bool IsElement(const GumboNode* node) {
  return node->type == GUMBO_NODE_ELEMENT || node->type == GUMBO_NODE_TEMPLATE;
}

// Elements whose text is not shown: code and styles, the inert <template> content, fallback
// content a browser shows only without scripting or frames, and <iframe>'s raw text (a browser
// shows the frame's document instead). docs/features/content-seen.md, "Fingerprints".
bool HidesText(const GumboElement& el) {
  switch (el.tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_NOEMBED:
    case GUMBO_TAG_NOFRAMES:
      return true;
    default:
      return false;
  }
}

// Sectioning content and <main>: a <header> or <footer> inside one belongs to it, not to the site
// (HTML §4.3.8, §4.3.9; WAI-ARIA's banner and contentinfo landmarks).
bool IsSection(const GumboElement& el) {
  switch (el.tag) {
    case GUMBO_TAG_ARTICLE:
    case GUMBO_TAG_ASIDE:
    case GUMBO_TAG_MAIN:
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_SECTION:
      return true;
    default:
      return false;
  }
}

// The site's template around a page's own text: its navigation, sidebars, and the page-wide
// header and footer, marked up as HTML5 landmarks or with their ARIA roles. Left out of the text
// so that one article in two templates, or two articles in one, compare by the articles
// (docs/features/content-seen.md, "Fingerprints").
bool IsTemplate(const GumboElement& el, bool in_section) {
  switch (el.tag) {
    case GUMBO_TAG_NAV:
    case GUMBO_TAG_ASIDE:
      return true;
    case GUMBO_TAG_HEADER:
    case GUMBO_TAG_FOOTER:
      if (!in_section) return true;
      break;
    default:
      break;
  }
  if (el.attributes.length == 0) return false;
  std::string_view role = Attr(el, "role");
  return !role.empty() &&
         (EqualsIgnoreAsciiCase(role, "navigation") || EqualsIgnoreAsciiCase(role, "banner") ||
          EqualsIgnoreAsciiCase(role, "contentinfo") ||
          EqualsIgnoreAsciiCase(role, "complementary"));
}

// The visible text as it is collected: each text node without its leading and trailing ASCII
// whitespace, the nodes joined by one space. Whitespace inside a node is kept as it is: SimHash
// splits words at any non-letter anyway, and collapsing it would cost a pass over every byte of
// text (docs/features/content-seen.md, "Fingerprints").
void AppendText(const char* text, std::string* out) {
  std::string_view s(text);
  size_t begin = 0, end = s.size();
  while (begin < end && IsSpace(s[begin])) ++begin;
  while (end > begin && IsSpace(s[end - 1])) --end;
  if (begin == end) return;
  if (!out->empty()) out->push_back(' ');
  out->append(s.data() + begin, end - begin);
}

struct WalkItem {
  const GumboNode* node;
  size_t depth;
  bool hidden;      // inside an element whose text is not collected
  bool in_section;  // inside sectioning content or <main>
};

// Visits every element in document order, and with `text` set collects the visible text in the
// same pass; returns the depth of the tree. Explicit stack: hostile pages nest elements
// arbitrarily deep.
size_t Walk(const GumboNode* root, Collected* c, std::string* text) {
  std::vector<WalkItem> stack;
  stack.reserve(64);
  stack.push_back({root, 1, false, false});
  size_t max_depth = 0;
  while (!stack.empty()) {
    const WalkItem item = stack.back();
    stack.pop_back();
    const GumboNode* node = item.node;
    if (!IsElement(node)) {  // a text or CDATA node, pushed only when collecting text
      AppendText(node->v.text.text, text);
      continue;
    }
    max_depth = std::max(max_depth, item.depth);
    const GumboElement& el = node->v.element;
    Visit(el, c);
    bool hidden = item.hidden, in_section = item.in_section;
    if (text != nullptr && !hidden) {
      hidden = HidesText(el) || IsTemplate(el, in_section);
      in_section = in_section || IsSection(el);
    }
    for (unsigned i = el.children.length; i-- > 0;) {  // reversed: popped in document order
      auto* child = static_cast<const GumboNode*>(el.children.data[i]);
      if (IsElement(child)) {
        stack.push_back({child, item.depth + 1, hidden, in_section});
      } else if (text != nullptr && !hidden &&
                 (child->type == GUMBO_NODE_TEXT || child->type == GUMBO_NODE_CDATA)) {
        stack.push_back({child, item.depth + 1, hidden, in_section});
      }
    }
  }
  return max_depth;
}

// gumbo's allocator, set explicitly because FlattenForDestroy allocates a children vector that
// gumbo_destroy_output frees.
void* GumboAlloc(void*, size_t size) { return std::malloc(size); }
void GumboFree(void*, void* ptr) { std::free(ptr); }

// gumbo_destroy_output frees the tree recursively, one stack frame per level: a deep enough tree
// overflows the stack. GuardHtml keeps trees shallow, but as a last line of defence a tree deeper
// than this is made flat first, every node becoming a child of the root. Nodes are freed
// individually, so the shape does not matter to the free.
constexpr size_t kFlattenDepth = 4096;

void FlattenForDestroy(GumboNode* root) {
  std::vector<GumboNode*> nodes;
  std::vector<GumboNode*> stack = {root};
  while (!stack.empty()) {
    GumboNode* node = stack.back();
    stack.pop_back();
    if (!IsElement(node)) continue;
    GumboVector& children = node->v.element.children;
    for (unsigned i = 0; i < children.length; ++i) {
      auto* child = static_cast<GumboNode*>(children.data[i]);
      nodes.push_back(child);
      stack.push_back(child);
    }
    if (node != root) children.length = 0;  // its data array is still freed by gumbo
  }
  auto** data = static_cast<void**>(std::malloc(std::max<size_t>(nodes.size(), 1) * sizeof(void*)));
  if (data == nullptr) std::abort();
  std::copy(nodes.begin(), nodes.end(), data);
  GumboVector& top = root->v.element.children;
  std::free(top.data);
  top.data = data;
  top.length = top.capacity = static_cast<unsigned>(nodes.size());
}

LinkDropReason SchemeDropReason(std::string_view scheme) {
  if (scheme == "javascript") return LinkDropReason::kJavascript;
  if (scheme == "mailto") return LinkDropReason::kMailto;
  if (scheme == "data") return LinkDropReason::kData;
  if (scheme == "tel") return LinkDropReason::kTel;
  return LinkDropReason::kOtherScheme;
}

}  // namespace

std::string_view LinkSourceName(LinkSource source) {
  switch (source) {
    case LinkSource::kA:
      return "a";
    case LinkSource::kArea:
      return "area";
    case LinkSource::kFrame:
      return "frame";
    case LinkSource::kIframe:
      return "iframe";
    case LinkSource::kLink:
      return "link";
    case LinkSource::kMetaRefresh:
      return "meta-refresh";
  }
  return "?";
}

std::string_view LinkDropReasonName(LinkDropReason reason) {
  switch (reason) {
    case LinkDropReason::kJavascript:
      return "link-javascript";
    case LinkDropReason::kMailto:
      return "link-mailto";
    case LinkDropReason::kData:
      return "link-data";
    case LinkDropReason::kTel:
      return "link-tel";
    case LinkDropReason::kOtherScheme:
      return "link-other-scheme";
    case LinkDropReason::kSameDocument:
      return "link-same-document";
    case LinkDropReason::kUnresolvable:
      return "link-unresolvable";
    case LinkDropReason::kNofollow:
      return "link-nofollow";
    case LinkDropReason::kTooLong:
      return "link-too-long";
    case LinkDropReason::kTooMany:
      return "link-too-many";
    case LinkDropReason::kTooDeep:
      return "link-too-deep";
    case LinkDropReason::kCount:
      break;
  }
  return "?";
}

std::vector<std::pair<std::string_view, uint64_t>> PageLinks::DroppedCounts() const {
  std::vector<std::pair<std::string_view, uint64_t>> out;
  for (size_t i = 0; i < dropped.size(); ++i) {
    if (dropped[i] != 0)
      out.emplace_back(LinkDropReasonName(static_cast<LinkDropReason>(i)), dropped[i]);
  }
  return out;
}

std::optional<std::string_view> ParseMetaRefresh(std::string_view s) {
  size_t i = 0;
  auto skip_spaces = [&] {
    while (i < s.size() && IsSpace(s[i])) ++i;
  };
  skip_spaces();
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;  // the delay
  skip_spaces();
  if (i < s.size() && (s[i] == ';' || s[i] == ',')) ++i;
  skip_spaces();
  if (i + 3 <= s.size() && EqualsIgnoreAsciiCase(s.substr(i, 3), "url")) {
    size_t j = i + 3;
    while (j < s.size() && IsSpace(s[j])) ++j;
    if (j < s.size() && s[j] == '=') {
      i = j + 1;
      skip_spaces();
    }
  }
  std::string_view url = s.substr(i);
  if (!url.empty() && (url[0] == '\'' || url[0] == '"')) {
    size_t end = url.find(url[0], 1);
    url = url.substr(1, end == std::string_view::npos ? std::string_view::npos : end - 1);
  }
  while (!url.empty() && IsSpace(url.back())) url.remove_suffix(1);
  if (url.empty()) return std::nullopt;
  return url;
}

LinkExtractor::LinkExtractor(const UrlCanonicalizer* canonicalizer, Options options)
    : canonicalizer_(canonicalizer), options_(options) {}

PageLinks LinkExtractor::Extract(std::string_view html, std::string_view page_url,
                                 const TextEncoding* encoding) const {
  GumboOptions gopts = kGumboDefaultOptions;
  gopts.allocator = GumboAlloc;
  gopts.deallocator = GumboFree;
  gopts.max_errors = 0;  // parse errors are not used; recording them costs time and memory
  PageLinks page;
  std::string guarded;
  HtmlGuardResult guard = GuardHtml(html, options_.guard, &guarded);
  if (guard.changed) {
    html = guarded;
    page.guarded = true;
    page.dropped[static_cast<size_t>(LinkDropReason::kTooDeep)] = guard.removed_links;
  }
  GumboOutput* output = gumbo_parse_with_options(&gopts, html.data(), html.size());

  Collected c;
  // The text is at most the page: one allocation, not a doubling series of them.
  if (options_.collect_text) page.text.reserve(html.size());
  const size_t depth = Walk(output->root, &c, options_.collect_text ? &page.text : nullptr);

  page.noindex = c.noindex;
  page.nofollow = c.nofollow;
  page.base = std::string(page_url);
  // RFC 3986 §5.1.1: a base URI embedded in the content, itself resolved against the page URL;
  // an unusable one is ignored (HTML's fallback base URL).
  if (c.base) {
    Result<std::string> base = canonicalizer_->Resolve(page_url, TrimC0(*c.base), encoding);
    if (base.ok() && IsHttpUrl(*base)) page.base = std::move(*base);
  }
  if (c.canonical) {
    Result<std::string> canonical =
        canonicalizer_->Resolve(page.base, TrimC0(*c.canonical), encoding);
    if (canonical.ok() && IsHttpUrl(*canonical)) page.canonical = std::move(*canonical);
  }

  page.links.reserve(c.refs.size());
  auto drop = [&page](LinkDropReason r) { ++page.dropped[static_cast<size_t>(r)]; };
  for (const RawRef& raw : c.refs) {
    std::string_view ref = TrimC0(raw.ref);
    if (ref.empty() || ref[0] == '#') {
      drop(LinkDropReason::kSameDocument);
      continue;
    }
    std::string scheme = SchemeOf(ref);
    if (!scheme.empty() && scheme != "http" && scheme != "https") {
      drop(SchemeDropReason(scheme));
      continue;
    }
    bool nofollow = page.nofollow || (raw.rel & kRelNofollow);
    if (nofollow && options_.obey_nofollow) {
      drop(LinkDropReason::kNofollow);
      continue;
    }
    if (ref.size() > canonicalizer_->options().max_length) {
      drop(LinkDropReason::kTooLong);
      continue;
    }
    if (page.links.size() >= options_.max_links) {
      drop(LinkDropReason::kTooMany);
      continue;
    }
    Result<std::string> url = canonicalizer_->Resolve(page.base, ref, encoding);
    if (!url.ok() || !IsHttpUrl(*url)) {
      drop(LinkDropReason::kUnresolvable);
      continue;
    }
    page.links.push_back({std::move(*url), raw.source, raw.rel, nofollow});
  }
  if (depth > kFlattenDepth) FlattenForDestroy(output->root);
  gumbo_destroy_output(&gopts, output);
  return page;
}

}  // namespace urlsieve
