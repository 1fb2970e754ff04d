#!/usr/bin/env bash
# Measures urlsieve's Redis content-seen set (RedisContentSeenSet) on one loopback redis-server
# this script starts (no persistence) and stops: Tests/s and the server's microseconds per Test
# while N pages are stored and for lookups against them, and Redis memory per page (the exact
# index, the near index and the copies apart). The program is bench/bench_redis_content.cc (its
# header says what is measured and how).
#
#   bench/redis_content.sh [--quick] [--pages N] [--lookups M] [--threads T] [--build-dir DIR]
#       --quick        10^5 pages, 3x10^4 lookups: a smoke test
#       --pages N      pages stored (default 1000000)
#       --lookups M    Tests after the load (default 300000)
#       --threads T    client threads (default 4)
#
# Exits 1 when a call fails or a verdict is wrong.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

pages=1000000
lookups=300000
threads=4
build=build
while (($#)); do
  case $1 in
    --quick) pages=100000; lookups=30000; shift ;;
    --pages) pages=$2; shift 2 ;;
    --lookups) lookups=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    -h | --help) print_help 13; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

program="$build/bench/bench_redis_content"
need_built "cmake --build $build --target bench_redis_content" "$program"
need_redis

make_tmp urlsieve_contentbench
on_exit cleanup_all

start_redis "$tmp"
echo "redis-server $(redis_version) on 127.0.0.1:$redis_port" \
  "(--save '' --appendonly no); $(machine_load)"
"$program" --redis "redis://127.0.0.1:$redis_port" --pages "$pages" --lookups "$lookups" \
  --threads "$threads"
