"""urlsieve.scrapy.ContentSeenMiddleware in real Scrapy crawls of a local site (http.server on
127.0.0.1 only) with planted copies of one article: the same bytes under another URL, the same
bytes gzip'd, one word edited, the same text in another template (scripts, styles, a comment,
navigation, sidebar, page header and footer, <noscript> and <template> around it, a date), plus
two identical images, another article and a redirect to it. The spider (content_spider.py) fetches them in order, one at a time, and records what its
callback and errback received.
"""

import gzip
import json
import os
import random
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from scrapy.http import HtmlResponse, Request, TextResponse
from scrapy.settings import Settings

import urlsieve
from urlsieve.scrapy import ContentSeenMiddleware, visible_text

SPIDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "content_spider.py")


def article(seed, edit=None):
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 8)))
             for _ in range(2000)]
    if edit is not None:
        words[edit] = "edited"
    return " ".join(words)


def plain(text):
    return (f"<html><head><title>Article</title></head><body><h1>News</h1><p>{text}</p>"
            "</body></html>").encode()


def fancy(text):
    """The same text in another template: what is around it is not shown, or is the site's
    template (navigation, sidebar, page header and footer), or is only dates and counters."""
    return ("<!DOCTYPE html>\n<html lang=en><head><title>Article</title>"
            "<style>p { color: red } .menu { display: none }</style>"
            "<script>var tracking = 'many script words that are not shown at all';</script></head>"
            "<body class=wide><!-- a comment with words in it -->\n"
            "<header><a href=/>Home of the site</a> search the archive</header>"
            "<nav><a href=/news>News desk</a> <a href=/sport>Sport pages</a></nav>"
            "<div role=Banner>special offers every week</div>"
            "<main><article><header><h1 id=top>News</h1></header>\n"
            f"  <p class=lead>{text}</p>\n"
            "<p>12:30 2026-11-28 1,234</p></article></main>"
            "<aside>related stories you may like</aside>"
            "<noscript>please enable javascript to read this</noscript>"
            "<template><p>inert template words</p></template>"
            "<footer>copyright and contact details</footer></body></html>").encode()


IMAGE = bytes(range(256)) * 8


class Site:
    def __init__(self):
        text = article(1)
        self.pages = {
            "/a": ("text/html", plain(text), {}),
            "/b": ("text/html", plain(text), {}),  # the same bytes
            "/m/a": ("text/html", plain(text), {}),  # a mirror (the Redis test)
            "/gz": ("text/html", gzip.compress(plain(text)), {"Content-Encoding": "gzip"}),
            "/c": ("text/html", plain(article(1, edit=1000)), {}),  # one word of 2000 edited
            "/e": ("text/html", fancy(text), {}),  # the same text, another template
            "/d": ("text/html", plain(article(2)), {}),  # another article
            "/img1": ("image/png", IMAGE, {}),
            "/img2": ("image/png", IMAGE, {}),
        }
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                if self.path == "/r":
                    self.send_response(302)
                    self.send_header("Location", "/d")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                kind, body, headers = site.pages.get(self.path, ("text/html", b"", None))
                self.send_response(200 if headers is not None else 404)
                self.send_header("Content-Type", kind)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site():
    s = Site()
    yield s
    s.close()


ORDER = ["/a", "/b", "/gz", "/c", "/e", "/d", "/img1", "/img2", "/r"]


def crawl(site, tmp_path, settings, paths=ORDER, name="out.json"):
    out = tmp_path / name
    args = [sys.executable, SPIDER, str(out), json.dumps(settings)] + [site.url(p) for p in paths]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    result["log"] = done.stderr
    return result


def marks(result, site):
    """{path: (duplicate_of path, near_duplicate_of path, distance)} of the received responses, in
    order; a path received twice (/d, through /r) is listed as path#2."""
    out = {}
    for r in result["received"]:
        path = r["url"].split(str(site.port), 1)[1]
        key = path if path not in out else path + "#2"
        strip = lambda u: u and u.split(str(site.port), 1)[1]  # noqa: E731
        out[key] = (strip(r["duplicate_of"]), strip(r["near_duplicate_of"]), r["distance"])
    return out


