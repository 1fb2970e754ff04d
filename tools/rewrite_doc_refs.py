#!/usr/bin/env python3
"""Rewrites citations of the former single design document to the documents that replaced it.

The design document that docs/ used to be (design.md) was split into docs/architecture.md,
docs/features/, docs/formats/, docs/usage/, docs/decisions.md and docs/embedding.md.
docs/design-map.tsv says where each of its sections went:

    <old section title> TAB <new path under docs/> TAB <new section heading>

This script finds every citation of the old document in the tree (the files and the citation
syntax of tools/check_doc_refs.py: the path, an optional comma, an optional quoted section, which
may wrap onto the next comment line) and rewrites it to the new path and heading. Only the first
quoted title of a citation is mapped; a later one ("...", "Generations") is left as written. A
citation without a section takes the new path of the nearest citation before it in the same
file (else docs/architecture.md).

A rewritten line that passes 100 columns is wrapped when it is a comment (a comment line, a
trailing // comment, Python docstring prose): the words past the limit move to the start of the
next line when it continues the same comment, else onto a new line with the same comment prefix
(a trailing comment continues in the same column). Other long lines are left, and listed.

  tools/rewrite_doc_refs.py [--root DIR] [--map FILE] [--write] [--verbose]

Without --write it changes nothing and prints what it would do: the citations per file, the
total, and any citation whose section the map does not know (then it exits 1). With --write it
rewrites the files (none, if any citation is unmapped). Exit 0 when every citation maps.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_doc_refs  # noqa: E402  (the scanner and the citation syntax)

OLD = "design" + ".md"  # spelled apart so that this file cites nothing
LIMIT = 100
COMMENT = re.compile(r"^([ \t]*(?://+|#+|\*|/\*+|--)[ \t]?)")


def read_map(path):
    table = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 3 or not all(fields):
                raise SystemExit(f"{path}:{number}: expected 3 tab-separated fields")
            table[check_doc_refs.normalize(fields[0])] = (fields[1], fields[2])
    return table


def plan(root, rel, table):
    """The edits of one file, as (start, end, replacement) on its original text, and problems."""
    edits, unmapped, rewrites = [], [], []
    last_path = None
    for c in check_doc_refs.citations_in(root, rel):
        if c.path != OLD:
            continue
        flat, m = c.flat, c.match
        if c.section is None:
            new_path, new_heading = last_path or "architecture.md", None
        else:
            entry = table.get(check_doc_refs.normalize(c.section))
            if entry is None:
                unmapped.append(f'{rel}:{c.line}: no line for "{c.section}" in the map')
                continue
            new_path, new_heading = entry
            last_path = new_path
        start = flat.original(m.start("path"))
        end = flat.original(m.end("path") - 1) + 1
        assert flat.text[start:end] == OLD, (rel, c.line, flat.text[start:end])
        edits.append((start, end, new_path))
        if new_heading is not None and (check_doc_refs.normalize(new_heading)
                                        != check_doc_refs.normalize(c.section)):
            s = flat.original(m.start("section"))
            e = flat.original(m.end("section") - 1) + 1
            edits.append((s, e, new_heading))
        old = f"docs/{OLD}" + (f', "{c.section}"' if c.section else "")
        new = f"docs/{new_path}" + (f', "{new_heading or c.section}"' if c.section else "")
        rewrites.append(f"{rel}:{c.line}: {old} -> {new}")
    return edits, unmapped, rewrites


def continuation(lines, i, ext):
    """How lines[i] continues: (start of its text, the next line's prefix), or None."""
    line = lines[i]
    m = COMMENT.match(line)
    if m:
        prefix = m.group(1)
        if prefix.lstrip().startswith("/*"):
            return len(prefix), prefix[:prefix.index("/*")] + " * "
        return len(prefix), prefix
    trailing = line.find("  //")
    if ext in (".cc", ".h", ".c") and trailing >= 0:  # a trailing comment: continue under it
        column = trailing + 2
        return column + 3, " " * column + "// "
    if ext == ".py":  # docstring prose: continue at the line's own indentation
        indent = line[:len(line) - len(line.lstrip())]
        if line.lstrip().startswith("- "):
            indent += "  "  # the text of a list item
        return len(line) - len(line.lstrip()), indent
    return None


def wrap(lines, i, ext):
    """Wraps lines[i] (and what it pushes into the next lines) at LIMIT columns, in place."""
    while len(lines[i]) > LIMIT:
        how = continuation(lines, i, ext)
        if how is None:
            return False
        text_start, prefix = how
        cut = lines[i].rfind(" ", text_start + 1, LIMIT + 1)
        if cut >= 0 and lines[i][cut + 1:].strip() == "*/":  # move a word with the comment's end
            cut = lines[i].rfind(" ", text_start + 1, cut)
        if cut < 0:
            return False
        head, tail = lines[i][:cut].rstrip(), lines[i][cut + 1:].strip()
        lines[i] = head
        nxt = i + 1
        if nxt < len(lines) and lines[nxt].startswith(prefix) and lines[nxt].strip():
            rest = lines[nxt][len(prefix):]
            if rest and not rest[0].isspace() and not re.match(r"^(- |\d+\. |\*/|\"\"\"$)", rest):
                lines[nxt] = prefix + tail + " " + rest
                i = nxt
                continue
        lines.insert(nxt, prefix + tail)
        i = nxt
    return True


def apply(text, edits):
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def rewrite(text, edits, ext):
    """The new text, and the numbers (1-based, in the new text) of lines left over LIMIT."""
    touched = sorted({text.count("\n", 0, start) for start, _, _ in edits})
    new = apply(text, edits)
    lines = new.split("\n")
    long_lines = []
    shift = 0  # lines inserted so far above the next touched line
    for index in touched:
        i = index + shift
        before = len(lines)
        if not wrap(lines, i, ext):
            long_lines.append(i + 1)
        shift += len(lines) - before
    return "\n".join(lines), long_lines


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--root", default=here, help="repository root (default: this one)")
    parser.add_argument("--map", help="the map (default: ROOT/docs/design-map.tsv)")
    parser.add_argument("--write", action="store_true", help="rewrite the files")
    parser.add_argument("--verbose", "-v", action="store_true", help="list every rewrite")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    table = read_map(args.map or os.path.join(root, "docs", "design-map.tsv"))

    total, files, unmapped, changes, long_lines = 0, 0, [], {}, []
    for rel in check_doc_refs.iter_files(root):
        edits, missing, rewrites = plan(root, rel, table)
        unmapped.extend(missing)
        if not edits:
            continue
        path = os.path.join(root, rel)
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        new, too_long = rewrite(text, edits, os.path.splitext(rel)[1])
        changes[path] = new
        long_lines.extend(f"{rel}:{n}: left over {LIMIT} columns" for n in too_long)
        total += len(rewrites)
        files += 1
        print(f"{rel}: {len(rewrites)}")
        if args.verbose:
            for line in rewrites:
                print("  " + line)
    for line in unmapped + long_lines:
        print(line)
    mode = "rewritten" if args.write and not unmapped else "to rewrite (dry run)"
    print(f"rewrite_doc_refs: {total} citations in {files} files {mode}; {len(unmapped)} unmapped; "
          f"{len(long_lines)} lines left over {LIMIT} columns", file=sys.stderr)
    if unmapped:
        return 1
    if args.write:
        for path, text in changes.items():
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
