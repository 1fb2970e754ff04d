#!/usr/bin/env python3
"""Independent WARC 1.1 checker (Python standard library only), in the spirit of `warcio check`.

    warc_check.py [--allow-unreferenced-revisits] FILE.warc.gz [FILE.warc.gz ...]

Reads each .warc.gz member by member (each gzip member must hold exactly one record), checks the
record syntax, Content-Length, WARC-Block-Digest (required on every record we write but a response,
where it is checked when present) and WARC-Payload-Digest (sha1, base32), and that every request
names a record in WARC-Concurrent-To.

A response with status 200 and an empty payload whose Content-Length (or X-Crawler-Content-Length,
the server's value a writer kept) names a length other than 0 must carry WARC-Truncated: else a
replay shows an empty 200 as the complete answer (docs/features/content-seen.md, "Non-HTML
bodies").

Revisit records (WARC 1.1 §6.7): WARC-Profile is server-not-modified (then the status is 304) or
identical-payload-digest; the block is an HTTP response head and nothing else; WARC-Truncated is
absent; WARC-Refers-To names a response record in one of the files given (an earlier crawl's WARC
may be listed first), whose WARC-Target-URI, WARC-Date and WARC-Payload-Digest equal the revisit's
WARC-Refers-To-Target-URI, WARC-Refers-To-Date and WARC-Payload-Digest when those are present
(identical-payload-digest requires WARC-Payload-Digest). A revisit without WARC-Refers-To is an
error unless --allow-unreferenced-revisits.

Prints one line per record ("<offset> <type> <target-uri>", offsets within each file, files in the
order given) and exits 1 with a message naming the file and offset on the first problem.
"""
import base64
import hashlib
import sys
import zlib

PROFILES = {
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified": "server-not-modified",
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest": "identical-payload-digest",
}


def digest(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def fail(where, message):
    print(f"{where}: {message}", file=sys.stderr)
    sys.exit(1)


def read_records(path):
    """Yields (where, headers, block) per record of one file."""
    data = open(path, "rb").read()
    pos = 0
    while pos < len(data):
        where = f"{path}@{pos}"
        d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        try:
            text = d.decompress(data[pos:])
        except zlib.error as e:
            fail(where, f"bad gzip member: {e}")
        if not d.eof:
            fail(where, "truncated gzip member")
        end = len(data) - len(d.unused_data)
        head, sep, rest = text.partition(b"\r\n\r\n")
        if not sep:
            fail(where, "no end of WARC headers")
        lines = head.split(b"\r\n")
        if lines[0] != b"WARC/1.1":
            fail(where, f"bad version line {lines[0]!r}")
        headers = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon:
                fail(where, f"bad header line {line!r}")
            headers[name.decode().lower()] = value.strip().decode()
        for required in ("warc-type", "warc-record-id", "warc-date", "content-length"):
            if required not in headers:
                fail(where, f"missing {required}")
        length = int(headers["content-length"])
        block, trailer = rest[:length], rest[length:]
        if trailer != b"\r\n\r\n":
            fail(where, "member holds more or less than one record")
        yield pos, where, headers, block
        pos = end


def check_empty_payload(where, http_head):
    """A 200 whose empty payload is not what its length headers announce, and not marked cut."""
    lines = http_head.split(b"\r\n")
    status = lines[0].split(b" ")
    if len(status) < 2 or status[1] != b"200":
        return
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        name = name.strip().lower()
        if colon and name in (b"content-length", b"x-crawler-content-length"):
            if value.strip() != b"0":
                fail(where, f"status 200 with an empty payload, {name.decode()}: "
                     f"{value.strip().decode()} and no WARC-Truncated")


def check_record(where, headers, block):
    kind = headers["warc-type"]
    if "warc-block-digest" in headers:
        if headers["warc-block-digest"] != digest(block):
            fail(where, "block digest mismatch")
    elif kind != "response":
        fail(where, f"{kind} record without WARC-Block-Digest")
    if kind == "response" and "warc-payload-digest" in headers:
        http_head, sep, payload = block.partition(b"\r\n\r\n")
        if not sep or headers["warc-payload-digest"] != digest(payload):
            fail(where, "payload digest mismatch")
        if not http_head.startswith(b"HTTP/"):
            fail(where, "response block is not an HTTP message")
    if kind == "response" and "warc-truncated" not in headers:
        http_head, sep, payload = block.partition(b"\r\n\r\n")
        if sep and not payload:
            check_empty_payload(where, http_head)
    if kind == "revisit":
        profile = PROFILES.get(headers.get("warc-profile"))
        if profile is None:
            fail(where, f"unknown WARC-Profile {headers.get('warc-profile')!r}")
        if headers.get("content-type") != "application/http;msgtype=response":
            fail(where, f"revisit Content-Type {headers.get('content-type')!r}")
        http_head, sep, rest = block.partition(b"\r\n\r\n")
        if not sep or rest or not http_head.startswith(b"HTTP/"):
            fail(where, "revisit block is not an HTTP response head alone")
        status = http_head.split(b"\r\n", 1)[0].split(b" ")
        if profile == "server-not-modified" and (len(status) < 2 or status[1] != b"304"):
            fail(where, f"server-not-modified revisit with status line {http_head[:40]!r}")
        if profile == "identical-payload-digest" and "warc-payload-digest" not in headers:
            fail(where, "identical-payload-digest revisit without WARC-Payload-Digest")
        if "warc-truncated" in headers:
            fail(where, "revisit with WARC-Truncated")


def check_revisit(where, headers, responses, allow_unreferenced):
    target = headers.get("warc-refers-to")
    if target is None:
        if not allow_unreferenced:
            fail(where, "revisit without WARC-Refers-To")
        return
    original = responses.get(target)
    if original is None:
        fail(where, f"WARC-Refers-To {target} names no response record in the files given")
    for field, original_field in (
        ("warc-refers-to-target-uri", "warc-target-uri"),
        ("warc-refers-to-date", "warc-date"),
        ("warc-payload-digest", "warc-payload-digest"),
    ):
        if field in headers and headers[field] != original.get(original_field):
            fail(where, f"{field} {headers[field]!r} differs from the original's "
                 f"{original.get(original_field)!r}")


def main(argv):
    allow_unreferenced = "--allow-unreferenced-revisits" in argv
    paths = [a for a in argv if a != "--allow-unreferenced-revisits"]
    if not paths:
        fail("warc_check", "usage: warc_check.py [--allow-unreferenced-revisits] FILE...")
    ids = set()
    responses = {}
    concurrent = []
    revisits = []
    for path in paths:
        for offset, where, headers, block in read_records(path):
            check_record(where, headers, block)
            record_id = headers["warc-record-id"]
            if record_id in ids:
                fail(where, f"duplicate WARC-Record-ID {record_id}")
            ids.add(record_id)
            if headers["warc-type"] == "response":
                responses[record_id] = headers
            if headers["warc-type"] == "revisit":
                revisits.append((where, headers))
            if "warc-concurrent-to" in headers:
                concurrent.append((where, headers["warc-concurrent-to"]))
            print(offset, headers["warc-type"], headers.get("warc-target-uri", "-"))
    for where, target in concurrent:
        if target not in ids:
            fail(where, f"WARC-Concurrent-To {target} names no record")
    for where, headers in revisits:
        check_revisit(where, headers, responses, allow_unreferenced)


if __name__ == "__main__":
    main(sys.argv[1:])
