"""urlsieve.scrapy.SeenDupeFilter: request keys, and real Scrapy crawls of a local site.

The site (served by http.server on 127.0.0.1 only) has pages /p/0 .. /p/N-1; every page links to
three others, each in several spellings of the same URL (relative, absolute, upper-case scheme and
host, dot segments, percent-encoded digits, fragments, default-free port), plus /s with its query
in two orders. The server's request log is the ground truth: each page must be requested once.
"""

import hashlib
import json
import logging
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
from redis_server import RedisServer
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
        self.agents = {}  # User-Agent -> requests
        self.barrier = set()  # User-Agents whose first requests each response waits for
        self.arrived = threading.Condition(self.lock)

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
        agent = handler.headers.get("User-Agent", "")
        with self.lock:
            self.log.append((method, page, body))
            self.agents[agent] = self.agents.get(agent, 0) + 1
            self.arrived.notify_all()
            # Hold the response until every crawler of the barrier has sent its first request.
            self.arrived.wait_for(lambda: self.barrier <= set(self.agents), timeout=60)
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


@pytest.mark.parametrize("exceptions", [["keep.example:utm_source"], "keep.example:utm_source"])
def test_tracking_settings_reach_the_filter(exceptions):
    df = make_filter(URLSIEVE_STRIP_TRACKING_PARAMS=True, URLSIEVE_TRACKING_EXCEPTIONS=exceptions)
    assert df.request_key(Request("http://a.example/?utm_source=x&id=1&fbclid=2")) == (
        "http://a.example/?id=1")
    assert df.request_key(Request("http://keep.example/?utm_source=x&gclid=1")) == (
        "http://keep.example/?utm_source=x")
    assert df.request_seen(Request("http://a.example/?id=1&utm_medium=mail")) is False
    assert df.request_seen(Request("http://a.example/?id=1")) is True
    df.close("finished")
    plain = make_filter()
    assert plain.request_key(Request("http://a.example/?utm_source=x")) == (
        "http://a.example/?utm_source=x")
    plain.close("finished")


@pytest.mark.parametrize("value, seconds", [("7d", 604800), (3600, 3600), ("90", 90)])
def test_revisit_after_setting_reaches_the_filter(value, seconds):
    df = make_filter(URLSIEVE_REVISIT_AFTER=value, URLSIEVE_GENERATIONS=3)
    stats = df.seen.stats()
    assert stats["revisit_after"] == seconds and stats["generations"] == 3
    assert df.request_seen(Request("http://example.com/r")) is False
    assert df.request_seen(Request("http://example.com/r")) is True
    df.close("finished")
    plain = make_filter()
    assert plain.seen.stats()["revisit_after"] == 0
    plain.close("finished")


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