def test_marks_exact_and_near_copies(site, tmp_path):
    result = crawl(site, tmp_path, {})
    got = marks(result, site)
    assert list(got) == ["/a", "/b", "/gz", "/c", "/e", "/d", "/img1", "/img2", "/d#2"]
    assert got["/a"] == (None, None, None)
    assert got["/b"] == ("/a", None, None)
    assert got["/gz"] == ("/a", None, None)  # decompressed before the test (priority 50)
    near, distance = got["/c"][1], got["/c"][2]
    assert near == "/a" and 0 <= distance <= 3
    assert got["/e"] == (None, "/a", 0)  # scripts, styles, comments... are not visible text
    assert got["/d"] == (None, None, None)
    assert got["/img2"] == ("/img1", None, None)  # no text: the exact test alone
    assert got["/d#2"] == (None, None, None)  # /d again (redirected): the same page, a first
    stats = result["stats"]
    assert stats["urlsieve/content/exact"] == 3
    assert stats["urlsieve/content/near"] == 2
    assert stats["urlsieve/content/first"] == 4
    assert "urlsieve/content/dropped" not in stats
    assert result["errback"] == []
    # a, d, img1, and the near copies c and e (a near copy's digest is recorded too)
    assert "urlsieve: 5 distinct payloads recorded" in result["log"]


@pytest.mark.parametrize("drop, dropped", [
    ("both", ["/b", "/gz", "/c", "/e", "/img2"]),
    ("exact", ["/b", "/gz", "/img2"]),
    ("near", ["/c", "/e"]),
])
def test_drops_the_copies_it_is_told_to(site, tmp_path, drop, dropped):
    result = crawl(site, tmp_path, {"URLSIEVE_CONTENT_DROP": drop})
    got = marks(result, site)
    assert set(got) == {p for p in ORDER if p not in dropped and p != "/r"} | {"/d#2"}
    assert sorted(u.split(str(site.port), 1)[1] for u in result["errback"]) == sorted(dropped)
    assert result["stats"]["urlsieve/content/dropped"] == len(dropped)


def test_near_off_and_disabled(site, tmp_path):
    result = crawl(site, tmp_path, {"URLSIEVE_CONTENT_NEAR": False})
    got = marks(result, site)
    assert got["/c"] == (None, None, None) and got["/e"] == (None, None, None)
    assert got["/b"] == ("/a", None, None)
    assert "urlsieve/content/near" not in result["stats"]
    result = crawl(site, tmp_path, {"URLSIEVE_CONTENT_ENABLED": False}, name="off.json")
    assert all(m == (None, None, None) for m in marks(result, site).values())
    assert not any(k.startswith("urlsieve/") for k in result["stats"])


def test_two_crawls_share_a_redis_set(site, tmp_path, redis_server):
    shared = {"URLSIEVE_CONTENT_REDIS_URL": redis_server.url,
              "URLSIEVE_CONTENT_REDIS_NAME": "site-pages"}
    first = crawl(site, tmp_path, shared, paths=["/a", "/d"], name="first.json")
    assert all(m == (None, None, None) for m in marks(first, site).values())
    # Another process, later: its mirror of /a is a copy of what the first crawl fetched; /a
    # itself is the same page again (a first).
    second = crawl(site, tmp_path, shared, paths=["/m/a", "/a", "/c"], name="second.json")
    got = marks(second, site)
    assert got["/m/a"] == ("/a", None, None)
    assert got["/a"] == (None, None, None)
    assert got["/c"][1] == "/a"
    assert "Redis set 'site-pages'" in second["log"]


def test_visible_text_is_the_crawlers():
    body = fancy("one two three")
    response = HtmlResponse("http://x.example/", body=body, encoding="utf-8")
    assert visible_text(response).split() == ["Article", "News", "one", "two", "three", "12:30",
                                              "2026-11-28", "1,234"]
    # The digits-only words are in the text, but SimHash drops words with digits.
    expected = urlsieve.simhash("Article News one two three")
    assert urlsieve.simhash(visible_text(response)) == expected
    assert visible_text(TextResponse("http://x.example/t", body=b"plain words")) is None


def test_settings_are_checked():
    with pytest.raises(ValueError, match="URLSIEVE_CONTENT_DROP"):
        ContentSeenMiddleware(drop="all")
    mw = ContentSeenMiddleware(max_distance=1, near=False)
    assert mw.pages.max_distance == 1 and not mw.pages.near
    request = Request("http://x.example/")
    ok = HtmlResponse("http://x.example/", body=b"<p>x</p>", request=request)
    assert mw.process_response(request, ok, None) is ok
    # Non-2xx responses and opted-out requests are not tested.
    again = Request("http://y.example/", meta={"urlsieve_content": False})
    copy = HtmlResponse("http://y.example/", body=b"<p>x</p>", request=again)
    mw.process_response(again, copy, None)
    assert "duplicate_of" not in again.meta
    missing = Request("http://z.example/")
    mw.process_response(missing, HtmlResponse("http://z.example/", status=404, body=b"<p>x</p>",
                                              request=missing), None)
    assert "duplicate_of" not in missing.meta
    assert len(mw.pages) == 1
    assert isinstance(mw.pages, urlsieve.ContentSeenSet)
