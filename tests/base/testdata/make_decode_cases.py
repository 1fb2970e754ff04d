#!/usr/bin/python3
"""Writes decode_cases.tsv: byte strings in legacy encodings and the UTF-8 a browser reads them as.

The expectations come from Python's codecs (independent of glibc iconv, which urlsieve decodes
with), plus the few rules of the WHATWG Encoding Standard where Python's codec differs, each
written out below. Run with /usr/bin/python3 from this directory; the output is committed.

Columns (tab-separated): kind, label, input (hex), expected UTF-8 (hex), note.
  kind "decode": DecodeToUtf8(input, EncodingForLabel(label)) must give the expected bytes.
  kind "page": DecodedPage::Decode(input, content_type=label) must give them (BOM sniffing);
               the note is then the encoding name it must report.
"""
import sys

rows = []


def decode(label, data, expected, note=""):
    rows.append(("decode", label, data.hex(), expected.encode("utf-8").hex(), note))


def page(content_type, data, expected, encoding):
    rows.append(("page", content_type, data.hex(), expected.encode("utf-8").hex(), encoding))


def text(label, codec, s):
    """`s` encoded by Python's `codec` decodes back to `s` under the WHATWG `label`."""
    decode(label, s.encode(codec), s, "text via %s" % codec)


# Text in the encodings of the issue, with the characters of its example.
text("gbk", "gbk", "<a href=\"/搜索/页面.html?q=中文\">中文网页</a>")
text("gb2312", "gb2312", "简体中文的网页")
text("gb18030", "gb18030", "四字节：😀 ǹ €")
text("shift_jis", "cp932", "<a href=\"/検索?q=日本語\">日本語のページ</a>")
text("windows-1251", "cp1251", "Привет, мир! Ёё Її")
text("iso-8859-2", "iso8859_2", "Zażółć gęślą jaźń ŁĄ")
text("euc-kr", "euc_kr", "한국어 웹 페이지")
text("big5", "big5", "繁體中文網頁")
text("euc-jp", "euc_jp", "日本語のページ")
text("iso-2022-jp", "iso2022_jp", "日本語 and ASCII")
text("koi8-r", "koi8_r", "Русский текст")
text("windows-1252", "cp1252", "café “quoted” – €100 ÿ")
text("latin1", "cp1252", "naïve façade")
text("utf-16le", "utf-16-le", "UTF-16 中文 😀")
text("utf-16be", "utf-16-be", "UTF-16 中文 😀")
text("utf-8", "utf-8", "UTF-8 中文 😀")
# GBK's decoder is gb18030's (Encoding Standard §10.1.1): four-byte sequences decode.
decode("gbk", "😀".encode("gb18030"), "😀", "gbk decodes gb18030's four-byte sequences")

# Every high byte of each single-byte encoding, as Python's codec reads it (errors='replace'),
# with the Encoding Standard's differences from Python applied.
SINGLE = {"ibm866": "cp866", "iso-8859-2": "iso8859_2", "iso-8859-3": "iso8859_3",
          "iso-8859-4": "iso8859_4", "iso-8859-5": "iso8859_5", "iso-8859-6": "iso8859_6",
          "iso-8859-7": "iso8859_7", "iso-8859-8": "iso8859_8", "iso-8859-8-i": "iso8859_8",
          "iso-8859-10": "iso8859_10", "iso-8859-13": "iso8859_13", "iso-8859-14": "iso8859_14",
          "iso-8859-15": "iso8859_15", "iso-8859-16": "iso8859_16", "koi8-r": "koi8_r",
          "koi8-u": "koi8_u", "macintosh": "mac_roman", "windows-874": "cp874",
          "windows-1250": "cp1250", "windows-1251": "cp1251", "windows-1252": "cp1252",
          "windows-1253": "cp1253", "windows-1254": "cp1254", "windows-1255": "cp1255",
          "windows-1256": "cp1256", "windows-1257": "cp1257", "windows-1258": "cp1258",
          "x-mac-cyrillic": "mac_cyrillic"}
