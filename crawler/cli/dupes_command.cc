// `urlsieve dupes FILE.warc[.gz]...`: the exact and near-duplicate groups among the records of
// WARC files written by any crawler (docs/usage/dupes.md; docs/features/content-seen.md,
// "urlsieve dupes"). The files are read one after the other, streaming (WarcReader); the
// fingerprints and groups are DuplicateFinder's.
//
// Output: one JSON line per group with at least one copy, on stdout, exact groups then near ones:
//   {"kind":"exact"|"near","first":{MEMBER},"copies":[{MEMBER,"distance":D},...]}
// MEMBER: "uri", "date", "record_id", "file", "offset" (and "offset_in_member" when not 0,
// "revisit": true for a revisit record). A summary on stderr.
// Exit codes: 0 every file read whole; 3 some file is damaged (truncated, corrupt: reported on
// stderr with its offset; the records before the damage are counted and grouped); 1 a file
// cannot be opened or read, or stdout cannot be written; 2 usage.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crawler/cli/commands.h"
#include "crawler/cli/line_io.h"
#include "crawler/output/warc_reader.h"
#include "crawler/page/duplicate_finder.h"

namespace urlsieve::cli {
namespace {

constexpr int kExitDamaged = 3;

struct DupesFlags {
  std::vector<std::string> files;
  DuplicateFinderOptions finder;
  bool no_near = false;
  uint64_t max_payload = uint64_t{16} << 20;
};

nlohmann::ordered_json MemberJson(const DuplicateMember& m, const std::vector<std::string>& files) {
  nlohmann::ordered_json j = {{"uri", m.uri},
                              {"date", m.date},
                              {"record_id", m.record_id},
                              {"file", files[m.file]},
                              {"offset", m.offset}};
  if (m.offset_in_member != 0) j["offset_in_member"] = m.offset_in_member;
  if (m.revisit) j["revisit"] = true;
  return j;
}

int RunDupes(DupesFlags& flags) {
  flags.finder.near = !flags.no_near;
  DuplicateFinder finder(flags.finder);
  WarcReaderOptions options;
  options.max_payload_bytes = flags.max_payload;
  options.keep_payload = [&finder](const WarcReadRecord& r) { return finder.WantsPayload(r); };
  bool failed = false;
  bool damaged = false;
  uint64_t file_bytes = 0;
  uint64_t warc_bytes = 0;
  for (uint32_t i = 0; i < flags.files.size(); ++i) {
    Result<std::unique_ptr<WarcReader>> reader = WarcReader::Open(flags.files[i], options);
    if (!reader.ok()) {
      std::fprintf(stderr, "urlsieve dupes: %s\n", reader.status().message().c_str());
      failed = true;
      continue;
    }
    WarcReadRecord record;
    for (;;) {
      Result<bool> more = (*reader)->Next(&record);
      if (!more.ok()) {
        std::fprintf(stderr, "urlsieve dupes: %s\n", more.status().message().c_str());
        (more.status().code() == StatusCode::kCorruption ? damaged : failed) = true;
        break;
      }
      if (!*more) break;
      finder.Add(i, record);
    }
    file_bytes += (*reader)->file_bytes_read();
    warc_bytes += (*reader)->bytes_read();
  }

  LineWriter out(STDOUT_FILENO);
  for (const DuplicateGroup* g : finder.Groups()) {
    const bool near = g->kind == DuplicateGroup::Kind::kNear;
    nlohmann::ordered_json copies = nlohmann::ordered_json::array();
    for (const DuplicateGroup::Copy& c : g->copies) {
      nlohmann::ordered_json j = MemberJson(finder.member(c.member), flags.files);
      if (near) j["distance"] = c.distance;
      copies.push_back(std::move(j));
    }
    nlohmann::ordered_json line = {{"kind", near ? "near" : "exact"},
                                   {"first", MemberJson(finder.member(g->first), flags.files)},
                                   {"copies", std::move(copies)}};
    out.WriteLine(line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  }
  if (!out.Flush()) {
    std::fprintf(stderr, "urlsieve dupes: cannot write stdout\n");
    failed = true;
  }
  const DuplicateCounts& n = finder.counts();
  std::fprintf(
      stderr,
      "urlsieve dupes: %llu records read (%llu bytes of WARC, %llu of files), %llu "
      "responses, %llu 2xx fingerprinted, %llu HTML pages (%llu SimHashed), %llu "
      "revisits; exact: %llu groups, %llu copies; near: %llu groups, %llu copies\n",
      static_cast<unsigned long long>(n.records), static_cast<unsigned long long>(warc_bytes),
      static_cast<unsigned long long>(file_bytes), static_cast<unsigned long long>(n.responses),
      static_cast<unsigned long long>(n.fingerprinted),
      static_cast<unsigned long long>(n.html_pages), static_cast<unsigned long long>(n.simhashed),
      static_cast<unsigned long long>(n.revisits), static_cast<unsigned long long>(n.exact_groups),
      static_cast<unsigned long long>(n.exact_copies),
      static_cast<unsigned long long>(n.near_groups),
      static_cast<unsigned long long>(n.near_copies));
  if (failed) return kExitFailure;
  return damaged ? kExitDamaged : kExitOk;
}

}  // namespace

void AddDupesCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<DupesFlags>();
  CLI::App* cmd = app.add_subcommand(
      "dupes",
      "Print the exact and near-duplicate groups among the records of WARC files (any crawler's; "
      "gzip'd or plain) as JSON lines");
  cmd->add_option("files", flags->files, "WARC files (.warc, .warc.gz)")->required();
  cmd->add_option("--distance", flags->finder.max_distance,
                  "Near duplicates: SimHash Hamming distance at most this")
      ->check(CLI::Range(0, 7));
  cmd->add_flag("--no-near", flags->no_near, "Only exact duplicates (no SimHash)");
  cmd->add_option("--min-words", flags->finder.min_words,
                  "Pages with fewer words in their visible text get no SimHash")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--max-payload", flags->max_payload,
                  "Bytes of an HTML payload kept (decoded) for its SimHash; a larger page gets "
                  "none (its digest covers all of it)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  cmd->add_option("--default-encoding", flags->finder.default_encoding,
                  "Encoding of pages that declare none (as crawl's --default-encoding)");
  cmd->callback([flags, exit_code] { *exit_code = RunDupes(*flags); });
}

}  // namespace urlsieve::cli
