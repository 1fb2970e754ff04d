"""A Scrapy duplicate filter backed by urlsieve.SeenFilter, and a downloader middleware backed by
urlsieve.ContentSeenSet (ContentSeenMiddleware, at the end of this file: its docstring has its
settings).

    # settings.py
    DUPEFILTER_CLASS = "urlsieve.scrapy.SeenDupeFilter"
    URLSIEVE_CAPACITY = 10_000_000   # requests at which the Bloom filter meets URLSIEVE_FP_RATE
    URLSIEVE_FP_RATE = 1e-6          # Bloom false-positive bound (a false positive drops a request)
    URLSIEVE_EXACT = False           # True: SQLite confirms every "maybe seen": nothing is dropped
    URLSIEVE_SORT_QUERY = True       # canonicalizer rules; sort_query matches Scrapy's own
    URLSIEVE_DROP_EMPTY_QUERY = False  # fingerprint, which sorts query arguments
    URLSIEVE_STRIP_SESSION_IDS = False
    URLSIEVE_STRIP_WWW = False
    URLSIEVE_COLLAPSE_SLASHES = False  # (one URLSIEVE_<RULE> per urlsieve.CANONICALIZE_RULES)
    URLSIEVE_STRIP_TRACKING_PARAMS = False  # utm_*, fbclid, gclid, msclkid, ... leave the key
    URLSIEVE_TRACKING_EXCEPTIONS = []  # "HOST:NAME": keep NAME on HOST and below (a list, or
                                       # comma-separated with -s)
    URLSIEVE_REVISIT_AFTER = None    # e.g. "7d" or 604800: a request seen longer ago is new again
    URLSIEVE_GENERATIONS = 4         # (Bloom-only; URLSIEVE_CAPACITY is then requests per period)

    # Optional: one seen set shared in Redis by every Scrapy process that names it (the drop-in
    # alternative to scrapy-redis's RFPDupeFilter): each request is scheduled by one process only.
    URLSIEVE_REDIS_URL = "redis://redis-host:6379/0"  # the password: URLSIEVE_REDIS_PASSWORD or
    URLSIEVE_REDIS_PASSWORD_FILE = "/run/secrets/redis"  # REDISCLI_AUTH in the environment, or
    URLSIEVE_REDIS_NAME = "my-crawl"   # this file's first line; both or neither
    URLSIEVE_REDIS_RETRY_TIMEOUT = 200  # seconds a Redis fault is retried before the crawl stops
    URLSIEVE_REDIS_FRONT_CACHE_KEYS = 1048576  # keys known seen, answered locally (the default)

Keys: a GET request without a body is keyed by its canonical URL (so every spelling of a URL is
one request). Any other request is keyed "urlsieve-req:<METHOD>:<sha1 of body>:<canonical URL>",
or the raw URL when it is not an http(s) URL the canonicalizer accepts. Canonical URL keys always
start with "http://" or "https://", so the two kinds of key never collide; HTTP methods contain no
':' and the SHA-1 is 40 hex digits, so request keys are unambiguous among themselves. Headers are
not part of the key, as in Scrapy's default fingerprint.

Like Scrapy's RFPDupeFilter: requests with dont_filter=True never reach the filter (the scheduler
checks the flag first); with JOBDIR set the state lives in JOBDIR/urlsieve and a resumed job
remembers what it saw (saved when the spider closes; in exact mode every insert is committed at
once); duplicates are logged once, or each one with DUPEFILTER_DEBUG; the stat
dupefilter/filtered counts them. Without JOBDIR, exact mode keeps its SQLite store in a temporary
directory removed at close.

Redis: with URLSIEVE_REDIS_URL and URLSIEVE_REDIS_NAME the filter is the set of that name in Redis
(urlsieve.SeenFilter(redis=..., name=...)), shared by all processes that use it, and JOBDIR plays
no part in it: the set outlives the crawl in Redis (delete its keys, "urlsieve:{NAME...", to start
afresh). The first process creates it with URLSIEVE_CAPACITY, URLSIEVE_FP_RATE, URLSIEVE_EXACT and
the rules; the others use the stored ones (logged). A Redis fault never drops a request silently:
while Redis is unreachable, restarting or timing out (urlsieve.UnavailableError), request_seen
retries with back-off (0.1 s doubling to 5 s), logging a warning each time, and the crawl pauses
(request_seen runs in the reactor thread). If Redis is still failing after
URLSIEVE_REDIS_RETRY_TIMEOUT seconds, or answers another error (a wrong password after a restart,
the set's keys deleted...), the request's error is logged, the spider is closed with the reason
"urlsieve_redis_error" and the exception propagates to Scrapy, which logs it: the crawl stops,
visibly, rather than going on with requests neither scheduled nor recorded. A retry sends the same
key again, and the set answers it as the failed call was answered if that call did reach Redis
(its reply was lost) within the last 240 seconds (dedup/redis_seen_set.h): so the default timeout
is 200 s, and a longer one risks dropping the request of such a call.
"""

