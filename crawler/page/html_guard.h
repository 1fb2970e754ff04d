// GuardHtml: a linear pre-pass that keeps gumbo out of its quadratic corners and its deep
// recursion.
//
// gumbo 0.10 follows the HTML5 tree construction algorithm literally, and several of its steps walk
// the whole stack of open elements, the list of active formatting elements or the attributes of
// a tag. Hostile pages make those unbounded: 40,000 nested <div>s (200 KB) take 8 s to parse,
// 10,000 distinct <b id=N> take 2.3 s, 40,000 attributes on one tag take 10 s, growing
// quadratically; and gumbo frees its tree recursively, so a few hundred thousand nested elements
// overflow the stack. The guard scans the bytes once, estimates the element nesting depth the way
// the tree builder would (void elements and implicitly closed ones such as <p>, <li>, <td> do not
// nest; comments and raw text are skipped; stray or misnested end tags never lower the estimate)
// and overwrites with spaces:
//  - start tags that would nest deeper than max_depth (Blink similarly caps its DOM depth at 512),
//    except the HTML elements links come from (a, area, frame, iframe, link, meta, base), which
//    never nest: the deep part of the tree is flattened and its links stay;
//  - in <svg>/<math>, where <a> does nest, an <a> past twice max_depth, counted in removed_links
//    so that the loss is reported;
//  - attributes past max_attributes on one tag, except the first href, src, rel, name, content and
//    http-equiv.
// Markup nested past max_depth is hostile by definition; flattening it can change how the tree
// builder treats later misnested markup (it may, e.g., keep links it would have ignored inside a
// flattened <select>), so extraction there is best effort. Byte offsets are preserved. Ordinary
// pages are returned unchanged without a copy.
// Thread-safety: a pure function.
#ifndef URLSIEVE_CRAWLER_PAGE_HTML_GUARD_H_
#define URLSIEVE_CRAWLER_PAGE_HTML_GUARD_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace urlsieve {

struct HtmlGuardLimits {
  int max_depth = 256;
  int max_attributes = 64;
};

struct HtmlGuardResult {
  bool changed = false;        // *out holds the guarded copy
  uint32_t removed_links = 0;  // <a> elements removed (only ever in absurdly deep SVG/MathML)
};

// Leaves *out untouched when `html` needs no change; otherwise writes the guarded copy to *out.
HtmlGuardResult GuardHtml(std::string_view html, const HtmlGuardLimits& limits, std::string* out);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_PAGE_HTML_GUARD_H_
