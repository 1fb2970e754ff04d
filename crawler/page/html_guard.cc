#include "crawler/page/html_guard.h"

#include <cstring>
#include <vector>

#include "base/strings.h"

namespace urlsieve {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

bool NameIs(std::string_view name, std::string_view lower) {
  if (name.size() != lower.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (AsciiLower(name[i]) != lower[i]) return false;
  }
  return true;
}

bool NameIn(std::string_view name, std::initializer_list<std::string_view> set) {
  for (std::string_view s : set) {
    if (NameIs(name, s)) return true;
  }
  return false;
}

// Elements that never hold children (HTML §13.1.2 void elements) or that the tree builder closes
// implicitly when a sibling starts, so a run of them does not nest.
bool DoesNotNest(std::string_view name) {
  return NameIn(name,
                {"area",  "base",     "br",      "col",    "embed", "hr",   "img",   "input",
                 "link",  "meta",     "param",   "source", "track", "wbr",  "p",     "li",
                 "dt",    "dd",       "option",  "tr",     "td",    "th",   "thead", "tbody",
                 "tfoot", "colgroup", "caption", "html",   "head",  "body", "frame", "keygen"});
}

// The formatting elements of HTML §13.2.4.3, whose misnested end tags run the adoption agency.
bool IsFormatting(std::string_view name) {
  return NameIn(name, {"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike",
                       "strong", "tt", "u"});
}

// The HTML elements links come from. None of them nests (an <a> closes an open <a>, the others are
// void or raw text), so they are never removed. In foreign content only <a> is a link, and there
// it does nest.
bool CarriesLinks(std::string_view name) {
  return NameIn(name, {"a", "area", "frame", "iframe", "link", "meta", "base"});
}

bool IsForeignRoot(std::string_view name) { return NameIs(name, "svg") || NameIs(name, "math"); }

// Elements whose content the tokenizer reads as text up to the matching end tag.
bool IsRawText(std::string_view name) {
  return NameIn(name,
                {"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"});
}

// The attributes the link extractor reads; a bit each.
int NeededAttributeBit(std::string_view name) {
  static constexpr std::string_view kNames[] = {"href", "src",     "rel",
                                                "name", "content", "http-equiv"};
  for (int i = 0; i < 6; ++i) {
    if (NameIs(name, kNames[i])) return 1 << i;
  }
  return 0;
}

class Guard {
 public:
  Guard(std::string_view html, const HtmlGuardLimits& limits, std::string* out)
      : s_(html), n_(html.size()), limits_(limits), out_(out) {}

  HtmlGuardResult Run() {
    size_t i = 0;
    while (i < n_) {
      const void* lt = std::memchr(s_.data() + i, '<', n_ - i);
      if (lt == nullptr) break;
      i = static_cast<size_t>(static_cast<const char*>(lt) - s_.data());
      if (i + 1 >= n_) break;
      char c = s_[i + 1];
      if (c == '!') {
        i = SkipMarkup(i);
      } else if (c == '/' && i + 2 < n_ && IsAlpha(s_[i + 2])) {
        i = EndTag(i);
      } else if (IsAlpha(c)) {
        i = StartTag(i);
      } else {
        ++i;
      }
    }
    return result_;
  }

 private:
  // "<!-- ... -->", "<!DOCTYPE ...>", "<![CDATA[...]]>": skipped as a whole.
  size_t SkipMarkup(size_t i) {
    if (s_.substr(i, 4) == "<!--") {
      size_t end = s_.find("-->", i + 4);
      return end == std::string_view::npos ? n_ : end + 3;
    }
    size_t end = s_.find('>', i);
    return end == std::string_view::npos ? n_ : end + 1;
  }

  size_t NameEnd(size_t j) const {
    while (j < n_ && !IsSpace(s_[j]) && s_[j] != '/' && s_[j] != '>') ++j;
    return j;
  }

  size_t EndTag(size_t i) {
    size_t name_end = NameEnd(i + 2);
    std::string_view name = s_.substr(i + 2, name_end - (i + 2));
    // Pops like the tree builder's generic end tag steps, but never more than it would: an end tag
    // with no open element of its name is ignored (so "<div></span>" keeps growing the estimate),
    // and a misnested formatting end tag ("<b><div></b>", which the adoption agency algorithm
    // resolves without shrinking the stack) pops nothing. Overestimating is safe; the guard only
    // flattens markup the link extractor does not read.
    for (size_t k = open_.size(); k-- > 0;) {
      if (NameIs(name, open_[k])) {
        if (!IsFormatting(name) || k + 1 == open_.size()) PopTo(k);
        break;
      }
    }
    size_t end = s_.find('>', name_end);
    return end == std::string_view::npos ? n_ : end + 1;
  }