def test_two_processes_sharing_a_redis_set_fetch_every_page_once_in_total(site, redis_server):
    # Two Scrapy processes, each from its own start page, share one urlsieve set in Redis: a page
    # is fetched by one of them, once. The site holds every response until both have sent their
    # first request, so both really crawl (neither can finish before the other starts).
    shared = {
        "DUPEFILTER_CLASS": "urlsieve.scrapy.SeenDupeFilter",
        "URLSIEVE_REDIS_URL": redis_server.url,
        "URLSIEVE_REDIS_NAME": "site-crawl",
    }
    site.barrier = {"crawler-a", "crawler-b"}
    runs = []
    for agent, start in (("crawler-a", "/p/0"), ("crawler-b", "/p/20")):
        settings = {**shared, "USER_AGENT": agent}
        runs.append(subprocess.Popen(
            [sys.executable, SPIDER, site.url(start), json.dumps(settings), "extras"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    outputs = []
    for run in runs:
        try:
            _, err = run.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for r in runs:
                r.kill()
            raise
        assert run.returncode == 0, err[-3000:]
        outputs.append(err)
    counts = gets(site.log)
    expected = {f"/p/{i}": 1 for i in range(PAGES)}
    expected["/p/0"] = 2  # page 5 asks for it again with dont_filter=True (whoever fetched 5)
    expected["/s?a=1&b=2"] = 1
    assert dict(counts) == expected
    posts = Counter(body for method, _, body in site.log if method == "POST")
    assert posts == Counter({b"q=0": 1, b"q=1": 1, b"q=2": 1})  # request keys are shared too
    assert site.agents["crawler-a"] >= 1 and site.agents["crawler-b"] >= 1, site.agents
    for err in outputs:
        assert "Redis set 'site-crawl'" in err


def test_redis_settings_reach_the_filter(redis_server, tmp_path):
    df = make_filter(URLSIEVE_REDIS_URL=redis_server.url, URLSIEVE_REDIS_NAME="settings",
                     URLSIEVE_CAPACITY=4321, URLSIEVE_EXACT=True, JOBDIR=str(tmp_path / "job"))
    assert df.seen.redis_name == "settings" and df.seen.state_dir is None
    stats = df.seen.stats()
    assert stats["capacity"] == 4321 and stats["exact"]
    assert df.request_seen(Request("http://r.example/?b=1&a=2")) is False
    other = make_filter(URLSIEVE_REDIS_URL=redis_server.url, URLSIEVE_REDIS_NAME="settings")
    assert other.request_seen(Request("http://R.example/?a=2&b=1#x")) is True
    df.close("finished")
    other.close("finished")
    assert not (tmp_path / "job" / "urlsieve").exists()  # the set is in Redis, not in JOBDIR
    with pytest.raises(ValueError, match="name"):
        make_filter(URLSIEVE_REDIS_URL=redis_server.url)


def test_a_redis_fault_is_retried_then_stops_never_dropping_silently(tmp_path, caplog):
    server = RedisServer(tmp_path / "redis", append_only=True)  # a restart keeps the set
    try:
        df = make_filter(URLSIEVE_REDIS_URL=server.url, URLSIEVE_REDIS_NAME="faults",
                         URLSIEVE_REDIS_RETRY_TIMEOUT=120, URLSIEVE_REDIS_FRONT_CACHE_KEYS=0)
        assert df.request_seen(Request("http://f.example/1")) is False
        # Redis goes away; request_seen retries (logging each attempt) until it is back.
        server.kill()
        retrying = threading.Event()

        class Watch(logging.Handler):
            def emit(self, record):
                if "Redis unavailable" in record.getMessage():
                    retrying.set()

        watch = Watch()
        logging.getLogger("urlsieve.scrapy").addHandler(watch)
        restarter = threading.Thread(target=lambda: retrying.wait(60) and server.restart())
        restarter.start()
        try:
            assert df.request_seen(Request("http://f.example/2")) is False  # new, once back
            assert df.request_seen(Request("http://f.example/1")) is True
        finally:
            restarter.join()
            logging.getLogger("urlsieve.scrapy").removeHandler(watch)
        assert retrying.is_set()
        # Still down past URLSIEVE_REDIS_RETRY_TIMEOUT: the error is raised and logged.
        df.redis_retry_timeout = 0.3
        server.kill()
        with caplog.at_level(logging.WARNING, logger="urlsieve.scrapy"):
            with pytest.raises(urlsieve.UnavailableError, match=f"127.0.0.1:{server.port}"):
                df.request_seen(Request("http://f.example/3"))
        assert "neither scheduled nor recorded" in caplog.text
        assert "http://f.example/3" in caplog.text
        df.close("finished")
    finally:
        server.stop()


def test_the_redis_password_comes_from_a_file_setting_or_the_environment(tmp_path, monkeypatch):
    server = RedisServer(tmp_path / "redis", password="sesame")
    try:
        bare = f"redis://127.0.0.1:{server.port}"
        secret = tmp_path / "redis.pass"
        secret.write_text("sesame\n")
        df = make_filter(URLSIEVE_REDIS_URL=bare, URLSIEVE_REDIS_NAME="pw",
                         URLSIEVE_REDIS_PASSWORD_FILE=str(secret))
        assert df.request_seen(Request("http://pw.example/")) is False
        df.close("finished")
        monkeypatch.setenv("URLSIEVE_REDIS_PASSWORD", "sesame")
        df = make_filter(URLSIEVE_REDIS_URL=bare, URLSIEVE_REDIS_NAME="pw")
        assert df.request_seen(Request("http://pw.example/")) is True
        df.close("finished")
        secret.write_text("\n")
        with pytest.raises(ValueError, match="redis.pass"):
            make_filter(URLSIEVE_REDIS_URL=bare, URLSIEVE_REDIS_NAME="pw",
                        URLSIEVE_REDIS_PASSWORD_FILE=str(secret))
    finally:
        server.stop()
