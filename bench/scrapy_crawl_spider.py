"""The Scrapy side of bench/crawl_vs_peers.sh: follows every link of one site, keeps nothing.

    python3 -m scrapy runspider bench/scrapy_crawl_spider.py \\
        -a start_url=http://127.0.0.1:PORT/index.html

Settings are Scrapy's best for a local static site (16 concurrent requests, no delay, no robots,
no cookies); the crawl script may override them with -s.
"""

from urllib.parse import urlsplit

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class SiteSpider(CrawlSpider):
    name = "site"
    custom_settings = {
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": False,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        "DEPTH_LIMIT": 100,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }
    rules = (Rule(LinkExtractor(), follow=True),)

    def __init__(self, start_url, *args, **kwargs):
        # Scrapy's offsite filter matches hosts, not ports: the host alone keeps the crawl on-site.
        self.start_urls = [start_url]
        self.allowed_domains = [urlsplit(start_url).hostname]
        super().__init__(*args, **kwargs)
