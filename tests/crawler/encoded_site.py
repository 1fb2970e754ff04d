#!/usr/bin/python3
"""The encoded test site and what a browser requests from it, for crawl_encoding_test.cc.

    encoded_site.py OUT_DIR

writes
  OUT_DIR/site/manifest.tsv   one line per resource the site serves (tools/site_server/encoded_site.h):
                              <resource>\t<content type>\t<body file>
                              resource = percent-decoded path, then "?" and the raw query (what
                              SiteRequest::resource holds); anything else gets a 404
  OUT_DIR/site/bodies/N.html  the bodies, byte for byte as sent
  OUT_DIR/expected.json       {"requests": {target: encoding or null}, "encodings": {name: pages},
                               "canon": [{"encoding", "base", "refs": [...], "keys": [...]}]}

Every byte here comes from Python's codecs, and every request target from urllib.parse.quote, never
from the crawler's code (which uses iconv): an independent oracle of what a browser does.
  - A page's bytes: its text encoded with Python's codec for its encoding (UTF-16 with a BOM).
  - A link's target (WHATWG URL Standard, basic URL parser): the path as UTF-8 percent-encoded;
    the query in the page's output encoding (Encoding Standard §4.3: UTF-8 for UTF-16 pages),
    percent-encoded with the query percent-encode set of special schemes; a code point the encoding
    cannot represent becomes %26%23<decimal>%3B ("percent-encode after encoding", the "&#N;" an
    HTML form sends, with its '&', '#' and ';' percent-encoded too). Note that
    quote(s.encode(enc, 'xmlcharrefreplace')) is not that: it leaves '&' and ';' as they are.
  - Only characters on which Python's codec agrees with the Encoding Standard's index are used:
    each encoded character is checked against a second codec of the same family (GBK against
    gb18030's two-byte range; Shift_JIS against cp932 = windows-31j, the Standard's index). Python's
    gbk lacks U+20AC (0x80 in the Standard's GBK), so no euro sign on GBK pages.
  - The ASCII characters of paths and queries are letters, digits and "/._-=& ", and a multi-byte
    character's trail bytes in the ASCII range are letters or digits, so that a target tests the
    encoding alone and not which ASCII punctuation a canonicalizer leaves raw.

The generator runs at test time (/usr/bin/python3, the standard library only): the expectations are
computed from the same page texts that make the site, so they cannot drift apart, and no binary
fixture files are committed.
"""

import codecs
import html
import json
import os
import sys
import urllib.parse

ORIGIN_FOR_CANON = "http://example.com"

# The URL Standard's query percent-encode set for special schemes: C0 controls, space, '"', '#',
# '<', '>', "'", and everything above U+007E. Its complement within printable ASCII stays raw.
QUERY_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in "\"#<>'")
ASCII_ALLOWED_IN_PATH = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-")
ASCII_ALLOWED_IN_QUERY = ASCII_ALLOWED_IN_PATH - {"/"} | set("=& ")

# Encoding Standard name -> Python codec (the page's bytes), and its cross-check codec.
CODECS = {
    "UTF-8": ("utf-8", None),
    "GBK": ("gbk", "gb18030"),
    "Shift_JIS": ("shift_jis", "cp932"),
    "windows-1251": ("cp1251", None),
    "windows-1252": ("cp1252", None),
    "UTF-16LE": ("utf-16-le", None),
    "UTF-16BE": ("utf-16-be", None),
}
OUTPUT_ENCODING = {"UTF-16LE": "UTF-8", "UTF-16BE": "UTF-8"}  # Encoding Standard §4.3
BOMS = {"UTF-16LE": codecs.BOM_UTF16_LE, "UTF-16BE": codecs.BOM_UTF16_BE}


def encode_char(c, encoding):
    """The bytes of `c` in `encoding` (an Encoding Standard name), or None when unrepresentable."""
    codec, check = CODECS[encoding]
    try:
        data = c.encode(codec)
    except UnicodeEncodeError:
        return None
    if check is not None:
        other = c.encode(check)
        assert data == other, f"{c!r}: {codec} gives {data!r}, {check} gives {other!r}: pick another"
    return data


def path_target(path):
    """The path as a browser sends it: UTF-8, percent-encoded."""
    for c in path:
        assert ord(c) > 0x7F or c in ASCII_ALLOWED_IN_PATH, f"path {path!r}: avoid {c!r}"
    return urllib.parse.quote(path.encode("utf-8"), safe="/")


