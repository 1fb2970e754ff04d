"""urlsieve's Python module vs Scrapy's default duplicate filter (RFPDupeFilter), same URL stream.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_dupefilter_bench.py --compare -n 10000000
    (bench/compare_python_dupefilter.sh does this.)

Each mode runs in its own process, so its peak RSS (ru_maxrss) is its own:
  generate          build the URL strings only (the floor every mode pays)
  requests          + build a scrapy.Request per URL (what a Scrapy crawl pays anyway)
  rfp               + RFPDupeFilter.request_seen(request)     (Scrapy's default)
  urlsieve          urlsieve.SeenFilter.insert_many(batch)    (no Request objects)
  urlsieve_scrapy   + urlsieve.scrapy.SeenDupeFilter.request_seen(request)
  urlsieve_exact    insert_many with the SQLite exact store (in a temporary directory)
The stream: N URLs over 0.8 N distinct ones (the last 0.2 N repeat earlier URLs), generated in
batches; a filter's own cost is its mode's time minus the time of the mode it builds on. Times are
CPU seconds of the process (every mode is one thread of work), which a busy machine distorts far
less than wall time; the wall time is printed too.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings

HOSTS = 5000


def url_batches(n, batch):
    universe = max(1, n * 4 // 5)
    for start in range(0, n, batch):
        ids = [(k * 2654435761) % universe for k in range(start, min(n, start + batch))]
        yield [f"https://www.host{i % HOSTS}.example.com/section/{i % 97}/item-{i}.html?ref={i % 13}"
               for i in ids]


def run_mode(mode, n, batch, fp_rate):
    new = 0
    t0, c0 = time.perf_counter(), time.process_time()
    if mode == "generate":
        for urls in url_batches(n, batch):
            new += len(urls)
    elif mode in ("urlsieve", "urlsieve_exact"):
        import urlsieve

        state = tempfile.mkdtemp(prefix="urlsieve-bench-") if mode == "urlsieve_exact" else None
        seen = urlsieve.SeenFilter(capacity=n, fp_rate=fp_rate, state_dir=state,
                                   exact=mode == "urlsieve_exact")
        t0, c0 = time.perf_counter(), time.process_time()
        for urls in url_batches(n, batch):
            new += sum(seen.insert_many(urls))
        seen.close()
        if state:
            subprocess.run(["rm", "-rf", state], check=True)
    else:
        from scrapy import Request
        from scrapy.dupefilters import RFPDupeFilter

        if mode == "rfp":
            warnings.simplefilter("ignore")  # the "2.6 fingerprint" deprecation notice
            df = RFPDupeFilter()
        elif mode == "urlsieve_scrapy":
            from urlsieve.scrapy import SeenDupeFilter

            df = SeenDupeFilter(capacity=n, fp_rate=fp_rate)
        else:
            df = None
        t0, c0 = time.perf_counter(), time.process_time()
        for urls in url_batches(n, batch):
            for url in urls:
                request = Request(url)
                if df is None or not df.request_seen(request):
                    new += 1
    seconds = time.process_time() - c0
    return {
        "mode": mode,
        "n": n,
        "seconds": round(seconds, 3),
        "wall_seconds": round(time.perf_counter() - t0, 3),
        "per_second": round(n / seconds),
        "new": new,
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def compare(args):
    rows = {}
    for mode in args.modes.split(","):
        cmd = [sys.executable, __file__, "--mode", mode, "-n", str(args.n), "--batch",
               str(args.batch), "--fp-rate", str(args.fp_rate)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        rows[mode] = json.loads(out.strip().splitlines()[-1])
        r = rows[mode]
        print(f"{mode:16} n={r['n']:>9} cpu {r['seconds']:8.2f} s (wall {r['wall_seconds']:8.2f}) "
              f"{r['per_second']:>10,}/s "
              f"new={r['new']:>9} max_rss={r['max_rss_mb']:8.1f} MB", flush=True)

    def own(mode, base):
        if mode in rows and base in rows:
            return rows[mode]["seconds"] - rows[base]["seconds"]
        return None

    print()
    g = rows.get("generate")
    if "requests" in rows and g:
        print(f"building Request objects: {own('requests', 'generate'):.2f} s "
              f"({(own('requests', 'generate')) / args.n * 1e6:.2f} us/request)")
    if "rfp" in rows and "urlsieve" in rows:
        rfp, us = rows["rfp"], rows["urlsieve"]
        print(f"speed, end to end:  urlsieve insert_many {us['per_second']:,}/s vs RFPDupeFilter "
              f"{rfp['per_second']:,}/s = {us['per_second'] / rfp['per_second']:.1f}x")
        if "requests" in rows and g:
            rfp_own, us_own = own("rfp", "requests"), own("urlsieve", "generate")
            print(f"speed, filter only: urlsieve {us_own:.2f} s vs RFPDupeFilter {rfp_own:.2f} s "
                  f"(Request building excluded) = {rfp_own / us_own:.1f}x")
        print(f"peak RSS:           urlsieve {us['max_rss_mb']:.1f} MB vs RFPDupeFilter "
              f"{rfp['max_rss_mb']:.1f} MB = 1/{rfp['max_rss_mb'] / us['max_rss_mb']:.1f}")
        if g and "requests" in rows:
            us_mem = us["max_rss_mb"] - g["max_rss_mb"]
            rfp_mem = rfp["max_rss_mb"] - rows["requests"]["max_rss_mb"]
            print(f"peak RSS, filter only (minus its base mode): urlsieve {us_mem:.1f} MB vs "
                  f"RFPDupeFilter {rfp_mem:.1f} MB = 1/{rfp_mem / max(us_mem, 0.1):.1f}")
    if "urlsieve_scrapy" in rows and "rfp" in rows:
        ss, rfp = rows["urlsieve_scrapy"], rows["rfp"]
        ss_own, rfp_own = own("urlsieve_scrapy", "requests"), own("rfp", "requests")
        if ss_own is not None:
            print(f"as DUPEFILTER_CLASS (request_seen per Request, filter only): SeenDupeFilter "
                  f"{ss_own:.2f} s vs RFPDupeFilter {rfp_own:.2f} s = {rfp_own / ss_own:.1f}x; "
                  f"peak RSS {ss['max_rss_mb']:.1f} vs {rfp['max_rss_mb']:.1f} MB")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--mode")
    p.add_argument("--compare", action="store_true")
    p.add_argument("--modes", default="generate,requests,rfp,urlsieve,urlsieve_scrapy")
    p.add_argument("-n", type=int, default=10_000_000)
    p.add_argument("--batch", type=int, default=100_000)
    p.add_argument("--fp-rate", type=float, default=1e-6)
    args = p.parse_args()
    if args.compare:
        compare(args)
    elif args.mode:
        print(json.dumps(run_mode(args.mode, args.n, args.batch, args.fp_rate)))
    else:
        p.error("--mode or --compare")


if __name__ == "__main__":
    main()
