"""urlsieve.scrapy.SeenDupeFilter: request keys, and real Scrapy crawls of a local site.

The site (served by http.server on 127.0.0.1 only) has pages /p/0 .. /p/N-1; every page links to
three others, each in several spellings of the same URL (relative, absolute, upper-case scheme and
host, dot segments, percent-encoded digits, fragments, default-free port), plus /s with its query
in two orders. The server's request log is the ground truth: each page must be requested once.
"""

import hashlib
import json
import os
import posixpath
import subprocess
import sys
import threading
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from scrapy.http import FormRequest, Request
from scrapy.settings import Settings

import urlsieve
from urlsieve.scrapy import SeenDupeFilter

PAGES = 40
SPIDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site_spider.py")


def spellings(port, j):
    digits = "".join(f"%{ord(c):02X}" for c in str(j))
    return [
        f"/p/{j}",
        f"{j}",  # relative to /p/i
        f"../p/{j}#frag",
        f"http://127.0.0.1:{port}/p/{j}",
        f"HTTP://127.0.0.1:{port}/p/./{j}",
        f"http://127.0.0.1:{port}/p/x/../{j}",
        f"/p/{digits}",
    ]


class Site:
    """The test site and its request log: (method, page, body) per request."""

    def __init__(self):
        site = self
        self.log = []
        self.lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.1 (every response has a Content-Length). Served as HTTP/1.0, which closes each
            # connection after one response, about one crawl in five lost a POST: Scrapy's three
            # attempts all ended in ConnectionDone before the request reached the handler.
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                site.record(self, "GET", b"")

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                site.record(self, "POST", body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def record(self, handler, method, body):
        parts = urllib.parse.urlsplit(handler.path)
        page = posixpath.normpath(urllib.parse.unquote(parts.path))
        if parts.query:
            page += "?" + "&".join(sorted(parts.query.split("&")))
        with self.lock:
            self.log.append((method, page, body))
        html = self.html(page)
        handler.send_response(200 if html else 404)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", str(len(html)))
        handler.end_headers()
        handler.wfile.write(html)

    def html(self, page):
        if page.startswith("/p/"):
            i = int(page[3:])
            links = []
            for k, j in enumerate([(i + 1) % PAGES, (i + 7) % PAGES, (i * 3) % PAGES]):
                forms = spellings(self.port, j)
                links += [forms[(i + k) % len(forms)], forms[(i + k + 3) % len(forms)]]
            links.append("/s?a=1&b=2" if i % 2 else "/s?b=2&a=1")
        elif page in ("/s?a=1&b=2", "/form"):
            i, links = -1, []
        else:
            return b""
        anchors = "".join(f'<a href="{h}">link</a>\n' for h in links)
        return f"<html><body><h1>page {i}</h1>\n{anchors}</body></html>".encode()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def site():
    s = Site()
    yield s
    s.close()


def crawl(site, settings, extras=False):
    args = [sys.executable, SPIDER, site.url("/p/0"), json.dumps(settings)]
    if extras:
        args.append("extras")
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def gets(log):
    return Counter(page for method, page, _ in log if method == "GET")


def test_real_crawl_requests_every_page_exactly_once(site):
    out = crawl(site, {"DUPEFILTER_CLASS": "urlsieve.scrapy.SeenDupeFilter"}, extras=True)
    counts = gets(site.log)
    expected = {f"/p/{i}": 1 for i in range(PAGES)}
    expected["/p/0"] = 2  # page 5 asks for it again with dont_filter=True
    expected["/s?a=1&b=2"] = 1  # both query orders are one URL (URLSIEVE_SORT_QUERY)
    assert dict(counts) == expected
    # POSTs are keyed by method + body + URL: one per distinct body.
    posts = Counter(body for method, _, body in site.log if method == "POST")
    assert posts == Counter({b"q=0": 1, b"q=1": 1, b"q=2": 1})
    assert "Filtered duplicate request" in out
    assert "'dupefilter/filtered':" in out
    assert "urlsieve:" in out and "requests seen" in out


def test_scrapy_default_filter_fetches_some_pages_twice_on_this_site(site):
    # Shows that the site really has spellings Scrapy's own fingerprint does not unify (dot
    # segments in absolute links): the test above would fail without urlsieve.
    crawl(site, {})
    counts = gets(site.log)
    assert set(counts) == {f"/p/{i}" for i in range(PAGES)} | {"/s?a=1&b=2"}
    assert max(counts.values()) > 1


@pytest.mark.parametrize("exact", [False, True])
def test_jobdir_resume_remembers_what_was_seen(site, tmp_path, exact):
    settings = {
        "DUPEFILTER_CLASS": "urlsieve.scrapy.SeenDupeFilter",
        "URLSIEVE_EXACT": exact,
        "JOBDIR": str(tmp_path / "job"),
        "CONCURRENT_REQUESTS": 1,
    }
    crawl(site, {**settings, "CLOSESPIDER_PAGECOUNT": 8})
    first = gets(site.log)
    assert 8 <= sum(first.values()) < PAGES  # stopped part way
    assert os.path.exists(tmp_path / "job" / "urlsieve" / "state.db")
    out = crawl(site, settings)
    assert "Resuming crawl" in out
    counts = gets(site.log)
    assert set(counts) == {f"/p/{i}" for i in range(PAGES)} | {"/s?a=1&b=2"}
    assert max(counts.values()) == 1, counts  # nothing from the first run was fetched again


def make_filter(**settings):
    return SeenDupeFilter.from_settings(Settings(settings))


def test_get_requests_are_keyed_by_canonical_url():
    df = make_filter()
    assert df.request_seen(Request("http://Example.com/a?b=2&a=1#x")) is False
    assert df.request_seen(Request("http://example.com:80/a?a=1&b=2")) is True
    assert df.request_key(Request("http://Example.com/a")) == "http://example.com/a"
    df.close("finished")


def test_other_requests_are_keyed_by_method_body_and_url():
    df = make_filter()
    get = Request("http://example.com/f")
    post = FormRequest("http://example.com/f", formdata={"q": "1"})
    post_again = FormRequest("http://EXAMPLE.com/f#x", formdata={"q": "1"})
    post_other = FormRequest("http://example.com/f", formdata={"q": "2"})
    head = Request("http://example.com/f", method="HEAD")
    assert df.request_seen(get) is False
    assert df.request_seen(post) is False
    assert df.request_seen(post_again) is True
    assert df.request_seen(post_other) is False
    assert df.request_seen(head) is False
    key = df.request_key(post)
    assert key == "urlsieve-req:POST:%s:http://example.com/f" % hashlib.sha1(b"q=1").hexdigest()
    # A request key is never a URL the canonicalizer accepts, so it cannot equal a URL key.
    with pytest.raises(ValueError):
        df.seen.canonicalize(key)
    df.close("finished")


def test_non_http_requests_are_filtered_by_their_raw_url():
    df = make_filter()
    assert df.request_seen(Request("data:,hello")) is False
    assert df.request_seen(Request("data:,hello")) is True
    assert df.request_seen(Request("data:,other")) is False
    assert df.request_key(Request("data:,hello")).startswith("urlsieve-req:GET:")
    df.close("finished")


def test_settings_reach_the_filter(tmp_path):
    df = make_filter(URLSIEVE_CAPACITY=1234, URLSIEVE_FP_RATE=0.01, URLSIEVE_STRIP_WWW=True,
                     URLSIEVE_SORT_QUERY=False)
    stats = df.seen.stats()
    assert stats["capacity"] == 1234 and stats["fp_rate"] == 0.01 and not stats["exact"]
    assert df.request_key(Request("http://www.a.example/?b=1&a=2")) == "http://a.example/?b=1&a=2"
    df.close("finished")

    exact = make_filter(URLSIEVE_EXACT=True)  # no JOBDIR: a temporary store, removed at close
    state_dir = exact.seen.state_dir
    assert exact.seen.stats()["exact"] and os.path.isdir(state_dir)
    exact.close("finished")
    assert not os.path.exists(state_dir)


def test_every_rule_has_a_setting_and_a_keyword(monkeypatch):
    import urlsieve.scrapy

    made = []

    class RecordingSeenFilter:
        def __init__(self, **kwargs):
            made.append(kwargs)
            self.notices = []

    assert set(urlsieve.scrapy.RULE_DEFAULTS) == set(urlsieve.CANONICALIZE_RULES)
    assert urlsieve.scrapy.RULE_DEFAULTS["sort_query"] is True  # as Scrapy's own fingerprint
    monkeypatch.setattr(urlsieve.scrapy, "SeenFilter", RecordingSeenFilter)
    make_filter()
    assert {rule: made[-1][rule] for rule in urlsieve.CANONICALIZE_RULES} == (
        urlsieve.scrapy.RULE_DEFAULTS)
    for rule, default in urlsieve.scrapy.RULE_DEFAULTS.items():
        make_filter(**{"URLSIEVE_" + rule.upper(): not default})
        assert made[-1] == made[0] | {rule: not default}, rule
        SeenDupeFilter(**{rule: not default})
        assert made[-1] == made[0] | {rule: not default}, rule


def test_an_unknown_rule_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'strip_wwww'"):
        SeenDupeFilter(strip_wwww=True)


def test_scheduler_checks_dont_filter_before_the_filter():
    # The property the filter relies on for dont_filter (scrapy/core/scheduler.py, enqueue_request).
    import inspect

    from scrapy.core.scheduler import Scheduler

    assert "not request.dont_filter and self.df.request_seen(request)" in inspect.getsource(
        Scheduler.enqueue_request)

