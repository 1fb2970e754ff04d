#!/usr/bin/env python3
"""A corpus of HTML pages with planted duplicates of known kinds, and its ground truth.

For the content-seen test's quality figures (docs/features/content-seen.md, "Quality"):
bench/content_quality.sh fingerprints every page in order and asks, for each, "is it a
near-duplicate of some earlier page?".

  bench/content_corpus.py OUT_DIR [--distinct N] [--copies N] [--seed S]

Writes OUT_DIR/pages/NNNNN.html and OUT_DIR/truth.tsv (file, kind, index of the page it copies
or -1), in crawl order: every copy comes after the page it copies.

Pages: an article of 200-3000 words (log-uniform) drawn from a vocabulary with Zipf frequencies
(/usr/share/dict/words when present, else generated pseudo-words), split into sentences and
paragraphs, inside one of several site templates (header, nav, sidebar, footer with their own
boilerplate text; half the templates mark them up with <header>/<nav>/<aside>/<footer>, half
with <div class=...>). Every page shows a date, a view counter and a request token, as real pages
do; a script and a style block carry words that must not count.

Kinds (each copy of a random earlier distinct page):
  exact      byte-identical
  date       only the shown date differs
  counter    only the view counter differs
  token      only the request/session token differs (in the text and in a link)
  edit1/3/5/10  1, 3, 5, 10 % of the article's words edited (substituted, inserted or deleted)
  template   the same article (title and body) in another site template
"""
import argparse
import math
import os
import random

KINDS = ["exact", "date", "counter", "token", "edit1", "edit3", "edit5", "edit10", "template"]


def vocabulary(rng, size=30000):
    path = "/usr/share/dict/words"
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            words = sorted({w.strip().lower() for w in f if w.strip().isalpha() and "'" not in w})
        rng.shuffle(words)
        return words[:size], path
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in ["a", "e", "i", "o", "u", "ai", "ou"]]
    words = set()
    while len(words) < size:
        n = rng.choice([1, 1, 2, 2, 2, 3, 3, 4])
        words.add("".join(rng.choice(syllables) for _ in range(n)) + rng.choice(["", "", "n", "s", "t"]))
    words = sorted(words)
    rng.shuffle(words)
    return words, "generated"


class Zipf:
    """Word ranks drawn with probability ~ 1/rank (natural text is roughly Zipf, s = 1)."""

    def __init__(self, words, rng):
        self.words = words
        self.rng = rng
        self.cum = []
        total = 0.0
        for r in range(1, len(words) + 1):
            total += 1.0 / r
            self.cum.append(total)
        self.total = total

    def word(self):
        import bisect
        return self.words[bisect.bisect_left(self.cum, self.rng.random() * self.total)]

    def words_(self, n):
        return [self.word() for _ in range(n)]


def article(z, rng):
    n = int(math.exp(rng.uniform(math.log(200), math.log(3000))))
    return {"title": " ".join(z.words_(rng.randint(3, 9))).capitalize(), "words": z.words_(n)}


def paragraphs(words, rng_seed):
    # Sentence and paragraph breaks depend only on the word count (a seeded rng), so an edited
    # copy keeps the original's layout except where words were inserted or deleted.
    rng = random.Random(rng_seed)
    out, para, sent = [], [], []
    for w in words:
        sent.append(w)
        if len(sent) >= rng.randint(6, 24):
            para.append(" ".join(sent).capitalize() + ".")
            sent = []
            if len(para) >= rng.randint(2, 6):
                out.append(" ".join(para))
                para = []
    if sent:
        para.append(" ".join(sent).capitalize() + ".")
    if para:
        out.append(" ".join(para))
    return out


def make_templates(z, rng, count=8):
    templates = []
    for t in range(count):
        templates.append({
            "semantic": t % 2 == 0,
            "site": " ".join(z.words_(2)).title(),
            "nav": [" ".join(z.words_(rng.randint(1, 3))).title() for _ in range(rng.randint(6, 20))],
            "sidebar": [" ".join(z.words_(rng.randint(3, 8))) for _ in range(rng.randint(3, 8))],
            "footer": " ".join(z.words_(rng.randint(20, 60))),
            "id": t,
        })
    return templates


