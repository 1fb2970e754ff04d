#include "tools/site_server/site.h"

namespace urlsieve::site {

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

SiteResponse HtmlPage(const std::string& title, const std::string& body_html,
                      const std::string& head_html) {
  SiteResponse r;
  r.body = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
           HtmlEscape(title) + "</title>\n" + head_html + "</head>\n<body>\n<h1>" +
           HtmlEscape(title) + "</h1>\n" + body_html + "\n</body>\n</html>\n";
  return r;
}

SiteResponse Redirect(int status, const std::string& location) {
  SiteResponse r = HtmlPage("Moved", "<p>Moved to <a href=\"" + HtmlEscape(location) + "\">" +
                                         HtmlEscape(location) + "</a>.</p>");
  r.status = status;
  r.headers.emplace_back("Location", location);
  return r;
}

SiteResponse PlainStatus(int status, const std::string& text) {
  SiteResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = text + "\n";
  return r;
}

}  // namespace urlsieve::site
