// GuardHtml: a linear pre-pass that keeps gumbo out of its quadratic corners.
//
// gumbo 0.10 follows the HTML5 tree construction algorithm literally, and several of its steps walk
// the whole stack of open elements, the list of active formatting elements or the attributes of
// a tag. Hostile pages make those unbounded: 40,000 nested <div>s (200 KB) take 8 s to parse,
// 10,000 distinct <b id=N> take 2.3 s, 40,000 attributes on one tag take 10 s, growing
// quadratically. The guard scans the bytes once, estimates the element nesting depth the way the
// tree builder would (void elements and implicitly closed ones such as <p>, <li>, <td> do not nest;
// comments and raw text are skipped) and overwrites with spaces:
//  - start tags that would nest deeper than max_depth (Blink similarly caps its DOM depth at 512),
//    except the elements links come from (a, area, frame, iframe, link, meta, base), so no link is
//    lost — the deep part of the tree is flattened instead;
//  - attributes past max_attributes on one tag, except the first href, src, rel, name, content and
//    http-equiv.
// Byte offsets are preserved. Ordinary pages are returned unchanged without a copy.
// Thread-safety: a pure function.
#ifndef URLSIEVE_CRAWLER_HTML_GUARD_H_
#define URLSIEVE_CRAWLER_HTML_GUARD_H_

#include <string>
#include <string_view>

namespace urlsieve {

struct HtmlGuardLimits {
  int max_depth = 256;
  int max_attributes = 64;
};

// Returns false and leaves *out untouched when `html` needs no change; otherwise writes the guarded
// copy to *out and returns true.
bool GuardHtml(std::string_view html, const HtmlGuardLimits& limits, std::string* out);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_HTML_GUARD_H_
