#!/usr/bin/env python3
"""Fails when the code or the docs cite a document, or a section of one, that does not exist.

A citation is a path under docs/ ending in .md, optionally followed by a quoted section title:

    // Each key is tested once (docs/architecture.md, "Invariants").
    # (docs/formats/state-directory.md "Identity and generation")

The comma is optional, and the path may sit in backticks. Inside comments a citation may wrap:
the line break and the next line's comment marker (//, #, *, --, or only indentation) count as
one space, so a section title, or a path after one of its slashes, may continue on the next
line. A later quoted title in the same citation ("...", "Generations" and "Forgetting") is not
checked; only the first one is.

A citation fails when the cited file is missing, or when none of its headings (ATX headings,
"#" to "######", outside code fences) has the quoted text, compared case-insensitively, with
backticks removed and white space collapsed. In Markdown files, relative links
([text](../formats/outputs.md#outputs)) are checked as well: the target must exist and, for a
.md target with an anchor, one of its headings must have that anchor (GitHub's slugs).

Scanned: *.cc *.h *.c *.py *.sh *.lua *.md *.toml *.cmake and CMakeLists.txt under the root,
except .git and build directories (build, build-*, python/build).

Exit status: 0 when every citation resolves, 1 otherwise (each failure is printed as
file:line: message), 2 on a usage error.

  tools/check_doc_refs.py [--root DIR] [--verbose] [--names]

--names also warns (without failing) about backticked file names in README.md and docs/ that
exist nowhere in the tree, by path or by base name.
"""

import argparse
import bisect
import os
import re
import sys

SUFFIXES = (".cc", ".h", ".c", ".py", ".sh", ".lua", ".md", ".toml", ".cmake")
NAMES = ("CMakeLists.txt",)
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv"}

# A line break plus the next line's comment marker and indentation: one space.
CONTINUATION = re.compile(r"\n[ \t]*(?:///?|#+|\*(?!/)|--)?[ \t]*")
# docs/<path>.md, optional closing backtick, optional comma, optional "Section".
CITATION = re.compile(
    r"(?<![\w/.-])docs/ ?(?P<path>(?:[\w.-]+/ ?)*[\w.-]+\.md)`?"
    r"(?:,? ?\"(?P<section>[^\"]{1,300})\")?")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
NAME = re.compile(r"`([\w./-]+\.(?:h|cc|c|py|sh|lua|toml|cmake))`")


def is_skipped_dir(root, path, name):
    if name in SKIP_DIRS or name == "build" or name.startswith("build-"):
        return True
    return os.path.relpath(os.path.join(path, name), root) == os.path.join("python", "build")


def iter_files(root):
    """Yields the scanned files under root, sorted, as paths relative to root."""
    for path, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not is_skipped_dir(root, path, d))
        for name in sorted(files):
            if name.endswith(SUFFIXES) or name in NAMES:
                yield os.path.relpath(os.path.join(path, name), root)


class Flat:
    """A text with line continuations folded to single spaces, mapped back to the original."""

    def __init__(self, text):
        self.text = text
        parts, origin = [], []  # origin[i]: where parts[i] starts in the original
        at = 0
        for m in CONTINUATION.finditer(text):
            parts.append(text[at:m.start()])
            origin.append(at)
            parts.append(" ")
            origin.append(m.start())
            at = m.end()
        parts.append(text[at:])
        origin.append(at)
        self.flat = "".join(parts)
        # For each part: its start in flat, its start in the original, whether it is a fold.
        self._flat_starts, self._orig_starts, self._folds = [], [], []
        position = 0
        for i, part in enumerate(parts):
            self._flat_starts.append(position)
            self._orig_starts.append(origin[i])
            self._folds.append(i % 2 == 1)
            position += len(part)

    def original(self, flat_index):
        """The original index of the character at flat_index (a fold maps to its newline)."""
        i = bisect.bisect_right(self._flat_starts, flat_index) - 1
        if self._folds[i]:
            return self._orig_starts[i]
        return self._orig_starts[i] + (flat_index - self._flat_starts[i])

    def line_of(self, flat_index):
        return self.text.count("\n", 0, self.original(flat_index)) + 1


class Citation:
    def __init__(self, file, line, path, section, match, flat):
        self.file = file  # relative to the root
        self.line = line
        self.path = path  # relative to docs/, e.g. "formats/outputs.md"
        self.section = section  # None when only the file is cited
        self.match = match  # the match on flat.flat
        self.flat = flat


