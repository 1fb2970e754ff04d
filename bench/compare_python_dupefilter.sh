#!/usr/bin/env bash
# urlsieve's Python module vs Scrapy's RFPDupeFilter (bench/python_dupefilter_bench.py), with the
# system python3 (Debian's python3-scrapy) and the module from the build tree.
#   bench/compare_python_dupefilter.sh            N_SCRAPY=1000000 N=10000000 BUILD_DIR=build
# Every mode (with Scrapy Request objects) runs at N_SCRAPY; insert_many alone also at N. At 10 M,
# building 10 M scrapy.Request objects alone takes long on a small machine: hence two sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake --build "$build" --target urlsieve_python >/dev/null
export PYTHONPATH=$PWD/$build/python
py=/usr/bin/python3

echo "== ${N_SCRAPY:=1000000} requests: Scrapy's filter and urlsieve's, same URLs"
$py bench/python_dupefilter_bench.py --compare -n "$N_SCRAPY" \
  --modes generate,requests,rfp,urlsieve,urlsieve_scrapy,urlsieve_exact
echo
echo "== ${N:=10000000} URLs: insert_many"
$py bench/python_dupefilter_bench.py --compare -n "$N" --modes generate,urlsieve,urlsieve_exact