def query_target(query, encoding):
    """The query as a browser sends it from a page in `encoding` (URL Standard, query state)."""
    output = OUTPUT_ENCODING.get(encoding, encoding)
    out = []
    for c in query:
        if ord(c) <= 0x7F:
            assert c in ASCII_ALLOWED_IN_QUERY, f"query {query!r}: avoid {c!r}"
            out.append(urllib.parse.quote(c, safe=QUERY_SAFE))
            continue
        data = encode_char(c, output)
        if data is None:  # percent-encode after encoding: "&#N;", percent-encoded
            out.append("%26%23" + str(ord(c)) + "%3B")
            continue
        for b in data:
            assert b >= 0x80 or chr(b).isalnum(), f"{c!r} in {output}: trail byte {b:#x}"
        out.append(urllib.parse.quote(data, safe=QUERY_SAFE))
    return "".join(out)


def target_of(href_html, page_path, encoding):
    """The request target of the link <a href="href_html"> on the page at page_path."""
    ref = html.unescape(href_html)  # what the HTML parser hands to the URL parser
    absolute = urllib.parse.urljoin(page_path, ref)
    path, _, query = absolute.partition("?")
    target = path_target(path)
    if "?" in absolute:
        target += "?" + query_target(query, encoding)
    return target


def resource_of(target):
    """SiteRequest::resource of a request for `target`: the path percent-decoded, the query raw."""
    path, sep, query = target.partition("?")
    return urllib.parse.unquote(path) + sep + query


class Site:
    def __init__(self):
        self.resources = []  # (resource, content type, body bytes)
        self.requests = {}  # target -> encoding the page is read in (None: not a page)

    def add(self, target, content_type, body, encoding):
        assert target not in self.requests, f"{target} twice"
        resource = resource_of(target)
        assert "\t" not in resource and "\n" not in resource and "\t" not in content_type
        self.resources.append((resource, content_type, body))
        self.requests[target] = encoding

    def page(self, path, encoding, content_type, head, links, text="", raw=None):
        """A page at `path` in `encoding` linking `links` (href attribute values, as in the HTML
        source), each to a small UTF-8 page that exists only under its browser-encoded target.
        `raw` replaces the marker "@RAW@" in the encoded bytes (undecodable bytes)."""
        anchors = "".join(f'<li><a href="{href}">{i}</a></li>\n' for i, href in enumerate(links))
        source = (f"<!DOCTYPE html>\n<html><head>{head}<title>{encoding}</title></head>\n"
                  f"<body><p>{text}</p>\n<ul>\n{anchors}</ul></body></html>\n")
        codec = CODECS[encoding][0]
        body = BOMS.get(encoding, b"") + source.encode(codec)
        if raw is not None:
            marker = "@RAW@".encode(codec)
            assert body.count(marker) == 1
            body = body.replace(marker, raw)
        self.add(path_target(path), content_type, body, encoding)
        for href in links:
            target = target_of(href, path, encoding)
            assert "%EF%BF%BD" not in target
            if target not in self.requests:
                leaf = b"<!DOCTYPE html>\n<title>leaf</title><p>the right bytes</p>\n"
                self.add(target, "text/html; charset=utf-8", leaf, "UTF-8")

    def write(self, out_dir):
        site_dir = os.path.join(out_dir, "site")
        os.makedirs(os.path.join(site_dir, "bodies"), exist_ok=True)
        with open(os.path.join(site_dir, "manifest.tsv"), "w", encoding="utf-8") as manifest:
            for i, (resource, content_type, body) in enumerate(self.resources):
                name = f"bodies/{i}.html"
                with open(os.path.join(site_dir, name), "wb") as f:
                    f.write(body)
                manifest.write(f"{resource}\t{content_type}\t{name}\n")


