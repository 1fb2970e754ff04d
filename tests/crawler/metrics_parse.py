#!/usr/bin/python3
"""Parses a Prometheus text exposition with prometheus_client's parser (Debian's
python3-prometheus-client, so run it with /usr/bin/python3) and prints it as JSON, for the C++
tests of urlsieve's metrics (tests/crawler/metrics_text_test.cc, crawl_metrics_test.cc).

Usage: metrics_parse.py FILE
Output: {"families": {name: {"type": ..., "documentation": ..., "samples":
         [{"name": ..., "labels": {...}, "value": ...}, ...]}}}
A text the parser refuses exits 1 with its error on stderr.
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    families = {}
    try:
        for family in text_string_to_metric_families(text):
            if family.name in families:
                raise ValueError("family %s appears twice" % family.name)
            families[family.name] = {
                "type": family.type,
                "documentation": family.documentation,
                "samples": [{"name": s.name, "labels": s.labels, "value": s.value}
                            for s in family.samples],
            }
    except Exception as e:  # the parser raises ValueError and others on a bad text
        print("metrics_parse.py: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 1
    json.dump({"families": families}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