def render(t, art, date, views, token):
    s = t["semantic"]
    tag = (lambda name, cls: f"<{name}>") if s else (lambda name, cls: f'<div class="{cls}">')
    end = (lambda name: f"</{name}>") if s else (lambda name: "</div>")
    nav = "".join(f'<li><a href="/{i}/{w.lower().replace(" ", "-")}.html">{w}</a></li>'
                  for i, w in enumerate(t["nav"]))
    side = "".join(f'<li><a href="/related/{i}">{w}</a></li>' for i, w in enumerate(t["sidebar"]))
    body = "\n".join(f"<p>{p}</p>" for p in art["paras"])
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{art['title']} - {t['site']}</title>"
        f"<style>.site-{t['id']} {{ font-family: serif; margin: 0 auto }} .nav li {{ display: inline }}</style>"
        "<script>var analytics = {queue: [], track: function (event) { this.queue.push(event) }};"
        f" analytics.track('pageview-{t['id']}');</script></head>\n"
        f"<body class=\"site-{t['id']}\">{tag('header', 'header')}<a href=\"/\">{t['site']}</a>"
        f"{tag('nav', 'nav')}<ul>{nav}</ul>{end('nav')}{end('header')}\n"
        f"<main><article><h1>{art['title']}</h1>"
        f"<p class=\"meta\">Published {date} &middot; {views} views</p>\n{body}\n</article></main>\n"
        f"{tag('aside', 'sidebar')}<h2>Related</h2><ul>{side}</ul>{end('aside')}\n"
        f"{tag('footer', 'footer')}<p>{t['footer']}</p>"
        f"<p>Request {token} &middot; <a href=\"/account?session={token}\">account</a></p>"
        f"{end('footer')}</body></html>\n")


def edit(words, percent, z, rng):
    words = list(words)
    n = max(1, round(len(words) * percent / 100))
    for _ in range(n):
        op = rng.choice(["sub", "ins", "del"])
        i = rng.randrange(len(words))
        if op == "sub":
            words[i] = z.word()
        elif op == "ins":
            words.insert(i, z.word())
        elif len(words) > 1:
            del words[i]
    return words


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--distinct", type=int, default=2000)
    ap.add_argument("--copies", type=int, default=100, help="planted copies per kind")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    words, source = vocabulary(rng)
    z = Zipf(words, rng)
    templates = make_templates(z, rng)

    def new_page():
        art = article(z, rng)
        art["seed"] = rng.getrandbits(32)
        art["paras"] = paragraphs(art["words"], art["seed"])
        return {
            "art": art,
            "template": rng.randrange(len(templates)),
            "date": f"{rng.randint(2015, 2025)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "views": rng.randint(10, 99999),
            "token": "%032x" % rng.getrandbits(128),
        }

    # Crawl order: distinct pages, with each copy placed at a random point after its original.
    order = [("distinct", new_page(), -1) for _ in range(a.distinct)]
    copies = []
    for kind in KINDS:
        for _ in range(a.copies):
            copies.append((kind, rng.randrange(a.distinct)))
    for kind, orig in copies:
        page = dict(order[orig][1])
        art = dict(page["art"])
        if kind == "date":
            old = page["date"]
            while page["date"] == old:
                page["date"] = f"{rng.randint(2015, 2025)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        elif kind == "counter":
            page["views"] = page["views"] + rng.randint(1, 500)
        elif kind == "token":
            page["token"] = "%032x" % rng.getrandbits(128)
        elif kind.startswith("edit"):
            art["words"] = edit(art["words"], int(kind[4:]), z, rng)
            art["paras"] = paragraphs(art["words"], art["seed"])
        elif kind == "template":
            page["template"] = (page["template"] + rng.randrange(1, len(templates))) % len(templates)
        page["art"] = art
        order.append((kind, page, orig))
    # Shuffle, keeping every copy after its original: sort by a random key that is larger for
    # copies than for their originals.
    keys = [rng.random() for _ in range(a.distinct)]
    items = []
    for i, (kind, page, orig) in enumerate(order):
        key = keys[i] if orig < 0 else rng.uniform(keys[orig], 1.0 + 1e-9)
        items.append((key, i, kind, page, orig))
    items.sort()
    position = {i: pos for pos, (_, i, _, _, _) in enumerate(items)}

    os.makedirs(os.path.join(a.out, "pages"), exist_ok=True)
    with open(os.path.join(a.out, "truth.tsv"), "w") as truth:
        truth.write(f"# vocabulary: {source}; kinds: distinct {' '.join(KINDS)}\n")
        for pos, (_, i, kind, page, orig) in enumerate(items):
            name = f"pages/{pos:05d}.html"
            html = render(templates[page["template"]], page["art"], page["date"], page["views"],
                          page["token"])
            with open(os.path.join(a.out, name), "w") as f:
                f.write(html)
            truth.write(f"{name}\t{kind}\t{position[orig] if orig >= 0 else -1}\n")


if __name__ == "__main__":
    main()
