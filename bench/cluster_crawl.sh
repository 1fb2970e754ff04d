#!/usr/bin/env bash
# The crawl cluster (issue 13) against the standalone crawl, in one run: the generated bench site
# (bench/gen_static_site.py) served by one nginx on 8 loopback ports (8 hosts, each serving the
# whole site: 8 x N pages, seeded with the 8 index pages), coordinated through a redis-server on a
# random loopback port this script starts (no persistence) and stops. Politeness delay 0.
#   (a) 1 node with --cluster against a standalone crawl with the same threads (pages/s ratio,
#       target >= 0.9, issue 27), and a standalone crawl with --seen-redis (where the cost goes);
#   (b) 3 nodes x 1 thread against 1 node x 3 threads (a ratio on this machine's cores, not a
#       scaling claim: the three processes share them);
#   (c) Redis commands per page (total_commands_processed, which counts the commands run inside
#       Functions as well, and FCALLs, from INFO commandstats; CONFIG RESETSTAT before each run) and
#       Redis memory per pending URL: in an extra run, sampled every 0.2 s, the inbox streams'
#       MEMORY USAGE (SAMPLES 0) summed over their XLEN (entries pending: unread, or read and not
#       yet acknowledged); the sample with the most pending entries is reported, and the
#       used_memory difference between that sample and the end of the crawl (inboxes empty, seen
#       set whole) over the same entries as a cross-check. Targets (issue 27): <= 6 commands per
#       page with 1 node, <= 10 with 3;
#   (d) opening a node (target <= 0.2 s), and the Redis commands an idle node owning every
#       partition costs per second (target <= 50).
#
#   bench/cluster_crawl.sh [--quick] [--pages N] [--reps R] [--build-dir DIR] [--keep] [--function]
#       --quick        600 pages per host, one repetition (about two minutes): a smoke test long
#                      enough that the cluster's fixed costs (open, join, end, leave) do not dominate
#       --pages N      pages of the generated site, served by each of the 8 hosts (default 1500)
#       --reps R       repetitions of each timed run; the median pages/s is used (default 1)
#       --build-dir    where urlsieve was built (default build; a Release build measures best)
#       --keep         keep the temp dir (site, logs, crawl outputs) and print its path
#       --function     a redis-server without the urlsieve server module (by default it loads it,
#                      as a production Redis should): the seen set's inserts run in its Function
#
# Pages and duplicates come from nginx's access log (a fresh nginx per run): pages = distinct
# (host, URI) served with 200, duplicates = requests beyond the first. Wall time runs from the
# first node's start to the last node's exit (a cluster node exits once the whole crawl is over).
# Exits 1 when a run fails or misses a page; a missed target is printed, not an error.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.."

pages=1500
reps=1
build=build
keep=0
function_only=0
hosts=8
while (($#)); do
  case $1 in
    --quick) pages=600; reps=1; shift ;;
    --pages) pages=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --function) function_only=1; shift ;;
    -h | --help) print_help 34; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
need_pages "$pages"
need_positive --reps "$reps"

urlsieve="$build/crawler/urlsieve"
python=/usr/bin/python3
need_built "scripts/build.sh (or cmake --build $build --target urlsieve)" "$urlsieve"
module="$build/dedup/redis/module/urlsieve_redis.so"
redis_args=()
if ((!function_only)); then
  need_built "cmake --build $build --target urlsieve_redis_module" "$module"
  redis_args=(--loadmodule "$(realpath "$module")")
fi
missing=()
[[ -x $(nginx_bin) ]] || missing+=(nginx-light)
command -v redis-server > /dev/null && command -v redis-cli > /dev/null || missing+=(redis-server)
[[ -x /usr/bin/time ]] || missing+=(time)
[[ -x $python ]] || missing+=(python3)
need_missing_none

make_tmp urlsieve_clusterbench
chmod 755 "$tmp" # nginx's workers run as an unprivileged user when started as root
sampler_pid=
node_pids=()
cleanup() {
  local pid
  for pid in ${node_pids[@]+"${node_pids[@]}"} $sampler_pid; do
    stop_child "$pid" KILL
  done
  cleanup_all
}
on_exit cleanup

# --- redis-server on a free loopback port ---
start_redis "$tmp" ${redis_args[@]+"${redis_args[@]}"}
echo "redis-server: ${redis_args[*]:-no urlsieve module (--function)}"
redis_url="redis://127.0.0.1:$redis_port"
rcli() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
# info_field SECTION FIELD: one field of INFO.
info_field() { rcli INFO "$1" | tr -d '\r' | sed -n "s/^$2://p"; }