import hashlib
import logging
import os
import shutil
import tempfile
import time

from scrapy import signals
from scrapy.dupefilters import BaseDupeFilter
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.job import job_dir
from scrapy.utils.request import referer_str

from . import (CANONICALIZE_RULES, DEFAULT_REDIS_FRONT_CACHE_KEYS, ContentSeenSet, Error,
               SeenFilter, UnavailableError)

REQUEST_KEY_PREFIX = "urlsieve-req:"

# The canonicalization rules' defaults here: sort_query is on, as Scrapy's own fingerprint sorts
# query arguments; the others are off, as in SeenFilter.
RULE_DEFAULTS = dict.fromkeys(CANONICALIZE_RULES, False) | {"sort_query": True}


def _revisit_after(value):
    """URLSIEVE_REVISIT_AFTER as SeenFilter takes it: None, seconds, or a duration ("7d")."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)  # a number given on the command line (-s) arrives as a string
    return value


def _with_password_file(url, password_file):
    """The Redis URL with the first line of password_file as its password (kept in this process,
    off any command line), unless the URL names one. Without a file, an address without a password
    takes URLSIEVE_REDIS_PASSWORD or REDISCLI_AUTH from the environment (urlsieve.SeenFilter)."""
    if not url or not password_file or "@" in url.partition("://")[2]:
        return url
    with open(password_file, encoding="utf-8") as f:
        password = f.readline().rstrip("\r\n")
    if not password:
        raise ValueError(f"URLSIEVE_REDIS_PASSWORD_FILE {password_file} is empty: its first line "
                         "is the password")
    scheme, _, rest = url.partition("://")
    return f"{scheme}://:{password}@{rest}"


class SeenDupeFilter(BaseDupeFilter):
    """Scrapy DUPEFILTER_CLASS: the URL-seen test of urlsieve."""

    def __init__(
        self,
        path=None,
        debug=False,
        *,
        capacity=10_000_000,
        fp_rate=1e-6,
        exact=False,
        redis_url=None,
        redis_name=None,
        redis_retry_timeout=200.0,
        redis_front_cache_keys=DEFAULT_REDIS_FRONT_CACHE_KEYS,
        revisit_after=None,
        generations=4,
        tracking_exceptions=None,
        crawler=None,
        **rules,
    ):
        self.debug = debug
        self.logdupes = True
        self.logger = logging.getLogger(__name__)
        self._tempdir = None
        self._crawler = crawler
        self._stopping = False
        self.redis_retry_timeout = redis_retry_timeout
        if redis_url or redis_name:
            # SeenFilter says so (ValueError) when only one of the two is given.
            where = dict(redis=redis_url or None, name=redis_name or None,
                         redis_front_cache_keys=redis_front_cache_keys)
        else:
            state_dir = os.path.join(path, "urlsieve") if path else None
            if exact and state_dir is None:
                self._tempdir = tempfile.mkdtemp(prefix="urlsieve-scrapy-")
                state_dir = os.path.join(self._tempdir, "state")
            where = dict(state_dir=state_dir)
        self.seen = SeenFilter(
            capacity=capacity,
            fp_rate=fp_rate,
            exact=exact,
            revisit_after=revisit_after,
            generations=generations,
            tracking_exceptions=list(tracking_exceptions or []),
            **where,
            **(RULE_DEFAULTS | rules),  # SeenFilter refuses a name not in CANONICALIZE_RULES
        )
        for notice in self.seen.notices:
            self.logger.info("urlsieve: %s", notice)

    @classmethod
    def from_settings(cls, settings, *, fingerprinter=None, crawler=None):
        # fingerprinter: accepted for Scrapy's calling convention; the key is built here instead.
        return cls(
            job_dir(settings),
            settings.getbool("DUPEFILTER_DEBUG"),
            capacity=settings.getint("URLSIEVE_CAPACITY", 10_000_000),
            fp_rate=settings.getfloat("URLSIEVE_FP_RATE", 1e-6),
            exact=settings.getbool("URLSIEVE_EXACT", False),
            redis_url=_with_password_file(settings.get("URLSIEVE_REDIS_URL"),
                                          settings.get("URLSIEVE_REDIS_PASSWORD_FILE")),
            redis_name=settings.get("URLSIEVE_REDIS_NAME"),
            redis_retry_timeout=settings.getfloat("URLSIEVE_REDIS_RETRY_TIMEOUT", 200.0),
            redis_front_cache_keys=settings.getint("URLSIEVE_REDIS_FRONT_CACHE_KEYS", DEFAULT_REDIS_FRONT_CACHE_KEYS),
            revisit_after=_revisit_after(settings.get("URLSIEVE_REVISIT_AFTER")),
            generations=settings.getint("URLSIEVE_GENERATIONS", 4),
            tracking_exceptions=settings.getlist("URLSIEVE_TRACKING_EXCEPTIONS"),
            crawler=crawler,
            **{
                rule: settings.getbool("URLSIEVE_" + rule.upper(), default)
                for rule, default in RULE_DEFAULTS.items()
            },
        )

    @classmethod
    def from_crawler(cls, crawler):
        return cls.from_settings(crawler.settings, crawler=crawler)

    def request_key(self, request):
        """The key deduplicated for a request (see the module docstring)."""
        try:
            url = self.seen.canonicalize(request.url)
        except ValueError:
            url = request.url
        else:
            if request.method == "GET" and not request.body:
                return url
        body = hashlib.sha1(request.body).hexdigest()
        return f"{REQUEST_KEY_PREFIX}{request.method}:{body}:{url}"

    def request_seen(self, request):
        if self.seen.redis_name is not None:
            return self._redis_request_seen(request)
        return self._request_seen(request)

    def _request_seen(self, request):
        if request.method == "GET" and not request.body:
            try:
                return not self.seen.insert_if_new(request.url)  # one call on the common path
            except ValueError:
                pass  # not an http(s) URL urlsieve accepts: keyed by its raw form below
        return not self.seen.insert_key_if_new(self.request_key(request))

    def _redis_request_seen(self, request):
        """request_seen over Redis: faults are retried, then stop the crawl (module docstring)."""
        deadline = time.monotonic() + self.redis_retry_timeout
        pause = 0.1
        while True:
            try:
                return self._request_seen(request)
            except UnavailableError as e:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._stop(request, e)
                    raise
                pause = min(pause, left)
                self.logger.warning(
                    "urlsieve: Redis unavailable while filtering %s (%s); retrying in %.1f s",
                    request, e, pause)
                time.sleep(pause)  # the back-off: nothing to wait on but time
                pause = min(pause * 2, 5.0)
            except Error as e:
                self._stop(request, e)
                raise

    def _stop(self, request, error):
        self.logger.error(
            "urlsieve: the Redis seen set failed for %s, which is neither scheduled nor recorded "
            "(%s); closing the spider", request, error)
        if self._crawler is None or self._stopping or self._crawler.engine is None:
            return
        self._stopping = True
        from twisted.internet import reactor

        # Later, not from inside the scheduler's enqueue_request.
        reactor.callLater(0, self._crawler.engine.close_spider, self._crawler.spider,
                          "urlsieve_redis_error")

    def close(self, reason):
        if self.seen.closed:
            return
        stats = self.seen.stats()
        redis_name = self.seen.redis_name
        self.seen.close()
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
        self.logger.info(
            "urlsieve: %d requests seen%s, Bloom filter %d bytes, expected false-positive rate"
            " %.3g%s",
            stats["bloom_inserted"],
            f" (Redis set {redis_name!r})" if redis_name else "",
            stats["bloom_bytes"],
            stats["bloom_expected_fp_rate"],
            f", {stats['false_positives']} false positives caught by the exact store"
            if stats["exact"]
            else "",
        )

    def log(self, request, spider):
        if self.debug:
            msg = "Filtered duplicate request: %(request)s (referer: %(referer)s)"
            args = {"request": request, "referer": referer_str(request)}
            self.logger.debug(msg, args, extra={"spider": spider})
        elif self.logdupes:
            msg = (
                "Filtered duplicate request: %(request)s"
                " - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)"
            )
            self.logger.debug(msg, {"request": request}, extra={"spider": spider})
            self.logdupes = False
        spider.crawler.stats.inc_value("dupefilter/filtered", spider=spider)


# The page's own visible text, as the crawler collects it (crawler/page/link_extractor.h;
# docs/features/content-seen.md, "Fingerprints"): every text node, <title> included, outside the
# elements whose text a browser does not show and outside the site's template (<nav>, <aside>, a
# <header> or <footer> not inside <article>, <aside>, <main>, <nav> or <section>, and elements with
# role navigation, banner, contentinfo or complementary, compared ignoring ASCII case). Comments
# are not text nodes. Joined by spaces, which SimHash reads as word breaks.
_LOWER = "translate(@role, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
VISIBLE_TEXT_XPATH = (
    "//text()[not(ancestor::script or ancestor::style or ancestor::template"
    " or ancestor::noscript or ancestor::iframe or ancestor::noembed or ancestor::noframes"
    " or ancestor::nav or ancestor::aside"
    " or ancestor::*[self::header or self::footer][not(ancestor::article or ancestor::aside"
    " or ancestor::main or ancestor::nav or ancestor::section)]"
    f" or ancestor::*[{_LOWER} = 'navigation' or {_LOWER} = 'banner'"
    f" or {_LOWER} = 'contentinfo' or {_LOWER} = 'complementary'])]"
)

CONTENT_DROP_CHOICES = {"none": (), "exact": ("exact",), "near": ("near",),
                        "both": ("exact", "near")}


def visible_text(response):
    """The visible text of an HtmlResponse (lxml, through Scrapy's selector), or None for any
    other response: those get the exact test only."""
    if not isinstance(response, HtmlResponse):
        return None
    return " ".join(response.xpath(VISIBLE_TEXT_XPATH).getall())


class ContentSeenMiddleware:
    """Scrapy downloader middleware: the content-seen test of urlsieve (docs/embedding.md,
    "Scrapy: duplicate responses"). The dupefilter drops a request whose URL was seen; this
    notices a response whose content was seen, under any URL: the same bytes (an exact copy) or,
    for an HTML page, a visible text within a few bits of SimHash of an earlier page's (a near
    copy: another date, counter, session token, a few words edited, another template).

        # settings.py
        DOWNLOADER_MIDDLEWARES = {"urlsieve.scrapy.ContentSeenMiddleware": 50}
        URLSIEVE_CONTENT_ENABLED = True     # False: the middleware is not loaded (NotConfigured)
        URLSIEVE_CONTENT_MAX_DISTANCE = 3   # near: within this many bits of 64 (0..7)
        URLSIEVE_CONTENT_NEAR = True        # False: the exact test only
        URLSIEVE_CONTENT_DROP = "none"      # "none": mark; "exact", "near", "both": drop those
        URLSIEVE_CONTENT_SHINGLE_WORDS = 3  # SimHash's words per feature (1..16)
        # Optional: one set shared in Redis by every Scrapy process that names it, across crawls
        # (the password as for the dupefilter: in the URL, URLSIEVE_REDIS_PASSWORD_FILE, or
        # URLSIEVE_REDIS_PASSWORD / REDISCLI_AUTH in the environment).
        URLSIEVE_CONTENT_REDIS_URL = "redis://redis-host:6379/0"
        URLSIEVE_CONTENT_REDIS_NAME = "my-crawl-pages"

    Priority: below 100, so that process_response sees the final response (after the retry,
    redirect and decompression middlewares, 550-600): its decoded body is what is fingerprinted.

    Each 2xx response is tested (others, HEAD requests, robots.txt and requests with
    meta["urlsieve_content"] = False are not): its digest is urlsieve.payload_digest(body); for an
    HtmlResponse the SimHash of its own visible text too (VISIBLE_TEXT_XPATH: text nodes outside
    script, style, template, noscript, iframe, noembed, noframes and the site's template — nav,
    aside, page-wide header and footer, their ARIA roles —; the crawler's own rule), under its id
    response.url. A copy gets, in response.meta (= request.meta):
        meta["duplicate_of"] = URL of the first response with the same bytes, or
        meta["near_duplicate_of"] = URL of the first response with a near text, and
        meta["distance"] = the Hamming distance of their SimHashes (0..max_distance),
    is counted in the stats (urlsieve/content/exact, urlsieve/content/near; urlsieve/content/first
    for the others, urlsieve/content/dropped for those dropped), and, when URLSIEVE_CONTENT_DROP
    names its kind, dropped: IgnoreRequest, which Scrapy passes to the request's errback and
    otherwise drops silently. A response whose URL is the first copy's (fetched again with
    dont_filter) is a first. The first copy of a near group stands for it: a page is a near copy
    of the first page it is near, not of another near copy.

    A Redis fault raises urlsieve.UnavailableError from process_response (Scrapy logs it and the
    response is lost to the spider): the test has no "maybe". Without Redis the set lives in this
    process and is gone when the crawl ends (it does not persist in JOBDIR).
    """

    def __init__(self, crawler=None, *, max_distance=3, near=True, drop="none", shingle_words=3,
                 redis_url=None, redis_name=None):
        if drop not in CONTENT_DROP_CHOICES:
            choices = sorted(CONTENT_DROP_CHOICES)
            raise ValueError(f"URLSIEVE_CONTENT_DROP must be one of {choices}, not {drop!r}")
        self.crawler = crawler
        self.stats = crawler.stats if crawler is not None else None
        self.drop = CONTENT_DROP_CHOICES[drop]
        self.logger = logging.getLogger(__name__)
        if redis_url or redis_name:
            where = dict(redis=redis_url or None, name=redis_name or None)
        else:
            where = {}
        self.pages = ContentSeenSet(max_distance, near, shingle_words=shingle_words, **where)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("URLSIEVE_CONTENT_ENABLED", True):
            raise NotConfigured("URLSIEVE_CONTENT_ENABLED is False")
        mw = cls(
            crawler,
            max_distance=settings.getint("URLSIEVE_CONTENT_MAX_DISTANCE", 3),
            near=settings.getbool("URLSIEVE_CONTENT_NEAR", True),
            drop=(settings.get("URLSIEVE_CONTENT_DROP") or "none").lower(),
            shingle_words=settings.getint("URLSIEVE_CONTENT_SHINGLE_WORDS", 3),
            redis_url=_with_password_file(settings.get("URLSIEVE_CONTENT_REDIS_URL"),
                                          settings.get("URLSIEVE_REDIS_PASSWORD_FILE")),
            redis_name=settings.get("URLSIEVE_CONTENT_REDIS_NAME"),
        )
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def _tested(self, request, response):
        if not 200 <= response.status < 300 or request.method == "HEAD":
            return False
        if request.meta.get("urlsieve_content", True) is False:
            return False
        # robots.txt answers are the robots middleware's, never the spider's: never dropped.
        return not (request.meta.get("dont_obey_robotstxt") and
                    request.url.endswith("/robots.txt"))

    def process_response(self, request, response, spider):
        if not self._tested(request, response):
            return response
        verdict = self.pages.test(response.body, visible_text(response), response.url)
        self._inc(f"urlsieve/content/{verdict.kind}")
        if verdict.kind == "first":
            return response
        if verdict.kind == "exact":
            request.meta["duplicate_of"] = verdict.first_id
        else:
            request.meta["near_duplicate_of"] = verdict.first_id
            request.meta["distance"] = verdict.distance
        self.logger.debug("%s copy of %s: %s%s", verdict.kind, verdict.first_id, response,
                          f" ({verdict.distance} bits)" if verdict.kind == "near" else "",
                          extra={"spider": spider})
        if verdict.kind in self.drop:
            self._inc("urlsieve/content/dropped")
            what = (f"an exact copy of {verdict.first_id}" if verdict.kind == "exact" else
                    f"a near copy of {verdict.first_id} ({verdict.distance} bits)")
            raise IgnoreRequest(f"urlsieve: {response.url} is {what}")
        return response

    def _inc(self, key):
        if self.stats is not None:
            self.stats.inc_value(key)

    def spider_closed(self, spider, reason):
        if self.pages.closed:
            return
        pages = len(self.pages)
        name = self.pages.redis_name
        self.pages.close()
        self.logger.info("urlsieve: %d distinct payloads recorded%s", pages,
                         f" (Redis set {name!r})" if name else "")
