#!/usr/bin/python3
"""Expected results of UrlCanonicalizer::Resolve with a document encoding, computed by Python.

The C++ test (url_canonicalizer_encoding_test.cc) includes query_encoding_cases.inc, which this
script writes; the expectations come from Python's codecs and urllib.parse, not from urlsieve:

  - the path (everything but the query) is UTF-8, percent-encoded (urllib.parse.quote);
  - the reference's query is encoded in the document's *output* encoding (Encoding Standard §4.3:
    UTF-16BE/LE -> UTF-8) and percent-encoded, a code point the encoding lacks as "&#N;"
    percent-encoded whole, "%26%23N%3B" (URL Standard §1.3 "percent-encode after encoding";
    Python: ch.encode(codec, 'xmlcharrefreplace') then quote(..., safe=''));
  - the bytes left literal: the URL Standard's special-query set leaves more literal than RFC 3986
    allows (" \\ ^ ` { | } [ ]"); urlsieve encodes those too, to keep a valid URI
    (docs/features/canonicalization.md, "Canonicalization"), so SAFE below is RFC 3986's query
    characters minus "'";
  - ASCII in the reference stays as written ("%D6" stays "%D6"), and a query taken from the base is
    not re-encoded (it is UTF-8 percent-encoded as the base spells it).

Usage: query_encoding_cases.py [--check]   (writes the .inc next to this file, or checks it is
current; a ctest runs --check).
"""
import os
import sys
import urllib.parse

# RFC 3986 §3.4 query characters (pchar / "/" / "?") minus "'"; quote() always keeps A-Za-z0-9_.-~
SAFE = "!$&()*+,;=:@/?"
PATH_SAFE = "!$&'()*+,;=:@/"

# The Encoding Standard name -> (Python codec of its output encoding). UTF-16 documents send UTF-8.
OUTPUT_CODEC = {
    "UTF-8": "utf-8",
    "GBK": "gbk",
    "Shift_JIS": "shift_jis",
    "windows-1251": "cp1251",
    "windows-1252": "cp1252",
    "UTF-16LE": "utf-8",
    "UTF-16BE": "utf-8",
}
# The label the test passes to EncodingForLabel -> the Encoding Standard's name.
LABEL_ENCODING = {
    "utf-8": "UTF-8",
    "gbk": "GBK",
    "gb2312": "GBK",
    "shift_jis": "Shift_JIS",
    "sjis": "Shift_JIS",
    "windows-1251": "windows-1251",
    "windows-1252": "windows-1252",
    "latin1": "windows-1252",
    "iso-8859-1": "windows-1252",
    "utf-16le": "UTF-16LE",
    "utf-16be": "UTF-16BE",
}

