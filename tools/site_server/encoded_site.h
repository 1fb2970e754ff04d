// EncodedSite: a site of pages in many character encodings, served byte for byte from a directory
// that tests/crawler/encoded_site.py writes (docs/features/encodings.md, "Character encodings"),
// for the end-to-end encoding test (tests/crawler/crawl_encoding_test.cc).
//
// The directory holds manifest.tsv, one line per resource:
//   <resource>\t<content type>\t<body file, relative to the directory>
// where resource is what SiteRequest::resource holds for the one request target that reaches it
// (the path percent-decoded, then "?" and the raw query). Each body is sent exactly as stored,
// with exactly that Content-Type (charset or none). Everything else gets a 404: a page linked with
// a non-ASCII path or query exists only under the bytes a browser requests, so a crawler that
// decodes a page in the wrong encoding, or percent-encodes a query in the wrong one, gets a 404.
//
// Thread-safety: thread-safe (immutable once opened).
#ifndef URLSIEVE_TOOLS_SITE_SERVER_ENCODED_SITE_H_
#define URLSIEVE_TOOLS_SITE_SERVER_ENCODED_SITE_H_

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "tools/site_server/site.h"

namespace urlsieve::site {

class EncodedSite : public Site {
 public:
  // Fails, naming the file and line, when manifest.tsv or a body file is missing or malformed.
  static Result<std::unique_ptr<EncodedSite>> Open(const std::filesystem::path& dir);

  SiteResponse Handle(const SiteRequest& request) override;

  size_t size() const { return pages_.size(); }

 private:
  EncodedSite() = default;

  std::map<std::string, SiteResponse> pages_;  // by resource
};

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_ENCODED_SITE_H_
