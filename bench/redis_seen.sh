#!/usr/bin/env bash
# Compares urlsieve's Redis seen set (with and without its front cache; through the urlsieve
# server module, which the redis-server it starts loads, or with contenders f F through the
# Function) with scrapy-redis's way
# (pipelined SADD of SHA-1 hex fingerprints) and a Redisson-style Lua SETBIT Bloom filter, in one
# run, on one loopback redis-server this script starts (no persistence) and stops: (a) 10^7
# distinct URLs and (b) a crawl-like link stream of which about 90 % are repeats, at ε = 1e-3.
# Prints URLs/s, Redis memory per URL, round trips per URL, the "new" answers checked against the
# distinct count, and the targets of issues 12 and 27. The program is bench/bench_redis_seen.cc (its header
# says what is measured and how).
#
#   bench/redis_seen.sh [--quick] [--urls N] [--links N] [--build-dir DIR] [-- PROGRAM ARGS]
#       --quick        5x10^5 URLs and 5x10^5 links (under a minute): a smoke test
#       --urls N       workload (a) size (default 10000000)
#       --links N      workload (b) size in links (default 5000000)
#       --build-dir    where bench_redis_seen was built (default build; RelWithDebInfo or Release)
#       after --, arguments for the program (e.g. --contenders cs --workloads b)
#
# Exits 1 when a contender fails or answers wrongly; a missed target is printed, not an error.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

urls=10000000
links=5000000
build=build
extra=()
while (($#)); do
  case $1 in
    --quick) urls=500000; links=500000; shift ;;
    --urls) urls=$2; shift 2 ;;
    --links) links=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) print_help 17; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $urls =~ ^[1-9][0-9]*$ && $links =~ ^[1-9][0-9]*$ ]] || {
  echo "--urls and --links must be positive integers" >&2
  exit 2
}

program="$build/bench/bench_redis_seen"
need_built "cmake --build $build --target bench_redis_seen" "$program"
module="$build/dedup/redis/module/urlsieve_redis.so"
need_built "cmake --build $build --target urlsieve_redis_module" "$module"
need_redis

make_tmp urlsieve_redisbench
on_exit cleanup_all

start_redis "$tmp" --loadmodule "$(realpath "$module")"

echo "redis-server $(redis_version) on 127.0.0.1:$redis_port" \
  "(--save '' --appendonly no, --loadmodule urlsieve_redis.so); $(machine_load)"
"$program" --redis "redis://127.0.0.1:$redis_port" --urls "$urls" --links "$links" ${extra[@]+"${extra[@]}"}
