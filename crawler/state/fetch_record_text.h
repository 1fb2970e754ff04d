// The text form of a FetchRecord kept outside the crawl's state.db: a crawl cluster keeps each
// partition's records in Redis (docs/features/cluster.md, "Re-crawl"), so that they travel with
// the partition to its next owner. The URL is the key the text is stored under; the text is
//
//   <fetch_time> <interval_s> <status> <depth>\n<etag>\n<last_modified>\n<payload_digest>\n
//   <parent>\n<WARC record id>\n<WARC date>[\n<WARC target URI>]
//
// The target URI is there only when it is not the URL: an exact duplicate's record refers to its
// first copy's capture (docs/features/content-seen.md, "In the crawl").
//
// The four numbers come first so that a Redis Function can decide whether the record is due
// without reading the rest (crawler/cluster/cluster_function.lua, the re-crawl scan). Validators
// never hold a line break (curl splits header lines on them); a record that would is stored
// without that validator, as one over kMaxValidatorBytes is.
//
// Thread-safety: pure functions.
#ifndef URLSIEVE_CRAWLER_STATE_FETCH_RECORD_TEXT_H_
#define URLSIEVE_CRAWLER_STATE_FETCH_RECORD_TEXT_H_

#include <optional>
#include <string>
#include <string_view>

#include "crawler/state/fetch_record.h"

namespace urlsieve {

std::string EncodeFetchRecord(const FetchRecord& record);
// nullopt when `text` is not a record in this form. `url` becomes the record's (and its WARC
// record's target URI).
std::optional<FetchRecord> DecodeFetchRecord(std::string_view url, std::string_view text);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_FETCH_RECORD_TEXT_H_