# (label, base, reference). Characters chosen where Python's codecs and the Encoding Standard's
# index agree (not "€" in GBK, "～" in Shift_JIS, or the five unassigned windows-1252 bytes).
CASES = [
    # The example: a GBK page linking to /搜索/页面.html?q=中文.
    ("gbk", "http://example.com/index.html", "/搜索/页面.html?q=中文"),
    ("gb2312", "http://example.com/index.html", "/搜索/页面.html?q=中文&page=2"),
    ("gbk", "http://example.com/dir/index.html", "页面.html?q=中#片段"),
    ("gbk", "http://example.com/a/b/c.html", "../子/页.html?q=é&r=中"),
    ("gbk", "http://example.com/", "/p?q=‽"),  # unmappable: %26%238253%3B
    ("gbk", "http://example.com/", "/p?q=😀"),  # beyond the BMP: %26%23128512%3B
    ("gbk", "http://example.com/", "/p?a=%E4%B8%AD&b=中"),  # written escapes stay
    ("gbk", "http://example.com/", "/p?q='中'"),  # the special-query set's "'"
    ("gbk", "http://example.com/", "/p?q=中 文"),
    ("gbk", "http://example.com/", "/p?q=ascii&only=1"),
    ("gbk", "http://example.com/", "https://other.example/路径?q=中"),
    ("gbk", "http://example.com/", "//other.example/路径?q=中"),
    ("gbk", "http://example.com/p?old=1", "?q=中"),
    # Shift_JIS: the URL Standard's own examples (≡ -> %81%DF, ‽ -> %26%238253%3B), and trail bytes
    # that are ASCII ("ソ" is 0x83 0x5C, "ァ" is 0x83 0x40).
    ("shift_jis", "http://example.jp/", "/検索?q=≡"),
    ("shift_jis", "http://example.jp/", "/検索?q=‽"),
    ("sjis", "http://example.jp/", "/p?q=日本語&k=ソ表"),
    ("shift_jis", "http://example.jp/", "/p?q=ァ"),
    ("shift_jis", "http://example.jp/", "/p?q=¥"),
    # windows-1251: Cyrillic is mapped; CJK and "é" are not.
    ("windows-1251", "http://example.ru/", "/поиск?q=Привет"),
    ("windows-1251", "http://example.ru/", "/поиск?q=中"),
    ("windows-1251", "http://example.ru/", "/p?q=café&e=€"),
    # windows-1252 (and the labels that name it): é -> %E9.
    ("windows-1252", "http://example.com/", "/café?q=é"),
    ("latin1", "http://example.com/", "/p?q=€ß"),
    ("iso-8859-1", "http://example.com/", "/p?q=中&x=й"),
    # UTF-16 documents: the output encoding is UTF-8.
    ("utf-16le", "http://example.com/", "/路径?q=é中"),
    ("utf-16be", "http://example.com/", "/p?q=‽"),
    ("utf-8", "http://example.com/", "/路径?q=é中"),
    # A query taken from the base is the base's, not re-encoded.
    ("gbk", "http://example.com/p?q=%D6%D0", ""),
    ("gbk", "http://example.com/p?q=中", "#top"),
    ("windows-1252", "http://example.com/p?q=é", "#top"),
]


def encode_query(query, codec, from_base):
    if from_base:  # as written in the base: UTF-8, escapes kept
        return urllib.parse.quote(query, safe=SAFE + "%")
    out = []
    for ch in query:
        if ord(ch) < 0x80:
            out.append(urllib.parse.quote(ch, safe=SAFE + "%"))
            continue
        encoded = ch.encode(codec, "xmlcharrefreplace")
        if encoded.startswith(b"&#"):  # not in the encoding: "&#N;", every byte escaped
            out.append(urllib.parse.quote(encoded, safe=""))
        else:
            out.append(urllib.parse.quote(encoded, safe=SAFE))
    return "".join(out)


def expected(label, base, reference):
    codec = OUTPUT_CODEC[LABEL_ENCODING[label]]
    ref, _, _fragment = reference.partition("#")
    ref_path, has_query, query = ref.partition("?")
    base_rest, base_has_query, base_query = base.partition("?")
    if ref == "" or (ref_path == "" and not has_query):
        path_url = base_rest
        has_query, query, from_base = base_has_query, base_query, True
    else:
        # RFC 3986 §5.2 on the ASCII (UTF-8 percent-encoded) path: urllib's urljoin.
        quoted = urllib.parse.quote(ref_path, safe=PATH_SAFE)
        path_url = urllib.parse.urljoin(base, quoted) if ref_path else base_rest
        from_base = False
    if not has_query:
        return path_url
    return path_url + "?" + encode_query(query, codec, from_base)


def c_literal(text):
    # UTF-8 as it is (the C++ source is UTF-8), so a reader sees the characters.
    assert all(ch >= " " for ch in text)
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def render():
    lines = [
        "// Generated by tests/url/query_encoding_cases.py: do not edit; run the script.",
        "// {label, base, reference, expected Resolve result}",
    ]
    for label, base, reference in CASES:
        lines.append("{%s, %s, %s,\n %s}," % (c_literal(label), c_literal(base),
                                              c_literal(reference),
                                              c_literal(expected(label, base, reference))))
    return "\n".join(lines) + "\n"


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "query_encoding_cases.inc")
    text = render()
    if sys.argv[1:] == ["--check"]:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                sys.exit("%s is stale: run %s" % (path, sys.argv[0]))
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
