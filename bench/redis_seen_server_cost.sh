#!/usr/bin/env bash
# The Redis server's CPU per key of the ways a seen set can test-and-set a key (issue 27, item 3):
# SADD of SHA-1s (scrapy-redis), one plain BITFIELD SET u1 per batch (no Lua: the floor of a
# layout of k bits per key), the Function's way (Lua building BITFIELD arguments from the k
# offsets the client sends; in calls of 7 bits, and in calls of 180 keys as before), and a Lua
# read-modify-write of each key's 64-byte block (GETRANGE, SETRANGE).
# bench/redis_seen_server_cost.py makes the inputs (its header says what each is): batches of
# 512 random keys, k = 10 bits in a 64-byte block of a 1 MiB string, sent with redis-cli --pipe
# to one loopback redis-server this script starts (no persistence) and stops; each variant runs
# twice, on an empty filter (every key new) and again (every key a repeat). Prints per variant
# and run the server's CPU per key (INFO cpu, user + sys, before and after: the protocol, the
# command and Lua together) and the commands' usec_per_call (INFO commandstats: the command
# alone). The client's time is not measured. CPU times on a loaded machine move by +-30 %; for
# instruction counts, run redis-server under valgrind --tool=callgrind and send it the inputs.
#
#   bench/redis_seen_server_cost.sh [--batches N] [--variants "sadd bitfield function wide block"]
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

batches=200
variants="sadd bitfield function wide block"
while (($#)); do
  case $1 in
    --batches) batches=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    -h | --help) print_help 16; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
need_positive --batches "$batches"
need_redis

make_tmp urlsieve_redis_cost
on_exit cleanup_all
start_redis "$tmp"

cli() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
server_cpu() {
  cli info cpu | awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.6f", s }'
}
keys=$((batches * 512))
echo "redis-server $(redis_version) on 127.0.0.1:$redis_port; $keys keys of k = 10 bits per run;" \
  "$(machine_load)"
printf '%-9s %-7s %14s  %s\n' variant keys "server us/key" "commandstats usec_per_call"
for variant in $variants; do
  cli flushall > /dev/null
  cli setrange bloom $((16383 * 64 - 1)) '\0' > /dev/null
  sha=$(cli script load "$(python3 bench/redis_seen_server_cost.py lua "$variant")")
  python3 bench/redis_seen_server_cost.py resp "$variant" "$sha" "$batches" > "$tmp/in"
  for run in new repeat; do
    cli config resetstat > /dev/null
    before=$(server_cpu)
    cli --pipe < "$tmp/in" > "$tmp/pipe.log"
    grep -q 'errors: 0' "$tmp/pipe.log" || { cat "$tmp/pipe.log" >&2; exit 1; }
    after=$(server_cpu)
    stats=$(cli info commandstats | tr -d '\r' |
      sed -n 's/^cmdstat_\([a-z]*\):calls=\([0-9]*\),usec=[0-9]*,usec_per_call=\([0-9.]*\).*/\1 \2x \3/p' |
      grep -v -E '^(config|info|flushall|script|echo) ' | paste -sd ';' -)
    printf '%-9s %-7s %14.2f  %s\n' "$variant" "$run" \
      "$(echo "($after - $before) * 1000000 / $keys" | bc -l)" "$stats"
  done
done