WHATWG_DIFFERENCES = {
    # index-koi8-u.txt: KOI8-U as browsers read it has ў and Ў (KOI8-RU) at 0xAE and 0xBE.
    ("koi8-u", 0xAE): "\u045e", ("koi8-u", 0xBE): "\u040e",
    # index-windows-1255.txt: 0xCA is HEBREW POINT HOLAM HASER FOR VAV (Python: undefined).
    ("windows-1255", 0xCA): "\u05ba",
}
for label, codec in SINGLE.items():
    high = bytes(range(0x80, 0x100))
    expected = []
    for b in high:
        c = bytes([b]).decode(codec, "replace")
        c = WHATWG_DIFFERENCES.get((label, b), c)
        # The windows-* indexes map the bytes Microsoft left undefined in 0x80-0x9F to the C1
        # controls (index-windows-1252.txt: 0x81 -> U+0081); Python's codecs refuse them.
        if label.startswith("windows-") and c == "\ufffd" and b <= 0x9F:
            c = chr(b)
        expected.append(c)
    decode(label, high, "".join(expected), "bytes 0x80-0xFF via %s" % codec)
decode("x-user-defined", bytes(range(0x78, 0x88)),
       "".join(chr(b) if b < 0x80 else chr(0xF780 + b - 0x80) for b in range(0x78, 0x88)),
       "Encoding Standard §14.5: 0x80-0xFF -> U+F780-U+F7FF")

# Invalid and cut-off input: one U+FFFD per bad sequence, as Python's 'replace' gives it.
def broken(label, codec, data, note):
    decode(label, data, data.decode(codec, "replace"), note)


broken("gbk", "gb18030", b"\xd6\xd0\xff\x41\xce\xc4", "an invalid lead byte")
broken("gbk", "gb18030", b"\xd6\xd0\xce", "a lead byte cut off by the end")
broken("shift_jis", "cp932", b"\x93\xfa\x81\x20\x96\x7b\x93", "a lead byte before ASCII, a cut-off pair")
broken("euc-kr", "euc_kr", b"\xc7\xd1\xff\xb1", "an invalid byte, then a cut-off pair")
broken("big5", "big5", b"\xa4\xa4\xff\xa4", "an invalid byte, then a cut-off pair")
# A lone 0x80: U+20AC in gb18030 and GBK (Encoding Standard §10.2.1 step 5; Python's codecs
# refuse it), U+0080 in Shift_JIS (Python's cp932 agrees).
decode("gbk", b"a\x80b", "a\u20acb", "Encoding Standard: 0x80 is the euro sign")
broken("shift_jis", "cp932", b"a\x80b", "0x80 is U+0080")
broken("utf-8", "utf-8", b"a\xe4\xb8b\xf0\x9f\x98\x80\xed\xa0\x80\xc0\xaf\xf4\x90\x80\x80z",
       "maximal subparts: cut, surrogate, overlong, past U+10FFFF")
broken("utf-8", "utf-8", b"ok\xe4\xb8", "a sequence cut off by the end")
broken("utf-16le", "utf-16-le", b"a\x00\x00\xd8b\x00\x00\xdc", "lone surrogates")
broken("utf-16be", "utf-16-be", b"\x00a\x00", "an odd last byte")
broken("iso-8859-3", "iso8859_3", b"a\xa5b", "a byte ISO-8859-3 leaves undefined")
decode("gbk", b"", "", "empty input")
decode("utf-16le", b"", "", "empty input")

# Pages: the BOM decides and is not part of the text (Encoding Standard §6 "decode").
s = "<a href=\"/页面?q=中文\">BOM</a>"
page("", b"\xff\xfe" + s.encode("utf-16-le"), s, "UTF-16LE")
page("", b"\xfe\xff" + s.encode("utf-16-be"), s, "UTF-16BE")
page("text/html; charset=gbk", b"\xfe\xff" + s.encode("utf-16-be"), s, "UTF-16BE")
page("text/html; charset=shift_jis", b"\xef\xbb\xbf" + s.encode("utf-8"), s, "UTF-8")
page("text/html; charset=gbk", s.encode("gbk"), s, "GBK")
page("text/html", b"<meta charset=gb2312>" + s.encode("gbk"), "<meta charset=gb2312>" + s, "GBK")
page("", b"<p>caf\xe9</p>", "<p>café</p>", "windows-1252")

with open("decode_cases.tsv", "w", encoding="utf-8", newline="\n") as out:
    out.write("# Generated by make_decode_cases.py from Python %s's codecs; do not edit.\n"
              % sys.version.split()[0])
    for row in rows:
        out.write("\t".join(row) + "\n")