def build():
    site = Site()
    site.add("/robots.txt", "text/plain", b"User-agent: *\nAllow: /\n", None)
    pages = [  # path, encoding, Content-Type, <head> markup, links, text[, raw bytes]
        # The example: <meta charset="gbk">, the page itself at a non-ASCII path, and a
        # relative link resolved against it.
        ("/gbk/首页.html", "GBK", "text/html", '<meta charset="gbk">',
         ["/搜索/页面.html?q=中文", "子页.html?q=中文&amp;页=2", "/新闻?标题=足球&amp;n=1"],
         "中文网页"),
        # An http-equiv declaration with the label gb2312 (-> GBK).
        ("/gb2312.html", "GBK", "text/html",
         '<meta http-equiv="Content-Type" content="text/html; charset=gb2312">',
         ["/体育/篮球.html?队=北京"], "简体中文"),
        # Shift_JIS from the HTTP charset, trail bytes in the ASCII range (テ = 83 65 = "%83e"),
        # and a character Shift_JIS lacks (Hangul): "&#54620;" in the query.
        ("/sjis.html", "Shift_JIS", "text/html; charset=Shift_JIS", "",
         ["/検索/ページ.html?q=東京&amp;kana=テスト&amp;k=&#54620;"], "日本語のページ"),
        # windows-1251: a character it lacks written as a character reference (é), in the path
        # (UTF-8 like every path) and the query ("&#233;" -> %26%23233%3B), and one it has (Ж).
        ("/cp1251.html", "windows-1251", "text/html; charset=windows-1251", "",
         ["/поиск/caf&#233;.html?город=Москва&amp;знак=&#233;&amp;буква=&#1046;"], "Русский"),
        # ISO-8859-1 is windows-1252: the euro sign is byte 0x80 on the page, U+20AC, so %E2%82%AC
        # in the path and %80 in the query (read as ISO-8859-1 it would be U+0080: %C2%80).
        ("/latin1.html", "windows-1252", "text/html; charset=ISO-8859-1", "",
         ["/prix/€/naïve.html?q=crème brûlée&amp;devise=€"], "Français"),
        # UTF-16LE with a BOM: the BOM wins over the HTTP charset; queries in UTF-8 (§4.3).
        ("/utf16le.html", "UTF-16LE", "text/html; charset=windows-1252", "",
         ["/검색/페이지.html?q=한국어&amp;e=€"], "한국어 페이지"),
        ("/utf16be.html", "UTF-16BE", "text/html", "",
         ["/ελληνικά/σελίδα.html?q=αθήνα"], "Ελληνικά"),
        # The HTTP charset and the <meta> disagree: HTTP wins. Read as KOI8-R, the windows-1251
        # bytes would be other Cyrillic letters (a wrong path, a 404), not U+FFFD.
        ("/http-wins.html", "windows-1251", "text/html; charset=windows-1251",
         '<meta charset="koi8-r">', ["/каталог/книги.html?автор=Толстой"], "Книги"),
        # No declaration at all: the default, windows-1252.
        ("/undeclared.html", "windows-1252", "text/html", "",
         ["/übersicht/größe.html?straße=Köln&amp;preis=€"], "Übersicht"),
        # A <meta charset> inside a comment is not a declaration; the one after it is.
        ("/comment-meta.html", "windows-1251", "text/html",
         '<!-- <meta charset="utf-8"> --><meta charset="windows-1251">',
         ["/новости/сегодня.html?тема=погода"], "Новости"),
        # UTF-8 for contrast: the same href as on the GBK page, another query.
        ("/utf8.html", "UTF-8", "text/html; charset=utf-8", "",
         ["/搜索/页面.html?q=中文", "/café/menu.html?plat=crème"], "UTF-8"),
        # An undecodable byte (0xFF is no GBK lead byte) before the link: replaced, not fatal.
        ("/broken-gbk.html", "GBK", "text/html; charset=gbk", "",
         ["/损坏/之后.html?q=好"], "坏@RAW@ 字节", b"\xff"),
    ]
    index_links = []
    for path, encoding, content_type, head, links, text, *raw in pages:
        site.page(path, encoding, content_type, head, links, text, raw[0] if raw else None)
        index_links.append(path)
    # The seed: a UTF-8 index linking every page by its path written as is.
    site.page("/", "UTF-8", "text/html; charset=utf-8", "", index_links, "index")

    encodings = {}
    for encoding in site.requests.values():
        if encoding is not None:
            encodings[encoding] = encodings.get(encoding, 0) + 1

    # `urlsieve canon --encoding LABEL --base BASE`: a relative reference per line (text, not HTML).
    canon = []
    for label, encoding, base, refs in [
        ("gbk", "GBK", "/gbk/首页.html", ["/搜索/页面.html?q=中文", "子页.html?q=中文&页=2"]),
        ("shift_jis", "Shift_JIS", "/", ["/検索/ページ.html?q=東京&kana=テスト&k=한"]),
        ("windows-1251", "windows-1251", "/", ["/поиск/café.html?город=Москва&знак=é"]),
        ("latin1", "windows-1252", "/", ["/prix/€/naïve.html?q=crème brûlée&devise=€"]),
        ("utf-16le", "UTF-16LE", "/", ["/검색/페이지.html?q=한국어&e=€"]),
        ("utf-8", "UTF-8", "/", ["/搜索/页面.html?q=中文"]),
    ]:
        keys = [ORIGIN_FOR_CANON + target_of(html.escape(ref), base, encoding) for ref in refs]
        canon.append({"encoding": label, "base": ORIGIN_FOR_CANON + path_target(base),
                      "refs": refs, "keys": keys})
    return site, {"requests": site.requests, "encodings": encodings, "canon": canon}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: encoded_site.py OUT_DIR")
    out_dir = sys.argv[1]
    site, expected = build()
    site.write(out_dir)
    with open(os.path.join(out_dir, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
