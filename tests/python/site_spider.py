"""A Scrapy crawl of the test site (test_scrapy_dupefilter.py runs it in a subprocess).

    python3 site_spider.py START_URL SETTINGS_JSON [extras]

Follows every <a href>; with "extras", each page also POSTs the form /form with q = page % 3 (three
distinct bodies), and page 5 requests /p/0 again with dont_filter=True.
"""

import json
import re
import sys

import scrapy
from scrapy.crawler import CrawlerProcess


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, start, extras=False, **kwargs):
        super().__init__(**kwargs)
        self.start = start
        self.extras = extras

    def start_requests(self):
        # Filtered like any request, so a resumed job does not fetch its start page again.
        yield scrapy.Request(self.start, callback=self.parse)

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)
        if not self.extras:
            return
        page = int(re.search(r"page (-?\d+)", response.text).group(1))
        if page < 0:
            return
        yield scrapy.FormRequest(response.urljoin("/form"), formdata={"q": str(page % 3)},
                                 callback=self.ignore)
        if page == 5:
            yield scrapy.Request(response.urljoin("/p/0"), dont_filter=True, callback=self.ignore)

    def ignore(self, response):
        pass


def main():
    start, settings = sys.argv[1], json.loads(sys.argv[2])
    extras = len(sys.argv) > 3 and sys.argv[3] == "extras"
    base = {
        "LOG_LEVEL": "DEBUG",
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "HTTPPROXY_ENABLED": False,  # never route 127.0.0.1 through an environment proxy
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }
    process = CrawlerProcess(settings={**base, **settings})
    process.crawl(SiteSpider, start=start, extras=extras)
    process.start()


if __name__ == "__main__":
    main()
