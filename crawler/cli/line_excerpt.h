// EscapedExcerpt: the part of an untrusted input line that a message may quote. Input lines can be
// any size and hold any bytes; echoed raw, a 100 MB line becomes 100 MB of stderr and an ESC byte
// drives the user's terminal. The excerpt is short, one line, and safe to print.
//
// Thread-safety: pure functions.
#ifndef URLSIEVE_CRAWLER_CLI_LINE_EXCERPT_H_
#define URLSIEVE_CRAWLER_CLI_LINE_EXCERPT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace urlsieve::cli {

// `text` with every byte that could act on a terminal or mislead a reader written as \xNN: C0
// controls, DEL, '\', bytes of invalid UTF-8, and the UTF-8 of C1 controls, bidirectional
// controls and line/paragraph separators. Other UTF-8 stays as it is. At most `max_bytes` bytes of
// output (never cutting an escape or a character); when the text had to be cut, "..." and the
// text's length follow: `abc... (10485760 bytes)`.
std::string EscapedExcerpt(std::string_view text, size_t max_bytes = 200);

}  // namespace urlsieve::cli

#endif  // URLSIEVE_CRAWLER_CLI_LINE_EXCERPT_H_
