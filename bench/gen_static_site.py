#!/usr/bin/python3
"""Writes a deterministic static site for the crawl benchmark (bench/crawl_vs_peers.sh).

    gen_static_site.py OUT_DIR [--pages N] [--seed S]

Page 0 is /index.html, pages 1..10 are the section landings /secK/index.html, the rest live in
nested directories (/secK/subJ/pI.html, every third one a level deeper in /secK/subJ/dM/).
Each page is 10-60 KB of paragraphs with 50-100 inline links to other pages of the site: the
shared nav (home + sections), its children in an 8-ary tree over the page numbers (so every page
is reachable from /index.html, within about log8(N) hops), and random pages. Links are written
root-relative, document-relative ("../subJ/pI.html") or with a fragment, as real sites mix them,
but always name an existing page, so every distinct URL a crawler requests is one page.
Prints the number of pages and bytes written.
"""

import argparse
import os
import posixpath
import random

SECTIONS = 10
FANOUT = 8
WORDS = ("crawl frontier politeness queue robots canonical fragment anchor header parser token "
         "index archive section request response latency budget filter bloom hash digest host "
         "origin scheme path query table figure record column storage journal static dynamic "
         "network socket buffer stream thread worker signal resume snapshot the of and a to in "
         "is for on with as by at from that this").split()


NAV_LABELS = ["Home"] + [f"Section {k}" for k in range(SECTIONS)]


def page_path(i):
    if i == 0:
        return "/index.html"
    if i <= SECTIONS:
        return f"/sec{i - 1}/index.html"
    section, sub = i % SECTIONS, (i // SECTIONS) % 8
    if i % 3 == 0:
        return f"/sec{section}/sub{sub}/d{(i // 80) % 4}/p{i}.html"
    return f"/sec{section}/sub{sub}/p{i}.html"


def href(rng, src, dst):
    """One spelling of the link from page path src to page path dst."""
    r = rng.random()
    if r < 0.6:
        return dst
    if r < 0.9:
        return posixpath.relpath(dst, posixpath.dirname(src))
    return dst + "#s" + str(rng.randrange(5))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--pages", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    n = args.pages
    if n < SECTIONS + 1:
        ap.error(f"--pages must be at least {SECTIONS + 1}")

    rng = random.Random(args.seed)
    filler = " ".join(rng.choice(WORDS) for _ in range(200_000))
    paths = [page_path(i) for i in range(n)]
    nav_targets = list(range(SECTIONS + 1))
    total = 0
    for i, src in enumerate(paths):
        size = rng.randint(10_000, 60_000)
        n_links = rng.randint(50, 100)
        children = [c for c in range(FANOUT * i + 1, FANOUT * i + FANOUT + 1) if c < n]
        body_targets = children + [rng.randrange(n)
                                   for _ in range(n_links - len(nav_targets) - len(children))]
        rng.shuffle(body_targets)

        nav = "".join(f'<li><a href="{href(rng, src, paths[t])}">{NAV_LABELS[t]}</a></li>'
                      for t in nav_targets)
        head = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>Page {i}</title></head>\n"
                f"<body><header><nav><ul>{nav}</ul></nav></header>\n<main><h1>Page {i}</h1>\n")
        tail = ("</main>\n<footer><p>Generated for the urlsieve crawl benchmark.</p></footer>"
                "</body></html>\n")
        budget = max(size - len(head) - len(tail), 0)
        per_link = budget // (len(body_targets) + 1)
        parts = [head]
        for t in body_targets:
            start = rng.randrange(len(filler) - per_link - 1)
            text = filler[start:start + max(per_link - 60, 0)]
            parts.append(f'<p>{text} <a href="{href(rng, src, paths[t])}">page {t}</a>.</p>\n')
        parts.append(tail)
        html = "".join(parts)
        file_path = os.path.join(args.out_dir, src.lstrip("/"))
        os.makedirs(os.path.dirname(file_path), exist_ok=True)
        with open(file_path, "w", encoding="ascii") as f:
            f.write(html)
        total += len(html)
    print(f"{n} pages, {total} bytes")


if __name__ == "__main__":
    main()
