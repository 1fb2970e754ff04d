"""A Scrapy crawl of given URLs, one at a time in the given order (test_scrapy_content.py runs it
in a subprocess), recording what the spider received.

    python3 content_spider.py OUT_JSON SETTINGS_JSON URL...

OUT_JSON gets {"received": [{"url", "duplicate_of", "near_duplicate_of", "distance"}...],
"errback": [url...], "stats": {...}}: the responses the callback saw with their marks, the
requests whose errback got an IgnoreRequest, and the crawler's stats at close.
"""

import json
import sys

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.exceptions import IgnoreRequest


class ContentSpider(scrapy.Spider):
    name = "content"

    def __init__(self, urls, out, **kwargs):
        super().__init__(**kwargs)
        self.urls = urls
        self.out = out
        self.received = []
        self.dropped = []

    def start_requests(self):
        # Decreasing priorities, one request at a time (CONCURRENT_REQUESTS = 1): fetched in order.
        for i, url in enumerate(self.urls):
            yield scrapy.Request(url, callback=self.parse, errback=self.failed,
                                 priority=len(self.urls) - i, dont_filter=True)

    def parse(self, response):
        self.received.append({
            "url": response.url,
            "duplicate_of": response.meta.get("duplicate_of"),
            "near_duplicate_of": response.meta.get("near_duplicate_of"),
            "distance": response.meta.get("distance"),
        })

    def failed(self, failure):
        if failure.check(IgnoreRequest):
            self.dropped.append(failure.request.url)

    def closed(self, reason):
        with open(self.out, "w") as f:
            json.dump({"received": self.received, "errback": self.dropped,
                       "stats": {k: v for k, v in self.crawler.stats.get_stats().items()
                                 if isinstance(v, (int, float, str))}}, f)


def main():
    out, settings, urls = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
    base = {
        "LOG_LEVEL": "DEBUG",
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "HTTPPROXY_ENABLED": False,  # never route 127.0.0.1 through an environment proxy
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        "CONCURRENT_REQUESTS": 1,
        "DOWNLOADER_MIDDLEWARES": {"urlsieve.scrapy.ContentSeenMiddleware": 50},
    }
    process = CrawlerProcess(settings={**base, **settings})
    process.crawl(ContentSpider, urls=urls, out=out)
    process.start()


if __name__ == "__main__":
    main()
