#!/usr/bin/python3
"""A MediaWiki XML export of generated articles, for `maintenance/importDump.php` (bench/dust.sh
crawls it with Debian's MediaWiki: start_mediawiki in bench/lib.sh). Standard library only.

    gen_wiki_pages.py ARTICLES > pages.xml
    gen_wiki_pages.py --main-page ARTICLES > main.txt   the main page's text

Deterministic (article i's text is seeded with i): ARTICLES articles titled from a word list, each with three sections
of random words (so the page has section-edit links), links to the next article (every article
is reachable from the first, linked from the main page) and to five others, one link to an
article that does not exist (a red link: an edit form). No categories: a category page lists
every article one link away, and a crawl would reach them all before any other link — here,
as on a large wiki, articles are reached through each other. A third of the articles have a
second revision (their history has a diff and an old revision). The main page links to the
first ten articles.
"""

import random
import sys
from xml.sax.saxutils import escape

WORDS = ("river stone maple harbor lantern meadow copper orchard signal canyon ember falcon "
         "glacier hollow island juniper kestrel lagoon marble nectar oasis pebble quartz "
         "raven summit thistle umber valley willow yarrow zephyr amber birch cedar delta "
         "fern grove heron iris jasper kelp lily moss north opal pine quill reed sage "
         "tide vale wren").split()


def title(i):
    rng = random.Random(i)
    return f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} {i}"


def paragraph(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def article(i, n, rng, revision):
    links = {(i + 1) % n} | {rng.randrange(n) for _ in range(5)}
    links.discard(i)
    body = [f"'''{title(i)}''' is article {i} of the bench wiki. {paragraph(rng, 30)}"]
    for s, heading in enumerate(("History", "Description", "See also")):
        body.append(f"== {heading} ==")
        body.append(paragraph(rng, 40 + 10 * s))
        if heading == "See also":
            body.extend(f"* [[{title(j)}]]" for j in sorted(links))
            body.append(f"* [[Missing topic {i}]]")
    if revision == 2:
        body.append(f"Revised: {paragraph(rng, 12)}")
    return "\n\n".join(body)


def page(name, texts):
    """One page's XML: a revision per text, oldest first."""
    revs = "".join(
        "<revision><timestamp>2026-01-0%dT00:00:00Z</timestamp><contributor><username>Admin"
        "</username></contributor><model>wikitext</model><format>text/x-wiki</format>"
        '<text xml:space="preserve">%s</text></revision>' % (r + 1, escape(t))
        for r, t in enumerate(texts))
    return f"<page><title>{escape(name)}</title><ns>0</ns>{revs}</page>\n"


def main_page(n):
    """The main page's text (the install's own main page is newer than any revision imported:
    start_mediawiki saves this one over it)."""
    return f"Welcome to the bench wiki: {n} articles.\n\n" + \
        "\n".join(f"* [[{title(i)}]]" for i in range(min(n, 10)))


def main():
    args = sys.argv[1:]
    main_only = args[:1] == ["--main-page"]
    args = args[main_only:]
    if len(args) != 1 or not args[0].isdigit() or int(args[0]) < 2:
        sys.exit(__doc__)
    n = int(args[0])
    if main_only:
        print(main_page(n))
        return
    out = sys.stdout
    out.write('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" '
              'xml:lang="en">\n')
    for i in range(n):
        revisions = 2 if i % 3 == 0 else 1
        texts = [article(i, n, random.Random(i), r + 1) for r in range(revisions)]
        out.write(page(title(i), texts))
    out.write("</mediawiki>\n")


if __name__ == "__main__":
    main()