def read_text(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def citations_in(root, rel):
    """The citations of one file, in order."""
    flat = Flat(read_text(os.path.join(root, rel)))
    found = []
    for m in CITATION.finditer(flat.flat):
        path = m.group("path").replace(" ", "")
        section = m.group("section")
        if section is not None:
            section = " ".join(section.split())
        found.append(Citation(rel, flat.line_of(m.start()), path, section, m, flat))
    return found


def normalize(title):
    return " ".join(title.replace("`", "").split()).casefold()


def headings_of(path):
    """The ATX heading texts of a Markdown file, outside fenced code blocks."""
    titles, fence = [], None
    for line in read_text(path).split("\n"):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            h = HEADING.match(line)
            if h:
                titles.append(h.group(2))
    return titles


def slug(title, seen):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    base = re.sub(r"[^\w\- ]", "", title.replace("`", "").strip().lower()).replace(" ", "-")
    n = seen.get(base, 0)
    seen[base] = n + 1
    return base if n == 0 else f"{base}-{n}"


class Checker:
    def __init__(self, root):
        self.root = root
        self._headings = {}

    def headings(self, path):
        if path not in self._headings:
            self._headings[path] = headings_of(path)
        return self._headings[path]

    def check_citation(self, c):
        target = os.path.join(self.root, "docs", c.path)
        cited = f"docs/{c.path}" + (f', "{c.section}"' if c.section else "")
        if not os.path.isfile(target):
            return f"{c.file}:{c.line}: cites {cited}: no such file"
        if c.section is not None:
            wanted = normalize(c.section)
            if not any(normalize(h) == wanted for h in self.headings(target)):
                return f'{c.file}:{c.line}: cites {cited}: no heading "{c.section}" in docs/{c.path}'
        return None

    def check_links(self, rel):
        """Relative links of a Markdown file: the target exists, and so does a .md anchor."""
        errors = []
        text = read_text(os.path.join(self.root, rel))
        here = os.path.dirname(os.path.join(self.root, rel))
        fence = None
        for number, line in enumerate(text.split("\n"), 1):
            m = FENCE.match(line)
            if m:
                fence = m.group(1) if fence is None else (None if m.group(1) == fence else fence)
                continue
            if fence is not None:
                continue
            for link in LINK.finditer(line):
                target = link.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                    continue
                file, _, anchor = target.partition("#")
                path = os.path.normpath(os.path.join(here, file)) if file else os.path.join(
                    self.root, rel)
                if not os.path.exists(path):
                    errors.append(f"{rel}:{number}: links {target}: no such file")
                    continue
                if anchor and path.endswith(".md"):
                    seen = {}
                    anchors = {slug(h, seen) for h in self.headings(path)}
                    if anchor not in anchors:
                        errors.append(f"{rel}:{number}: links {target}: no heading with that "
                                      f"anchor in {os.path.relpath(path, self.root)}")
        return errors


def check_names(root, files):
    """Backticked file names in README.md and docs/ that exist nowhere in the tree."""
    paths, bases = set(), set()
    for path, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not is_skipped_dir(root, path, d)]
        for name in names:
            rel = os.path.relpath(os.path.join(path, name), root)
            paths.add(rel)
            bases.add(name)
    warnings = []
    for rel in files:
        if not (rel == "README.md" or rel.startswith("docs" + os.sep)):
            continue
        for number, line in enumerate(read_text(os.path.join(root, rel)).split("\n"), 1):
            for m in NAME.finditer(line):
                name = m.group(1)
                if name in paths or os.path.basename(name) in bases:
                    continue
                warnings.append(f"{rel}:{number}: warning: `{name}` is not in the tree")
    return warnings


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))), help="repository root (default: the one this script is in)")
    parser.add_argument("--verbose", "-v", action="store_true", help="list every citation")
    parser.add_argument("--names", action="store_true",
                        help="warn about backticked file names in the docs that do not exist")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "docs")):
        print(f"check_doc_refs: {root} has no docs/ directory", file=sys.stderr)
        return 2

    checker = Checker(root)
    files = list(iter_files(root))
    errors, count, citing = [], 0, set()
    for rel in files:
        for c in citations_in(root, rel):
            count += 1
            citing.add(rel)
            if args.verbose:
                print(f"{c.file}:{c.line}: docs/{c.path}" + (f', "{c.section}"' if c.section else ""))
            error = checker.check_citation(c)
            if error:
                errors.append(error)
        if rel.endswith(".md"):
            errors.extend(checker.check_links(rel))
    for error in errors:
        print(error)
    if args.names:
        for warning in check_names(root, files):
            print(warning)
    print(f"check_doc_refs: {count} citations in {len(citing)} files, {len(errors)} failing",
          file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
