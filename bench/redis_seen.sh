#!/usr/bin/env bash
# Compares urlsieve's Redis seen set (with and without its front cache) with scrapy-redis's way
# (pipelined SADD of SHA-1 hex fingerprints) and a Redisson-style Lua SETBIT Bloom filter, in one
# run, on one loopback redis-server this script starts (no persistence) and stops: (a) 10^7
# distinct URLs and (b) a crawl-like link stream of which about 90 % are repeats, at ε = 1e-3.
# Prints URLs/s, Redis memory per URL, round trips per URL, the "new" answers checked against the
# distinct count, and the targets of issue 12. The program is bench/bench_redis_seen.cc (its header
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
    -h | --help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $urls =~ ^[1-9][0-9]*$ && $links =~ ^[1-9][0-9]*$ ]] || {
  echo "--urls and --links must be positive integers" >&2
  exit 2
}

program="$build/bench/bench_redis_seen"
[[ -x $program ]] || { echo "missing $program: cmake --build $build --target bench_redis_seen" >&2; exit 1; }
command -v redis-server > /dev/null && command -v redis-cli > /dev/null || {
  echo "missing redis-server/redis-cli: run scripts/setup.sh (or: apt-get install -y redis-server)" >&2
  exit 1
}

tmp=$(mktemp -d /tmp/urlsieve_redisbench.XXXXXX)
redis_pid=
cleanup() {
  if [[ -n $redis_pid ]]; then
    kill "$redis_pid" 2> /dev/null || true
    wait "$redis_pid" 2> /dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free loopback port (another process may take it first: then redis-server exits and we retry).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
for attempt in 1 2 3 4 5; do
  port=$(free_port)
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$tmp" \
    --logfile "$tmp/redis.log" --daemonize no &
  redis_pid=$!
  for ((i = 0; i < 100; i++)); do
    if redis-cli -h 127.0.0.1 -p "$port" ping 2> /dev/null | grep -q PONG; then break 2; fi
    kill -0 "$redis_pid" 2> /dev/null || break
    sleep 0.1
  done
  kill "$redis_pid" 2> /dev/null || true
  wait "$redis_pid" 2> /dev/null || true
  redis_pid=
done
if [[ -z $redis_pid ]]; then
  echo "redis-server did not start on a loopback port:" >&2
  cat "$tmp/redis.log" >&2
  exit 1
fi

echo "redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on 127.0.0.1:$port" \
  "(--save '' --appendonly no); $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$program" --redis "redis://127.0.0.1:$port" --urls "$urls" --links "$links" ${extra[@]+"${extra[@]}"}