# --- the site: one directory, 8 nginx server blocks (ports) ---
echo "generating $pages pages (served by each of $hosts hosts) ..."
gen_site "$tmp/site" "$pages" "$python"
chmod -R a+rX "$tmp/site"
ports=()
for ((h = 0; h < hosts; h++)); do ports+=("$(free_port)"); done
: > "$tmp/seeds.txt"
for port in "${ports[@]}"; do echo "http://127.0.0.1:$port/index.html" >> "$tmp/seeds.txt"; done
mkdir -p "$tmp/nginx/logs"

# start_nginx LOG: a fresh nginx (foreground child) logging "port status uri" per request to LOG.
start_nginx() {
  # shellcheck disable=SC2016 # nginx's variables
  start_nginx_on "$tmp/nginx" "$tmp/site" "$1" '$server_port $status $request_uri' "${ports[@]}"
}

# Every crawl checkpoints at the default interval (the guarantee a standalone crawl gives after
# kill -9), and the content-seen test is off: the 8 hosts serve the same bytes, so with it on only
# the first host's pages would be followed.
common=(--delay-ms 0 --max-depth 100 --ignore-robots --no-content-seen)
declare -A wall cpu rss served dupes other cmds fcalls ids
names=()
runs=0

# run NAME NODES THREADS MODE [sample]: one crawl of the 8 hosts against a fresh nginx, timed.
# MODE: standalone | seen-redis | cluster. With "sample", Redis memory is sampled meanwhile.
run() {
  local name=$1 nodes=$2 threads=$3 mode=$4 sample=${5:-}
  local id=$((runs++))
  local log="$tmp/nginx/logs/$id.log"
  echo "running $name ..."
  rcli FLUSHALL > /dev/null
  rcli CONFIG RESETSTAT > /dev/null
  start_nginx "$log"
  if [[ -n $sample ]]; then
    sample_memory "cluster$id" > "$tmp/samples.$id" &
    sampler_pid=$!
  fi
  local start wall_s n args
  node_pids=()
  start=$(now_ns)
  for ((n = 0; n < nodes; n++)); do
    args=("$urlsieve" crawl --seeds "$tmp/seeds.txt" --out "$tmp/out.$id.$n" --threads "$threads"
      "${common[@]}")
    case $mode in
      seen-redis) args+=(--seen-redis "$redis_url" --name "seen$id") ;;
      cluster) args+=(--cluster "$redis_url" --cluster-name "cluster$id" --node-id "node$n") ;;
    esac
    /usr/bin/time -f '%U %S %M' -o "$tmp/time.$id.$n" "${args[@]}" > "$tmp/log.$id.$n" 2>&1 &
    node_pids+=($!)
  done
  local failed=0
  for ((n = 0; n < nodes; n++)); do
    wait "${node_pids[$n]}" || failed=1
  done
  wall_s=$(seconds_since "$start" 6)
  node_pids=()
  if [[ -n $sample ]]; then
    kill "$sampler_pid" 2> /dev/null || true
    wait "$sampler_pid" 2> /dev/null || true
    sampler_pid=
    echo "end $(info_field memory used_memory) 0 0" >> "$tmp/samples.$id"
  fi
  stop_nginx
  if ((failed)); then
    echo "$name failed:" >&2
    tail -20 "$tmp"/log."$id".* >&2
    exit 1
  fi
  names+=("$name")
  wall[$name]=$wall_s
  cpu[$name]=$(cat "$tmp"/time."$id".* | awk '{ c += $1 + $2 } END { print c }')
  rss[$name]=$(cat "$tmp"/time."$id".* | awk '$3 > m { m = $3 } END { print m }')
  served[$name]=$(awk '$2 == 200 { print $1, $3 }' "$log" | sort -u | wc -l)
  dupes[$name]=$(awk '{ n[$1 " " $3]++ } END { d = 0; for (u in n) d += n[u] - 1; print d }' "$log")
  other[$name]=$(awk '$2 != 200' "$log" | wc -l)
  # (Give or take the RESETSTAT and this INFO.)
  cmds[$name]=$(info_field stats total_commands_processed)
  rcli INFO commandstats | tr -d '\r' > "$tmp/commandstats.$id"
  fcalls[$name]=$(sed -n 's/^cmdstat_fcall:calls=\([0-9]*\),.*/\1/p' "$tmp/commandstats.$id")
  fcalls[$name]=${fcalls[$name]:-0}
  ids[$name]=$id
}

# sample_memory NAME: every 0.2 s, "t used_memory inbox_bytes inbox_entries" of cluster NAME's
# inbox streams (MEMORY USAGE with SAMPLES 0: every node of the stream counted).
sample_memory() {
  local name=$1 key used bytes entries
  while true; do
    used=$(info_field memory used_memory)
    bytes=0
    entries=0
    while read -r key; do
      [[ -n $key ]] || continue
      bytes=$((bytes + $(rcli MEMORY USAGE "$key" SAMPLES 0 < /dev/null || echo 0)))
      entries=$((entries + $(rcli XLEN "$key" < /dev/null || echo 0)))
    done < <(rcli --scan --pattern "urlsieve:{$name:*}:inbox")
    echo "t $used $bytes $entries"
    sleep 0.2
  done
}

