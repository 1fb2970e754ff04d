#!/usr/bin/python3
"""The figures of one crawl of bench/dust.sh, and the comparison of two. Standard library only.

    dust_figures.py run OUT --site generated|webapp|wiki [--truth N] [--lost-sample N]
                    [--urlsieve PATH] > run.json
    dust_figures.py table NAME RUN.json...        one line per run, after a header
    dust_figures.py compare OFF.json ON.json --max-pages N   the ratios and the issue's targets

`run` reads OUT/pages.jsonl, OUT/rejected.jsonl, OUT/stats.json and OUT/*.warc.gz (each record's
target, HTTP status, payload digest and, on the generated site, its X-Dust-Page header: the
distinct page it is, tools/site_server/dust_site.h), then fetches every URL a rule suppressed
(rejected.jsonl, "reason": "dust"), or a random sample of --lost-sample of them, once more, after
the crawl, to learn what the crawl did not fetch. The generated site: with urllib (4 at a time),
its X-Dust-Page id. The web app: with the crawler itself (--urlsieve PATH, depth 0, a WARC of its
own), then `urlsieve dupes` over both WARCs tells which of them are a fetched page's exact or near
copy — the crawler's own tests, so that a page the crawl would have called a copy is not counted
lost. Counts from a sample are scaled up to all of them.
Figures (JSON): requests (pages.jsonl lines), exact and near (duplicate_of, near_duplicate_of),
firsts (status 200 pages with neither), truth_dups (generated: fetches whose id an earlier fetch
had), distinct (generated: distinct ids; web app: distinct payload digests of 200 responses),
suppressed, validation (pages with "dust_check"), barren (pages that say noindex or answered a 4xx
other than 408 and 429), articles (the wiki: distinct article titles viewed — a path
/index.php/TITLE or a query of title=TITLE alone, not barren — of --truth generated ones), lost
(distinct pages never fetched because of a rule: suppressed URLs whose id, or digest, no fetched
page has, barren pages aside; for a web app (the wiki is one) an upper bound, since a near copy of
a fetched page has a digest of its own), lost_near (web app: suppressed pages that are no fetched
page's exact or near copy nor barren, counted once with their own copies), lost_retired (of those,
the ones a rule later retired suppressed: queued again, not reached in the budget), texts (distinct
visible-text digests of the HTML responses), lost_queued (of the lost, the ones still queued under
another spelling when the budget ran out; for a web app, of lost_near, those whose page by their
drop rule, the URL without the parameters it drops, was), lost_sample (the suppressed URLs fetched
again), truth (the site's distinct pages), and stats.json's "dust" object when there is one.
"""

import base64
import concurrent.futures
import glob
import gzip
import hashlib
import html.parser
import json
import os
import random
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import zlib


def jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class _Text(html.parser.HTMLParser):
    """An HTML page's visible text (outside script and style)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.words, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self.skip -= tag in ("script", "style") and self.skip > 0

    def handle_data(self, data):
        if not self.skip:
            self.words.extend(data.split())


def barren(page):
    """A page that says noindex, or a 4xx other than 408 and 429 (the learner's own test)."""
    status = page.get("status") or 0
    return bool(page.get("noindex")) or (400 <= status < 500 and status not in (408, 429))


# bench/gen_wiki_pages.py's article titles, as MediaWiki spells them in a URL.
WIKI_ARTICLE = re.compile(r"[A-Z][a-z]+_[a-z]+_[0-9]+")


def article_title(page):
    """The generated article a wiki page (pages.jsonl line) is a view of, or None: a 200 that is
    not barren, at /index.php/TITLE or /index.php?title=TITLE (no other parameter)."""
    if page.get("status") != 200 or barren(page):
        return None
    url = urllib.parse.urlsplit(page["url"])
    query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
    if url.path.startswith("/index.php/") and not url.query:
        title = urllib.parse.unquote(url.path[len("/index.php/"):])
    elif url.path == "/index.php" and list(query) == ["title"]:
        title = query["title"][0].replace(" ", "_")
    else:
        return None
    return title if WIKI_ARTICLE.fullmatch(title) else None


def text_digest(body):
    """SHA-1 of an HTML body's visible words: two pages that differ only in their markup (the
    parameters of their links, say) have the same one."""
    parser = _Text()
    parser.feed(body.decode("utf-8", "replace"))
    parser.close()
    return hashlib.sha1(" ".join(parser.words).encode()).hexdigest()


def warc_responses(out):
    """({target URI: (http status, payload digest, X-Dust-Page)} of the response and revisit
    records, the text digests of the HTML responses), from one gzip member per record."""
    found, texts = {}, set()
    for path in sorted(glob.glob(os.path.join(out, "*.warc.gz"))):
        data = open(path, "rb").read()
        pos = 0
        while pos < len(data):
            d = zlib.decompressobj(zlib.MAX_WBITS | 16)
            text = d.decompress(data[pos:])
            pos = len(data) - len(d.unused_data)
            head, _, block = text.partition(b"\r\n\r\n")
            headers = {}
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip().decode()
            if headers.get(b"warc-type") not in ("response", "revisit"):
                continue
            status, page, http = None, None, {}
            if block.startswith(b"HTTP/"):
                http_head, _, payload = block.partition(b"\r\n\r\n")
                http_head = http_head.split(b"\r\n")
                parts = http_head[0].split(b" ")
                status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
                for line in http_head[1:]:
                    name, _, value = line.partition(b":")
                    http[name.strip().lower()] = value.strip().decode()
                page = http.get(b"x-dust-page")
                if headers.get(b"warc-type") == "response" and status == 200 and \
                        "html" in http.get(b"content-type", ""):
                    if http.get(b"content-encoding", "identity") == "gzip":
                        payload = gzip.decompress(payload)
                    if http.get(b"content-encoding", "identity") in ("identity", "gzip"):
                        texts.add(text_digest(payload))
            found[headers.get(b"warc-target-uri")] = (status, headers.get(b"warc-payload-digest"),
                                                      page)
    return found, texts


UNREACHABLE = "(no answer)"


def fetch_after(url):
    """(X-Dust-Page, "sha1:BASE32" of the body, text digest or None) of a GET of url now;
    (None, None, None) for an HTTP error, (UNREACHABLE, None, None) when no answer came."""
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            body, page, ctype = r.read(), r.headers.get("X-Dust-Page"), r.headers.get_content_type()
    except urllib.error.HTTPError as e:
        return e.headers.get("X-Dust-Page"), None, None
    except OSError:
        return UNREACHABLE, None, None
    digest = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
    return page, digest, text_digest(body) if "html" in ctype else None


def refetch_with_crawler(urlsieve, out, urls):
    """Fetches urls again with urlsieve (depth 0, into a WARC of its own, OUT.refetch) and asks
    `urlsieve dupes` over both WARCs — the crawler's own exact and near-duplicate tests — which
    of them are a copy of a page the crawl fetched. Returns ({url: (http status, payload digest,
    None)}, {the urls that are a copy}, {url: the url of the refetched page it is a copy of},
    {the urls whose page is barren})."""
    again = out.rstrip("/") + ".refetch"
    shutil.rmtree(again, ignore_errors=True)
    os.makedirs(again)
    seeds = os.path.join(again, "seeds.txt")
    with open(seeds, "w", encoding="utf-8") as f:
        f.write("".join(u + "\n" for u in urls))
    subprocess.run([urlsieve, "crawl", "--seeds", seeds, "--out", os.path.join(again, "out"),
                    "--max-pages", str(len(urls) + 1), "--max-depth", "0", "--threads", "2",
                    "--delay-ms", "0", "--ignore-robots", "--warc", "--dust", "off"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    refetched, _ = warc_responses(os.path.join(again, "out"))
    barren_urls = {p["url"] for p in jsonl(os.path.join(again, "out", "pages.jsonl")) if barren(p)}
    crawl_warcs = sorted(glob.glob(os.path.join(out, "*.warc.gz")))
    groups = subprocess.run([urlsieve, "dupes"] + crawl_warcs +
                            sorted(glob.glob(os.path.join(again, "out", "*.warc.gz"))),
                            check=True, capture_output=True, text=True).stdout
    covered, copy_of = set(), {}
    for line in groups.splitlines():
        group = json.loads(line)
        members = [group["first"]] + group["copies"]
        if any(m["file"] in crawl_warcs for m in members):
            covered.update(m["uri"] for m in members if m["file"] not in crawl_warcs)
        else:
            copy_of.update((m["uri"], group["first"]["uri"]) for m in group["copies"])
    return refetched, covered, copy_of, barren_urls


def crawl_rules(urlsieve, out):
    """{rule id: (state, form)} of a crawl's rules (`urlsieve rules --json --all`)."""
    listing = subprocess.run([urlsieve, "rules", "--state", out, "--json", "--all"], check=True,
                             capture_output=True, text=True).stdout
    return {r["id"]: (r["state"], r["form"]) for r in map(json.loads, listing.splitlines())}


def drop_key(url, form):
    """url without the parameters a `drop-param NAME[,NAME…]` or `drop-param NAME=VALUE` rule
    (its form) drops — the page the rule says url is — or None for another form."""
    words = form.split()
    if words[:1] != ["drop-param"] or len(words) < 2:
        return None
    names = words[1].split(",")
    base, _, query = url.partition("?")
    kept = [p for p in re.split("[;&]", query)
            if p and p not in names and p.split("=", 1)[0] not in names]
    return base + "?" + (";" if ";" in query else "&").join(kept)


def run(out, site, truth, lost_sample, urlsieve):
    pages = jsonl(os.path.join(out, "pages.jsonl"))
    rejected = jsonl(os.path.join(out, "rejected.jsonl"))
    stats = {}
    if os.path.exists(os.path.join(out, "stats.json")):
        stats = json.load(open(os.path.join(out, "stats.json")))
    records, texts = warc_responses(out)
    fig = {"site": site, "requests": len(pages), "truth": truth}
    fig["exact"] = sum("duplicate_of" in p for p in pages)
    fig["near"] = sum("near_duplicate_of" in p for p in pages)
    fig["firsts"] = sum(p.get("status") == 200 and "duplicate_of" not in p
                        and "near_duplicate_of" not in p for p in pages)
    fig["validation"] = sum("dust_check" in p for p in pages)
    fig["barren"] = sum(barren(p) for p in pages)
    fig["wasted"] = sum(barren(p) or "duplicate_of" in p or "near_duplicate_of" in p
                        for p in pages)
    fig["articles"] = len({t for t in map(article_title, pages) if t}) if site == "wiki" else None
    fig["dust_stats"] = stats.get("dust")

    # What each fetch was: its id (generated site) or payload digest (web app). An exact duplicate
    # archived as a revisit has its first copy's digest, and the same id (the same bytes).
    fetched_ids, fetched_digests, truth_fetches = set(), set(), 0
    for p in sorted(pages, key=lambda p: p.get("time", "")):
        status, digest, page = records.get(p["url"], (p.get("status"), None, None))
        if page is None and "duplicate_of" in p:
            page = records.get(p["duplicate_of"], (None, None, None))[2]
        if status != 200:
            continue
        if digest:
            fetched_digests.add(digest)
        if page and page != "none":
            truth_fetches += 1
            fetched_ids.add(page)
    if site == "generated":
        fig["distinct"] = len(fetched_ids)
        fig["truth_dups"] = truth_fetches - len(fetched_ids)
    else:
        fig["distinct"] = len(fetched_digests)
        fig["truth_dups"] = None
    fig["texts"] = len(texts)

    fetched_urls = {p["url"] for p in pages}
    rule_of = {r["url"]: r.get("rule") for r in rejected if r.get("reason") == "dust"}
    suppressed = sorted(rule_of)
    fig["suppressed"] = len(suppressed)
    # A web app's CGI answers a few pages a second: a random sample of the suppressed URLs is
    # fetched again, and the pages lost among them scaled up to all of them.
    sample = suppressed
    if lost_sample and len(suppressed) > lost_sample:
        sample = sorted(random.Random(1).sample(suppressed, lost_sample))
    fig["lost_sample"] = len(sample)
    scale = len(suppressed) / len(sample) if sample else 1.0
    if site == "generated":
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            after = list(pool.map(fetch_after, sample))
        unreachable = sum(page == UNREACHABLE for page, _, _ in after)
        if unreachable:
            print(f"warning: {unreachable} suppressed URLs did not answer after the crawl; the "
                  "lost pages are undercounted", file=sys.stderr)
        lost = {page for page, _, _ in after if page not in (None, "none", UNREACHABLE)}
        lost -= fetched_ids
        fig["lost_near"] = fig["lost_retired"] = fig["lost_near_examples"] = None
        fig["lost_queued"] = None  # below, when some are lost
    else:
        refetched, covered, copy_of, barren_urls = {}, set(), {}, set()
        if sample:
            refetched, covered, copy_of, barren_urls = refetch_with_crawler(urlsieve, out, sample)
        lost = {digest for u, (_, digest, _) in refetched.items()
                if digest and u not in barren_urls} - fetched_digests
        # A page lost is a 200 response that is no fetched page's exact or near copy, nor barren
        # (its own copies among the URLs fetched again count once).
        lost_urls = [u for u, (status, _, _) in refetched.items() if status == 200 and
                     u not in covered and u not in fetched_urls and u not in barren_urls]
        firsts = {copy_of.get(u, u) for u in lost_urls}
        rules = crawl_rules(urlsieve, out)
        fig["lost_near"] = round(len(firsts) * scale)
        fig["lost_retired"] = round(
            sum(rules.get(rule_of[u], ("",))[0] == "retired" for u in firsts) * scale)
        # Of those, the ones whose page (the URL a drop rule makes of them) was still queued under
        # another spelling when the budget ran out: the budget's loss, not the rule's.
        pending = [r["url"] for r in rejected if r.get("reason") == "total_budget"]
        form_of = {u: rules.get(rule_of[u], ("", ""))[1] for u in firsts}
        pending_keys = {f: {drop_key(p, f) for p in pending} - {None} for f in form_of.values()}
        fig["lost_queued"] = round(
            sum(drop_key(u, f) in pending_keys[f] for u, f in form_of.items()) * scale)
        fig["lost_near_examples"] = [f"{u} (rule {rule_of[u]})" for u in sorted(firsts)[:5]]
    fig["lost"] = round(len(lost) * scale)
    fig["lost_examples"] = sorted(lost)[:5]
    # Of those, the pages with another spelling still queued when the budget ran out (rejected
    # "total_budget"): reachable, not lost for good (generated site only: it costs one fetch of
    # each pending URL, cheap there).
    if site == "generated" and lost:
        pending = sorted({r["url"] for r in rejected if r.get("reason") == "total_budget"})
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            queued = {page for page, _, _ in pool.map(fetch_after, pending)} - {UNREACHABLE}
        fig["lost_queued"] = len(lost & queued)
    return fig


def table(name, paths):
    print(f"{'run':18s} {'requests':>8s} {'exact':>6s} {'near':>5s} {'truth dup':>9s} "
          f"{'distinct':>9s} {'texts':>5s} {'firsts':>6s} {'suppressed':>10s} {'valid.':>6s} "
          f"{'lost':>7s} {'barren':>6s} {'articles':>8s}")
    for path in paths:
        f = json.load(open(path))
        mode = os.path.basename(path).split(".")[0]
        truth_dups = "-" if f["truth_dups"] is None else str(f["truth_dups"])
        distinct = str(f["distinct"]) + (f"/{f['truth']}" if f["site"] == "generated" else "")
        articles = "-" if f["articles"] is None else f"{f['articles']}/{f['truth']}"
        lost = str(f["lost"]) + ("" if f["lost_near"] is None else f"/{f['lost_near']}")
        print(f"{name + ' ' + mode:18s} {f['requests']:8d} {f['exact']:6d} {f['near']:5d} "
              f"{truth_dups:>9s} {distinct:>9s} {f['texts']:5d} {f['firsts']:6d} "
              f"{f['suppressed']:10d} {f['validation']:6d} {lost:>7s} {f['barren']:6d} "
              f"{articles:>8s}")
        if f["lost_near"] is not None and f["suppressed"]:
            print(f"{'':18s} lost (by payload digest / no fetched page's copy): estimated from "
                  f"{f['lost_sample']} of the suppressed URLs fetched again; {f['lost_retired']} "
                  f"by rules later retired (queued again, not reached), {f['lost_queued']} still "
                  "queued under another spelling; e.g.: "
                  f"{' '.join(f['lost_near_examples'][:3])}")
        if f["dust_stats"]:
            print(f"{'':18s} stats.json dust: {json.dumps(f['dust_stats'], sort_keys=True)}")
        if f["lost_examples"] and f["site"] == "generated":
            queued = "" if f["lost_queued"] is None else f" ({f['lost_queued']} still queued " \
                "under another spelling when the budget ran out)"
            print(f"{'':18s} lost{queued}, e.g.: {' '.join(f['lost_examples'])}")


def compare(off_path, on_path, max_pages):
    off, on = json.load(open(off_path)), json.load(open(on_path))
    generated = off["truth_dups"] is not None
    # The generated site: its ground truth. The web app: what the content-seen test tells (exact
    # + near duplicates; "firsts", the pages that are neither, as its distinct pages: its
    # payload digests differ wherever a link does), and the text digests for the pages lost; the
    # wiki: its barren pages wasted too, and the articles it has.
    if generated:
        dups_off, dups_on, dup_kind = off["truth_dups"], on["truth_dups"], "ground truth"
        reached_off, reached_on, reached_kind = off["distinct"], on["distinct"], "ids"
        # A page still queued under another spelling when the budget ran out is the budget's
        # loss, not the rule's (the seen test drops a URL whose page is queued, rule or none).
        lost = on["lost"] - (on["lost_queued"] or 0)
        lost_kind = f"{lost}; {on['lost_queued'] or 0} more still queued under another spelling"
    else:
        dups_off, dups_on = off["exact"] + off["near"], on["exact"] + on["near"]
        dup_kind = "exact + near"
        reached_off, reached_on, reached_kind = off["firsts"], on["firsts"], "firsts"
        if on["site"] == "wiki":
            # A wiki's waste is its forms as much as its copies; its articles are known.
            dups_off, dups_on, dup_kind = off["wasted"], on["wasted"], "exact + near + barren"
            reached_off, reached_on = off["articles"], on["articles"]
            reached_kind = f"articles of {on['truth']}"
        lost = on["lost_near"] - on["lost_queued"]
        lost_kind = f"{lost} no fetched page's exact or near copy ({on['lost_retired']} by " \
            f"rules later retired), {on['lost_queued']} more still queued under another " \
            f"spelling, {on['lost']} by payload digest"
        if on["lost_sample"] < on["suppressed"]:
            lost_kind += f"; from {on['lost_sample']} of {on['suppressed']} suppressed URLs"
    rows = []
    cut = 1 - dups_on / dups_off if dups_off else 0.0
    rows.append((f"duplicate fetches cut ({dup_kind}: {dups_off} -> {dups_on})", f"{cut:.1%}",
                 ">= 50 %", cut >= 0.5))
    gain = reached_on / reached_off - 1 if reached_off else 0.0
    rows.append((f"distinct pages reached ({reached_kind}: {reached_off} -> {reached_on})",
                 f"{gain:+.1%}", ">= +25 %", gain >= 0.25))
    share = lost / reached_on if reached_on else 0.0
    rows.append((f"distinct pages never fetched because of a rule ({lost_kind})", f"{share:.2%}",
                 "<= 1 % of reached", share <= 0.01))
    validation = on["validation"] / max_pages
    rows.append((f"validation fetches ({on['validation']})", f"{validation:.2%}",
                 "<= 2 % of budget", validation <= 0.02))
    for what, value, target, ok in rows:
        print(f"    {'PASS' if ok else 'MISS'} {value:>7s} {target:18s} {what}")


def main():
    args = sys.argv[1:]
    if args[:1] == ["run"] and len(args) >= 4 and args[2] == "--site":
        truth = int(args[args.index("--truth") + 1]) if "--truth" in args else None
        sample = int(args[args.index("--lost-sample") + 1]) if "--lost-sample" in args else 0
        urlsieve = args[args.index("--urlsieve") + 1] if "--urlsieve" in args else "urlsieve"
        json.dump(run(args[1], args[3], truth, sample, urlsieve), sys.stdout)
        print()
    elif args[:1] == ["table"] and len(args) >= 3:
        table(args[1], args[2:])
    elif args[:1] == ["compare"] and len(args) == 5 and args[3] == "--max-pages":
        compare(args[1], args[2], int(args[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
