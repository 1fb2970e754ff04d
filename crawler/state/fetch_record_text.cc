#include "crawler/state/fetch_record_text.h"

#include <charconv>
#include <vector>

namespace urlsieve {
namespace {

constexpr size_t kTextFields = 6;  // after the line of numbers

std::string_view OneLine(const std::string& field) {
  return field.find_first_of("\r\n") == std::string::npos ? std::string_view(field)
                                                          : std::string_view();
}

template <typename Int>
bool ParseNumber(std::string_view* text, char end, Int* value) {
  const size_t stop = text->find(end);
  if (stop == std::string_view::npos || stop == 0) return false;
  const auto [ptr, error] = std::from_chars(text->data(), text->data() + stop, *value);
  if (error != std::errc() || ptr != text->data() + stop) return false;
  text->remove_prefix(stop + 1);
  return true;
}

}  // namespace

std::string EncodeFetchRecord(const FetchRecord& record) {
  std::string text = std::to_string(record.fetch_time);
  text += ' ';
  text += std::to_string(record.interval_s);
  text += ' ';
  text += std::to_string(record.status);
  text += ' ';
  text += std::to_string(record.depth);
  for (const std::string* field : {&record.etag, &record.last_modified, &record.payload_digest,
                                   &record.parent, &record.warc.record_id, &record.warc.date}) {
    text += '\n';
    text += OneLine(*field);
  }
  // An exact duplicate's record refers to its first copy's capture, under another URL.
  if (!record.warc.record_id.empty() && !record.warc.target_uri.empty() &&
      record.warc.target_uri != record.url) {
    text += '\n';
    text += OneLine(record.warc.target_uri);
  }
  return text;
}

std::optional<FetchRecord> DecodeFetchRecord(std::string_view url, std::string_view text) {
  FetchRecord record;
  record.url = std::string(url);
  if (!ParseNumber(&text, ' ', &record.fetch_time) ||
      !ParseNumber(&text, ' ', &record.interval_s) || !ParseNumber(&text, ' ', &record.status) ||
      !ParseNumber(&text, '\n', &record.depth)) {
    return std::nullopt;
  }
  std::vector<std::string_view> lines;
  while (lines.size() + 1 < kTextFields) {
    const size_t end = text.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    lines.push_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  std::string_view target_uri = url;
  if (const size_t end = text.find('\n'); end != std::string_view::npos) {
    target_uri = text.substr(end + 1);
    text = text.substr(0, end);
    if (target_uri.empty() || target_uri.find('\n') != std::string_view::npos) return std::nullopt;
  }
  lines.push_back(text);
  record.etag = std::string(lines[0]);
  record.last_modified = std::string(lines[1]);
  record.payload_digest = std::string(lines[2]);
  record.parent = std::string(lines[3]);
  record.warc.record_id = std::string(lines[4]);
  record.warc.date = std::string(lines[5]);
  if (!record.warc.record_id.empty()) {
    record.warc.target_uri = std::string(target_uri);
    record.warc.payload_digest = record.payload_digest;
  }
  return record;
}

}  // namespace urlsieve