declare -A rates
timed() { # timed LABEL REP NODES THREADS MODE: one repetition of a timed run
  local label=$1 name=$1
  ((reps > 1)) && name="$label #$2"
  run "$name" "$3" "$4" "$5"
  rates[$label]+="$(ratio "${served[$name]}" "${wall[$name]}") "
}
# Repetitions go round the configurations, so that a change of the machine's load shows in all.
for ((rep = 1; rep <= reps; rep++)); do
  timed "standalone 2 threads" "$rep" 1 2 standalone
  timed "cluster 1 node x 2" "$rep" 1 2 cluster
  timed "--seen-redis 2 threads" "$rep" 1 2 seen-redis
  timed "cluster 1 node x 3" "$rep" 1 3 cluster
  timed "cluster 3 nodes x 1" "$rep" 3 1 cluster
done
run "cluster 1 node x 2 (sampled)" 1 2 cluster sample
sampled_id=$((runs - 1))

total=$((pages * hosts))
echo
echo "site: $pages pages x $hosts hosts = $total pages, served by nginx on 127.0.0.1:${ports[0]}..; redis-server" \
  "$(redis_version) on 127.0.0.1:$redis_port;" "$(machine_load)"
printf '%-30s %6s %8s %9s %7s %8s %8s %6s %9s %9s\n' run pages "wall s" "pages/s" "cpu%" \
  "ms/page" "RSS MB" dupes "cmds/page" "fcall/pg"
for name in "${names[@]}"; do
  awk -v name="$name" -v p="${served[$name]}" -v w="${wall[$name]}" -v c="${cpu[$name]}" \
    -v r="${rss[$name]}" -v d="${dupes[$name]}" -v k="${cmds[$name]}" -v f="${fcalls[$name]}" 'BEGIN {
    printf "%-30s %6d %8.2f %9.1f %7.0f %8.3f %8.1f %6d %9.2f %9.2f\n", name, p, w, p / w,
      100 * c / w, 1000 * c / p, r / 1024, d, k / p, f / p }'
done
echo "(pages: distinct (host, URI) served with 200; cpu%: the nodes' user+sys over wall; RSS: the"
echo " largest node's; cmds/page: Redis commands executed per page, those run inside Functions"
echo " included; fcall/pg: Function calls per page; nginx's and Redis's own CPU not counted)"
echo

rate() { median "${rates[$1]}"; }
awk -v alone="$(rate 'standalone 2 threads')" -v one="$(rate 'cluster 1 node x 2')" \
  -v seen="$(rate '--seen-redis 2 threads')" -v n13="$(rate 'cluster 1 node x 3')" \
  -v n31="$(rate 'cluster 3 nodes x 1')" -v reps="$reps" 'BEGIN {
  printf "ratios of pages/s (median of %d run%s each)\n", reps, (reps > 1 ? "s" : "")
  printf "  (a) cluster 1 node / standalone, 2 threads:   %5.2f   (target >= 0.9)%s\n", one / alone,
    (one / alone >= 0.9 ? "" : "   MISSED")
  printf "      --seen-redis / standalone, 2 threads:     %5.2f\n", seen / alone
  printf "      cluster 1 node / --seen-redis:            %5.2f\n", one / seen
  printf "  (b) 3 nodes x 1 thread / 1 node x 3 threads:  %5.2f   (%d cores: a ratio, not scaling)\n",
    n31 / n13, '"$(nproc)"' }'

# (c) Redis: commands per page (a timed run: the sampled one's counts include the sampler's), and
# memory per pending URL.
# breakdown RUN TARGET: the run's commands per page, by command, against the issue's target.
breakdown() {
  local counted=$1 target=$2
  ((reps > 1)) && counted="$counted #1"
  echo
  echo "Redis per page, $counted (INFO commandstats; commands run inside Functions included):"
  awk -v p="${served[$counted]}" -F'[=,:]' '/^cmdstat_/ {
    sub(/^cmdstat_/, "", $1); printf "  %-18s %9.3f calls/page\n", $1, $3 / p }' \
    "$tmp/commandstats.${ids[$counted]}" | sort -k2 -g -r | head -12
  awk -v p="${served[$counted]}" -v k="${cmds[$counted]}" -v f="${fcalls[$counted]}" \
    -v t="$target" 'BEGIN {
    printf "  total: %.2f commands per page (%.2f of them FCALLs, the rest mostly run inside them)", \
      k / p, f / p
    printf "   (target <= %d)%s\n", t, (k / p <= t ? "" : "   MISSED") }'
}
breakdown "cluster 1 node x 2" 6
breakdown "cluster 3 nodes x 1" 10
read -r peak_used peak_bytes peak_entries end_used < <(awk '
  $1 == "t" && $4 > e { u = $2; b = $3; e = $4 }
  $1 == "end" { end = $2 }
  END { print u + 0, b + 0, e + 0, end + 0 }' "$tmp/samples.$sampled_id")
if ((peak_entries > 0)); then
  awk -v u="$peak_used" -v b="$peak_bytes" -v e="$peak_entries" -v end="$end_used" 'BEGIN {
    printf "Redis memory per pending URL: %.0f B (inbox streams: %d B for %d pending entries, at the\n",
      b / e, b, e
    printf "  sample with the most; used_memory then minus at the end of the crawl: %.0f B per entry)\n",
      (u - end) / e }'