  size_t StartTag(size_t i) {
    size_t name_end = NameEnd(i + 1);
    std::string_view name = s_.substr(i + 1, name_end - (i + 1));
    // Attributes, per the tokenizer's attribute states (quoted values may hold '>').
    size_t j = name_end;
    int count = 0;
    int needed_seen = 0;
    while (true) {
      while (j < n_ && (IsSpace(s_[j]) || s_[j] == '/')) ++j;
      if (j >= n_ || s_[j] == '>') break;
      size_t attr_begin = j;
      ++j;  // an attribute name may start with '='
      while (j < n_ && !IsSpace(s_[j]) && s_[j] != '/' && s_[j] != '>' && s_[j] != '=') ++j;
      std::string_view attr_name = s_.substr(attr_begin, j - attr_begin);
      size_t k = j;
      while (k < n_ && IsSpace(s_[k])) ++k;
      if (k < n_ && s_[k] == '=') {
        ++k;
        while (k < n_ && IsSpace(s_[k])) ++k;
        if (k < n_ && (s_[k] == '"' || s_[k] == '\'')) {
          size_t close = s_.find(s_[k], k + 1);
          k = close == std::string_view::npos ? n_ : close + 1;
        } else {
          while (k < n_ && !IsSpace(s_[k]) && s_[k] != '>') ++k;
        }
        j = k;
      }
      ++count;
      int bit = NeededAttributeBit(attr_name);
      bool keep = bit != 0 && !(needed_seen & bit);
      needed_seen |= bit;
      if (count > limits_.max_attributes && !keep) Blank(attr_begin, j);
    }
    size_t tag_end = j >= n_ ? n_ : j + 1;
    const bool self_closing = tag_end >= 2 && s_[tag_end - 1] == '>' && s_[tag_end - 2] == '/';
    const size_t depth = open_.size();
    const size_t max_depth = static_cast<size_t>(limits_.max_depth);

    if (foreign_ > 0) {
      // Inside <svg> or <math> every element nests unless written self-closing, and the tokenizer
      // has no raw text or plaintext states. An <a> is a link: kept until twice the limit, then
      // removed and counted, never silently.
      if (self_closing) return tag_end;
      bool link = NameIs(name, "a");
      if (depth >= (link ? 2 * max_depth : max_depth)) {
        Blank(i, tag_end);
        if (link) ++result_.removed_links;
      } else {
        Push(name);
      }
      return tag_end;
    }
    if (NameIs(name, "plaintext")) return n_;  // everything after it is text
    if (IsRawText(name)) return SkipRawText(name, tag_end);
    if (CarriesLinks(name) || DoesNotNest(name)) return tag_end;
    if (depth >= max_depth) {
      Blank(i, tag_end);
    } else {
      Push(name);
    }
    return tag_end;
  }

  void Push(std::string_view name) {
    open_.push_back(name);
    if (IsForeignRoot(name)) ++foreign_;
  }
  void PopTo(size_t k) {
    for (size_t m = k; m < open_.size(); ++m) {
      if (IsForeignRoot(open_[m])) --foreign_;
    }
    open_.resize(k);
  }

  // After <script> and the like, the content up to the matching end tag is text, not markup.
  size_t SkipRawText(std::string_view name, size_t from) {
    const std::string lower = AsciiLowercase(name);
    size_t j = from;
    while (j < n_) {
      const void* lt = std::memchr(s_.data() + j, '<', n_ - j);
      if (lt == nullptr) return n_;
      j = static_cast<size_t>(static_cast<const char*>(lt) - s_.data());
      if (j + 2 + name.size() <= n_ && s_[j + 1] == '/' &&
          NameIs(s_.substr(j + 2, name.size()), lower)) {
        return j;  // the end tag itself goes through the main loop
      }
      ++j;
    }
    return n_;
  }

  void Blank(size_t begin, size_t end) {
    if (!result_.changed) {
      out_->assign(s_.data(), n_);
      result_.changed = true;
    }
    std::memset(out_->data() + begin, ' ', end - begin);
  }

  const std::string_view s_;
  const size_t n_;
  const HtmlGuardLimits limits_;
  std::string* const out_;
  std::vector<std::string_view> open_;  // the estimated stack of open elements
  int foreign_ = 0;                     // <svg> and <math> elements in open_
  HtmlGuardResult result_;
};

}  // namespace

HtmlGuardResult GuardHtml(std::string_view html, const HtmlGuardLimits& limits, std::string* out) {
  return Guard(html, limits, out).Run();
}

}  // namespace urlsieve
