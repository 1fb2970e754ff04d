// `urlsieve canon`: canonical keys for URLs read one per line from stdin.
//
// Exactly one output line per input line (the key, or "error: <reason>"), so the output can be
// pasted beside the input. Streaming with constant memory. With --base, each line is a reference
// resolved against it first; --encoding names the encoding of the document the references come
// from, whose queries a browser sends in that encoding (docs/features/canonicalization.md, "Queries
// in the document's encoding").
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "base/encoding/text_encoding.h"
#include "crawler/cli/commands.h"
#include "crawler/cli/line_excerpt.h"
#include "crawler/cli/line_io.h"
#include "crawler/cli/option_flags.h"
#include "url/url_canonicalizer.h"

namespace urlsieve::cli {
namespace {

struct CanonFlags {
  std::string base;
  bool has_encoding = false;
  std::string encoding;  // a label (Encoding Standard §4.2); none: UTF-8
  CanonicalizeOptions options;
};

int RunCanon(const CanonFlags& flags) {
  const TextEncoding* encoding = nullptr;
  if (flags.has_encoding) {
    encoding = EncodingForLabel(flags.encoding);
    if (encoding == nullptr) {
      fprintf(stderr, "urlsieve canon: unknown --encoding label '%s'\n", flags.encoding.c_str());
      return kExitUsage;
    }
  }
  const UrlCanonicalizer canonicalizer(flags.options);
  const bool has_base = !flags.base.empty();
  if (has_base) {
    const Result<CanonicalUrl> base = canonicalizer.Canonicalize(flags.base);
    if (!base.ok()) {
      fprintf(stderr, "urlsieve canon: invalid --base: %s\n", base.status().message().c_str());
      return kExitUsage;
    }
  }
  LineReader reader(STDIN_FILENO);
  LineWriter writer(STDOUT_FILENO);
  std::string key;
  std::string_view line;
  while (reader.Next(&line)) {
    Status status;
    if (has_base) {
      Result<std::string> absolute = canonicalizer.Resolve(flags.base, line, encoding);
      status = absolute.ok() ? canonicalizer.CanonicalizeTo(*absolute, &key) : absolute.status();
    } else {
      status = canonicalizer.CanonicalizeTo(line, &key);
    }
    if (status.ok()) {
      writer.WriteLine(key);
    } else {
      writer.Write("error: ");
      writer.WriteLine(EscapedExcerpt(status.message()));  // one line, whatever the reason holds
    }
    if (!writer.ok()) break;
  }
  const bool flushed = writer.Flush();
  if (reader.error()) {
    fprintf(stderr, "urlsieve canon: error reading stdin\n");
    return kExitFailure;
  }
  if (!flushed) {
    fprintf(stderr, "urlsieve canon: error writing stdout\n");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void AddCanonCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CanonFlags>();
  CLI::App* cmd = app.add_subcommand(
      "canon", "Print the canonical key of each URL read from stdin, one line per input line");
  CLI::Option* base =
      cmd->add_option("--base", flags->base, "Resolve each line against this absolute URL first");
  CLI::Option* encoding =
      cmd->add_option("--encoding", flags->encoding,
                      "With --base: the lines come from a document in this encoding (a label: "
                      "gbk, shift_jis, latin1...); their queries are encoded in it, as a browser "
                      "does")
          ->needs(base);
  AddCanonicalizeRuleFlags(cmd, &flags->options);
  cmd->add_option("--max-length", flags->options.max_length,
                  "Reject URLs longer than this many bytes")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30));
  cmd->callback([flags, encoding, exit_code] {
    flags->has_encoding = encoding->count() > 0;
    *exit_code = RunCanon(*flags);
  });
}

}  // namespace urlsieve::cli
