#!/usr/bin/env python3
"""Independent WARC 1.1 checker (Python standard library only), in the spirit of `warcio check`.

Reads a .warc.gz member by member (each gzip member must hold exactly one record), checks the
record syntax, Content-Length, WARC-Block-Digest and WARC-Payload-Digest (sha1, base32) and that
every request names its response in WARC-Concurrent-To. Prints one line per record
("<offset> <type> <target-uri>") and exits 1 with a message on the first problem.
"""
import base64
import hashlib
import sys
import zlib


def digest(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def fail(offset, message):
    print(f"{offset}: {message}", file=sys.stderr)
    sys.exit(1)


def main(path):
    data = open(path, "rb").read()
    pos = 0
    ids = set()
    concurrent = []
    while pos < len(data):
        offset = pos
        d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        text = d.decompress(data[pos:])
        if not d.eof:
            fail(offset, "truncated gzip member")
        pos = len(data) - len(d.unused_data)
        head, sep, rest = text.partition(b"\r\n\r\n")
        if not sep:
            fail(offset, "no end of WARC headers")
        lines = head.split(b"\r\n")
        if lines[0] != b"WARC/1.1":
            fail(offset, f"bad version line {lines[0]!r}")
        headers = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon:
                fail(offset, f"bad header line {line!r}")
            headers[name.decode().lower()] = value.strip().decode()
        for required in ("warc-type", "warc-record-id", "warc-date", "content-length"):
            if required not in headers:
                fail(offset, f"missing {required}")
        length = int(headers["content-length"])
        block, trailer = rest[:length], rest[length:]
        if trailer != b"\r\n\r\n":
            fail(offset, "member holds more or less than one record")
        if headers.get("warc-block-digest") != digest(block):
            fail(offset, "block digest mismatch")
        if "warc-payload-digest" in headers:
            http_head, sep, payload = block.partition(b"\r\n\r\n")
            if not sep or headers["warc-payload-digest"] != digest(payload):
                fail(offset, "payload digest mismatch")
            if not http_head.startswith(b"HTTP/"):
                fail(offset, "response block is not an HTTP message")
        ids.add(headers["warc-record-id"])
        if "warc-concurrent-to" in headers:
            concurrent.append((offset, headers["warc-concurrent-to"]))
        print(offset, headers["warc-type"], headers.get("warc-target-uri", "-"))
    for offset, target in concurrent:
        if target not in ids:
            fail(offset, f"WARC-Concurrent-To {target} names no record")


if __name__ == "__main__":
    main(sys.argv[1])
