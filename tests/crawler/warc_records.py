#!/usr/bin/env python3
"""Lists the records of WARC files (.warc.gz, one gzip member per record) as JSON lines, for the
re-crawl tests (tests/crawler/crawl_recrawl_test.cc). Python standard library only.

    warc_records.py FILE...

One line per record: {"file", "offset", "type", "target", "id", "date", "refers_to",
"refers_to_target", "refers_to_date", "profile", "payload_digest", "truncated", "http_status",
"payload_length", "http_content_length", "x_crawler_content_length"}; a missing header is null,
http_status is the status of the HTTP message the block starts with (null if none), payload_length
the bytes after its head, and the last two its Content-Length and X-Crawler-Content-Length headers
(strings, null when absent). This only reads; tests/crawler/warc_check.py is the checker.
"""
import json
import sys
import zlib


def records(path):
    data = open(path, "rb").read()
    pos = 0
    while pos < len(data):
        offset = pos
        d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        text = d.decompress(data[pos:])
        if not d.eof:
            sys.exit(f"{path}:{offset}: truncated gzip member")
        pos = len(data) - len(d.unused_data)
        head, _, block = text.partition(b"\r\n\r\n")
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            headers[name.decode().strip().lower()] = value.strip().decode()
        status = None
        payload_length = None
        http_headers = {}
        if block.startswith(b"HTTP/"):
            parts = block.split(b"\r\n", 1)[0].split(b" ")
            if len(parts) > 1 and parts[1].isdigit():
                status = int(parts[1])
            length = int(headers.get("content-length", len(block)))
            http_head, _, payload = block[:length].partition(b"\r\n\r\n")
            payload_length = len(payload)
            for line in http_head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                http_headers[name.decode().strip().lower()] = value.strip().decode()
        yield {
            "file": path,
            "offset": offset,
            "type": headers.get("warc-type"),
            "target": headers.get("warc-target-uri"),
            "id": headers.get("warc-record-id"),
            "date": headers.get("warc-date"),
            "refers_to": headers.get("warc-refers-to"),
            "refers_to_target": headers.get("warc-refers-to-target-uri"),
            "refers_to_date": headers.get("warc-refers-to-date"),
            "profile": headers.get("warc-profile"),
            "payload_digest": headers.get("warc-payload-digest"),
            "truncated": headers.get("warc-truncated"),
            "http_status": status,
            "payload_length": payload_length,
            "http_content_length": http_headers.get("content-length"),
            "x_crawler_content_length": http_headers.get("x-crawler-content-length"),
        }


if __name__ == "__main__":
    for path in sys.argv[1:]:
        for record in records(path):
            print(json.dumps(record))