else
  echo "Redis memory per pending URL: no sample caught a pending entry (the crawl was too short)"
fi

# (d) A node's own costs: opening it (process start to its first request, polled every 5 ms in a
# fresh nginx's access log, against a standalone crawl's in the same run) and, idle, the Redis
# commands it costs per second (a node given no seeds: the cluster is never seeded, so it waits;
# counted over 10 s once it holds its partitions; its safety sweep, one XLEN of every partition a
# minute, is added as its average).
first_request_ms() { # first_request_ms MODE RUN: ms from the start of a crawl to its first request
  local log="$tmp/nginx/logs/first.$1.$2.log" args start ms
  rcli FLUSHALL > /dev/null
  start_nginx "$log"
  args=("$urlsieve" crawl --seeds "$tmp/seeds.txt" --out "$tmp/out.first.$1.$2" "${common[@]}")
  [[ $1 == cluster ]] && args+=(--cluster "$redis_url" --cluster-name first --node-id first)
  start=$(now_ns)
  "${args[@]}" > "$tmp/log.first.$1.$2" 2>&1 &
  node_pids=($!)
  while [[ ! -s $log ]]; do
    kill -0 "${node_pids[0]}" 2> /dev/null || { echo "the $1 crawl exited: $(cat "$tmp/log.first.$1.$2")" >&2; exit 1; }
    sleep 0.005
  done
  ms=$((($(now_ns) - start) / 1000000))
  stop_child "${node_pids[0]}" KILL
  node_pids=()
  stop_nginx
  echo "$ms"
}
# The median of 3 interleaved openings of each (one is a single sample of a noisy machine).
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
alone=() cluster=()
for run in 1 2 3; do
  alone+=("$(first_request_ms standalone "$run")")
  cluster+=("$(first_request_ms cluster "$run")")
done
open_alone_ms=$(median3 "${alone[@]}")
open_ms=$(median3 "${cluster[@]}")
echo "node open, ms (3 runs each): cluster ${cluster[*]}; standalone ${alone[*]}"
rcli FLUSHALL > /dev/null
"$urlsieve" crawl --out "$tmp/out.idle" --cluster "$redis_url" --cluster-name idle \
  --node-id idle > "$tmp/log.idle" 2>&1 &
node_pids=($!)
while [[ $(rcli EXISTS 'urlsieve:{idle:0}:lease') != 1 ]]; do
  kill -0 "${node_pids[0]}" 2> /dev/null || { echo "the idle node exited: $(cat "$tmp/log.idle")" >&2; exit 1; }
  sleep 0.01
done
sleep 2
before=$(rcli INFO stats | tr -d '\r' | sed -n 's/^total_commands_processed://p')
sleep 10
after=$(rcli INFO stats | tr -d '\r' | sed -n 's/^total_commands_processed://p')
stop_child "${node_pids[0]}" INT
node_pids=()
echo
awk -v o="$open_ms" -v a="$open_alone_ms" -v c="$((after - before))" \
  -v p="$(rcli HGET 'urlsieve:{idle}:cluster' partitions)" 'BEGIN {
  printf "node open: %.2f s to its first request (target <= 0.2)%s; a standalone crawl: %.2f s\n",
    o / 1000, (o <= 200 ? "" : "   MISSED"), a / 1000
  idle = (c - 4) / 10 + p / 60  # less the 4 INFO/HGET of this script; plus the sweep
  printf "idle node owning %d partitions: %.0f Redis commands/s (target <= 50)%s\n", p, idle,
    (idle <= 50 ? "" : "   MISSED") }'

status=0
for name in "${names[@]}"; do
  if ((served[$name] != total || other[$name] != 0)); then
    echo "CHECK: $name served ${served[$name]} of $total pages, ${other[$name]} non-200 responses" >&2
    status=1
  fi
done
((status == 0)) && echo "check: every run fetched all $total pages"
exit $status
