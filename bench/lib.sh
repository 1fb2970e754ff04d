# shellcheck shell=bash
# Shared pieces of the bench scripts, sourced (not run) before they cd to the repository root:
#   source "$(dirname "$0")/lib.sh"
# Argument checks, the temp dir's cleanup, the servers the benchmarks crawl or talk to (the
# generated site under urlsieve-demo-site or nginx, a redis-server on a free loopback port, gitweb
# over a generated repository, MediaWiki over generated articles, all started as children of the
# script and stopped by its cleanup), and the measuring helpers (wall clock, /usr/bin/time -v
# reports, medians, ratios).
# Functions that fail print why on stderr and exit the script (so its EXIT trap cleans up).
# Nothing here runs on sourcing.

# print_help LAST_LINE: the script's header comment, lines 2 to LAST_LINE, without the "# ".
print_help() { sed -n "2,${1}s/^# \\{0,1\\}//p" "$0"; }

# need_pages VALUE: exits 2 unless VALUE (a --pages argument) is an integer >= 11.
need_pages() {
  [[ $1 =~ ^[0-9]+$ && $1 -ge 11 ]] || { echo "--pages must be an integer >= 11" >&2; exit 2; }
}

# need_positive OPTION VALUE: exits 2 unless VALUE (OPTION's argument) is a positive integer.
need_positive() {
  [[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "$1 must be a positive integer" >&2; exit 2; }
}

# need_built HINT FILE...: exits 1, printing "missing FILE: HINT", at the first FILE that is not
# an executable (a program the build dir should have).
need_built() {
  local hint=$1 f
  shift
  for f in "$@"; do
    [[ -x $f ]] || { echo "missing $f: $hint" >&2; exit 1; }
  done
}

# on_exit FUNCTION: runs FUNCTION when the script exits; Ctrl-C and TERM exit with 130 (and so
# run it too).
on_exit() {
  # shellcheck disable=SC2064 # FUNCTION is named now, on purpose
  trap "$1" EXIT
  trap 'exit 130' INT TERM
}

# make_tmp NAME: creates the script's temp dir, /tmp/NAME.XXXXXX, in $tmp.
make_tmp() { tmp=$(mktemp -d "/tmp/$1.XXXXXX"); }

# remove_tmp: removes $tmp, or with keep=1 keeps it and prints its path on stderr.
remove_tmp() {
  if ((${keep:-0})); then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}

# cleanup_all: the usual EXIT handler (on_exit cleanup_all): stops whatever server this file
# started (site server, nginx, redis-server, gitweb), then remove_tmp.
cleanup_all() {
  stop_site_server
  stop_nginx
  stop_redis
  stop_gitweb
  stop_mediawiki
  remove_tmp
}

# need_missing_none [APT_PACKAGES]: exits 1 when the array missing (Debian packages the caller
# found missing) is not empty, saying to run scripts/setup.sh --bench or to install APT_PACKAGES
# (default: the missing ones).
need_missing_none() {
  ((${#missing[@]} == 0)) && return 0
  echo "missing ${missing[*]}: run scripts/setup.sh --bench" \
    "(or: apt-get install -y ${1:-${missing[*]}})" >&2
  exit 1
}

# stop_child PID [SIGNAL]: signals a child (TERM by default) and reaps it; no error if it is gone
# or PID is empty.
stop_child() {
  [[ -n $1 ]] || return 0
  kill "-${2:-TERM}" "$1" 2> /dev/null || true
  wait "$1" 2> /dev/null || true
}

# free_port: a loopback TCP port free at the time of asking (another process may take it before
# it is used: servers started on one retry or fail loudly).
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# machine_load: "N cores, load average A B C", for the header of a results table.
machine_load() { echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"; }

# gen_site DIR PAGES [PYTHON]: generates the bench site (bench/gen_static_site.py) in DIR with
# PYTHON (default /usr/bin/python3), its report indented under "  site: ". Run from the repository
# root.
gen_site() {
  "${3:-/usr/bin/python3}" bench/gen_static_site.py "$1" --pages "$2" | sed 's/^/  site: /'
}

# start_site_server PROGRAM ROOT DIR [ARGS...]: serves ROOT with urlsieve-demo-site (PROGRAM) on
# a port of its choosing, its stdout and stderr in DIR/server.out and DIR/server.err, and waits
# (10 s at most) for the base URL it prints first. Sets server_pid and base; exits 1 when the
# server does not start. ARGS go to the server (e.g. --log FILE).
start_site_server() {
  local program=$1 root=$2 dir=$3
  shift 3
  serve_site "$program" "$dir" --root "$root" "$@"
}

# serve_site PROGRAM DIR ARGS...: starts urlsieve-demo-site with ARGS (--root, --dust N ...) on a
# free port, its output in DIR; sets server_pid and base (its origin).
serve_site() {
  local program=$1 dir=$2 i
  shift 2
  "$program" --port 0 "$@" > "$dir/server.out" 2> "$dir/server.err" &
  server_pid=$!
  base=
  for ((i = 0; i < 100; i++)); do
    base=$(head -n 1 "$dir/server.out")
    [[ -n $base ]] && break
    kill -0 "$server_pid" 2> /dev/null || break
    sleep 0.1 # polling for the server's first line
  done
  [[ -n $base ]] || {
    echo "urlsieve-demo-site did not start:" >&2
    cat "$dir/server.err" >&2
    exit 1
  }
}

# stop_site_server: stops the server start_site_server started (which flushes its --log).
stop_site_server() {
  stop_child "${server_pid:-}"
  server_pid=
}

# serve_generated_site PROGRAM PAGES PYTHON [ARGS...]: says "generating PAGES pages ...",
# generates the site in $tmp/site (gen_site, with PYTHON) and serves it (start_site_server with
# ARGS). Sets server_pid and base.
serve_generated_site() {
  local program=$1 pages=$2 python=$3
  shift 3
  echo "generating $pages pages ..."
  gen_site "$tmp/site" "$pages" "$python"
  start_site_server "$program" "$tmp/site" "$tmp" "$@"
}

# need_redis: exits 1 unless redis-server and redis-cli are installed.
need_redis() {
  command -v redis-server > /dev/null && command -v redis-cli > /dev/null || {
    echo "missing redis-server/redis-cli: run scripts/setup.sh (or: apt-get install -y redis-server)" >&2
    exit 1
  }
}

# start_redis DIR: a redis-server without persistence on a free loopback port (up to 5 ports
# tried, should another process take one first), its log and working files in DIR, and waits
# until it answers PING. Sets redis_pid and redis_port; exits 1 when none starts.
start_redis() { # start_redis DIR [redis-server arguments...]
  local dir=$1 i
  shift
  redis_pid=
  for _ in 1 2 3 4 5; do
    redis_port=$(free_port)
    redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --dir "$dir" \
      --logfile "$dir/redis.log" --daemonize no "$@" &
    redis_pid=$!
    for ((i = 0; i < 100; i++)); do
      if redis-cli -h 127.0.0.1 -p "$redis_port" ping 2> /dev/null | grep -q PONG; then return 0; fi
      kill -0 "$redis_pid" 2> /dev/null || break
      sleep 0.1
    done
    stop_child "$redis_pid"
    redis_pid=
  done
  echo "redis-server did not start on a loopback port:" >&2
  cat "$dir/redis.log" >&2
  exit 1
}

# stop_redis: stops the redis-server start_redis started.
stop_redis() {
  stop_child "${redis_pid:-}"
  redis_pid=
}

# redis_version: the installed redis-server's version (e.g. 7.0.15).
redis_version() { redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'; }

# start_nginx_on DIR SITE LOG FORMAT PORT...: a fresh nginx (a foreground child, one worker) serving
# SITE on 127.0.0.1 at each PORT, its config, pid and temp files under DIR, one access-log line in
# nginx's log_format FORMAT (e.g. '$status $request_uri') per request to LOG; waits until the last
# PORT accepts a connection. Sets nginx_pid; exits 1 when nginx does not start.
start_nginx_on() {
  local dir=$1 site=$2 log=$3 format=$4 servers="" port i
  shift 4
  for port in "$@"; do
    servers+="  server { listen 127.0.0.1:$port; root $site; }"$'\n'
  done
  mkdir -p "$dir/tmp"
  cat > "$dir/nginx.conf" << EOF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
  types { text/html html; }
  default_type application/octet-stream;
  log_format bench '$format';
  access_log $log bench;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
$servers}
EOF
  "$(nginx_bin)" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" -g 'daemon off;' &
  nginx_pid=$!
  for ((i = 0; i < 100; i++)); do
    if (exec 3<> "/dev/tcp/127.0.0.1/${!#}") 2> /dev/null; then return 0; fi
    kill -0 "$nginx_pid" 2> /dev/null || break
    sleep 0.1
  done
  echo "nginx did not start on 127.0.0.1:$*:" >&2
  cat "$dir/error.log" >&2
  exit 1
}

# stop_nginx: stops the nginx start_nginx_on started (QUIT: a graceful stop, the log flushed).
stop_nginx() {
  stop_child "${nginx_pid:-}" QUIT
  nginx_pid=
}

# nginx_bin: the nginx program (on PATH, else /usr/sbin/nginx, which may not exist).
nginx_bin() { command -v nginx || echo /usr/sbin/nginx; }

# now_ns: the wall clock in nanoseconds, for seconds_since.
now_ns() { date +%s%N; }

# seconds_since START_NS [DECIMALS]: seconds from START_NS (now_ns) to now, with DECIMALS
# decimals (default 3).
seconds_since() {
  local end
  end=$(now_ns)
  awk -v ns=$((end - $1)) -v d="${2:-3}" 'BEGIN { printf "%.*f", d, ns / 1e9 }'
}

# time_v_field FILE FIELD: one field of a /usr/bin/time -v report, by its label (e.g.
# "User time (seconds)", "Maximum resident set size (kbytes)").
time_v_field() { sed -n "s/.*$2: //p" "$1"; }

# time_v_wall FILE: the wall time of a /usr/bin/time -v report, in seconds.
time_v_wall() {
  time_v_field "$1" "Elapsed (wall clock) time (h:mm:ss or m:ss)" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }'
}

# time_v_cpu FILE: user + system seconds of a /usr/bin/time -v report.
time_v_cpu() {
  awk -v u="$(time_v_field "$1" "User time (seconds)")" \
    -v s="$(time_v_field "$1" "System time (seconds)")" 'BEGIN { print u + s }'
}

# median [NUMBERS...]: the median of the numbers (blank-separated, in one or more arguments; or,
# with no argument, one or more per line on stdin); the mean of the middle two for an even count.
median() {
  if (($#)); then echo "$*"; else cat; fi | tr -s ' \t' '\n' | sed '/^$/d' | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B, as awk prints it (6 significant digits).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }

# answers_soon PID URL: true once URL answers (10 s at most), false when the server PID that
# should serve it exits first or the time is up.
answers_soon() {
  local i
  for ((i = 0; i < 100; i++)); do
    curl -sf -o /dev/null "$2" && return 0
    kill -0 "$1" 2> /dev/null || return 1
    sleep 0.1 # polling for the server's first answer
  done
  return 1
}

# gitweb_installed: true when Debian's gitweb (its CGI script) and busybox (whose httpd serves it
# here) are installed: scripts/setup.sh --bench installs both.
gitweb_installed() {
  [[ -f /usr/share/gitweb/gitweb.cgi ]] && command -v busybox > /dev/null &&
    busybox --list | grep -x httpd > /dev/null && command -v git > /dev/null && command -v curl > /dev/null
}

# start_gitweb DIR: a real web application with real DUST (one commit, tree or blob under several
# parameter spellings, a project's summary under two URLs, the project list in three orders ...):
# generates a repository (bench/gen_git_repo.py: 300 commits, 3 branches, tags) in
# DIR/repos/project.git and serves it with Debian's gitweb on 127.0.0.1 at a free port (up to 5
# tried), its config, log and temp files under DIR; waits (10 s at most) until it answers. The
# server is busybox httpd: a process per connection, so requests run in parallel, each running
# gitweb.cgi (Perl) and git (~0.1 s a page). Snapshots are off: a tarball per commit and tree
# link, not HTML, and the costliest view. Sets gitweb_pid and gitweb_base (the project list's
# URL); exits 1 when it does not start. Run from the repository root.
start_gitweb() {
  local dir=$1 port
  mkdir -p "$dir/repos" "$dir/www/cgi-bin" "$dir/tmp"
  /usr/bin/python3 bench/gen_git_repo.py "$dir/repos/project.git" | sed 's/^/  repository: /'
  ln -sfn /usr/share/gitweb/gitweb.cgi "$dir/www/cgi-bin/gitweb.cgi"
  ln -sfn /usr/share/gitweb/static "$dir/www/static"
  # Perl: the $ are gitweb's variables, single-quoted on purpose.
  # shellcheck disable=SC2016
  {
    printf '$projectroot = "%s/repos";\n$git_temp = "%s/tmp";\n' "$dir" "$dir"
    printf '%s\n' '$site_name = "urlsieve bench";' '@stylesheets = ("/static/gitweb.css");' \
      '$javascript = "/static/gitweb.js";' '$logo = "/static/git-logo.png";' \
      '$favicon = "/static/git-favicon.png";' "\$feature{'snapshot'}{'default'} = [];"
  } > "$dir/gitweb.conf"
  : > "$dir/httpd.conf" # an empty config: no /etc/httpd.conf rule applies
  gitweb_pid=
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    GITWEB_CONFIG="$dir/gitweb.conf" busybox httpd -f -p "127.0.0.1:$port" -h "$dir/www" \
      -c "$dir/httpd.conf" > "$dir/httpd.log" 2>&1 &
    gitweb_pid=$!
    gitweb_base="http://127.0.0.1:$port/cgi-bin/gitweb.cgi"
    answers_soon "$gitweb_pid" "$gitweb_base" && return 0
    stop_child "$gitweb_pid"
    gitweb_pid=
  done
  echo "gitweb (busybox httpd) did not start on a loopback port:" >&2
  cat "$dir/httpd.log" >&2
  exit 1
}

# stop_gitweb: stops the httpd start_gitweb started (a CGI child still running ends with its
# request).
stop_gitweb() {
  stop_child "${gitweb_pid:-}"
  gitweb_pid=
}

# mediawiki_installed: true when Debian's MediaWiki and PHP's command line (whose built-in server
# serves it here) with SQLite are installed: scripts/setup.sh --bench installs them.
mediawiki_installed() {
  [[ -f /usr/share/mediawiki/maintenance/install.php ]] && command -v php > /dev/null &&
    php -m 2> /dev/null | grep -qx pdo_sqlite && command -v curl > /dev/null
}

# start_mediawiki DIR ARTICLES: a real wiki with the DUST a wiki has (an edit form, a section-edit
# form per section, a history, an information page, a permanent link, a login and an account
# form per article through `returnto`, red links to edit forms of pages that do not exist; the
# article under /index.php/TITLE and /index.php?title=TITLE): installs Debian's MediaWiki with
# SQLite under DIR (its database in /dev/shm when there is one: the import writes a transaction
# per revision), imports ARTICLES generated articles (bench/gen_wiki_pages.py; no link tables:
# a page is rendered when it is viewed, with every article in place) and serves it with PHP's
# built-in server (4 workers) on 127.0.0.1 at a free port (up to 5 tried); waits (10 s at most)
# until it answers. Sets mediawiki_pid and mediawiki_base (the main page's URL); exits 1 when
# it does not install or start. Run from the repository root.
start_mediawiki() {
  local dir=$1 articles=$2 data port
  mkdir -p "$dir"
  data=$dir/data
  [[ -d /dev/shm && -w /dev/shm ]] && data=$(mktemp -d /dev/shm/urlsieve_wiki.XXXXXX)
  mediawiki_data=$data
  php /usr/share/mediawiki/maintenance/install.php --dbtype sqlite --dbpath "$data" \
    --dbname wiki --server http://127.0.0.1 --scriptpath "" --confpath "$dir" \
    --pass "bench-$RANDOM-$RANDOM" "Bench Wiki" Admin > "$dir/install.log" 2>&1 || {
    echo "MediaWiki did not install (maintenance/install.php):" >&2
    tail -n 20 "$dir/install.log" >&2
    exit 1
  }
  # PHP: the $ are MediaWiki's variables, single-quoted on purpose. The server is the address the
  # request came to; no job runs in a page view; no parser cache (two workers writing one SQLite
  # file would wait on its lock).
  # shellcheck disable=SC2016
  printf '%s\n' '$wgServer = "http://" . ($_SERVER["HTTP_HOST"] ?? "127.0.0.1");' \
    '$wgJobRunRate = 0;' '$wgParserCacheType = CACHE_NONE;' >> "$dir/LocalSettings.php"
  /usr/bin/python3 bench/gen_wiki_pages.py "$articles" > "$dir/pages.xml"
  /usr/bin/python3 bench/gen_wiki_pages.py --main-page "$articles" > "$dir/main.txt"
  {
    MW_CONFIG_FILE="$dir/LocalSettings.php" php /usr/share/mediawiki/maintenance/importDump.php \
      --no-updates "$dir/pages.xml" &&
      MW_CONFIG_FILE="$dir/LocalSettings.php" php /usr/share/mediawiki/maintenance/edit.php \
        -u Admin "Main Page" < "$dir/main.txt"
  } > "$dir/import.log" 2>&1 || {
    echo "MediaWiki did not import the articles (maintenance/importDump.php, edit.php):" >&2
    tail -n 20 "$dir/import.log" >&2
    exit 1
  }
  echo "  wiki: $articles articles imported"
  mediawiki_pid=
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    MW_CONFIG_FILE="$dir/LocalSettings.php" PHP_CLI_SERVER_WORKERS=4 php -d opcache.enable_cli=1 \
      -S "127.0.0.1:$port" -t /usr/share/mediawiki > "$dir/server.log" 2>&1 &
    mediawiki_pid=$!
    mediawiki_base="http://127.0.0.1:$port/index.php/Main_Page"
    answers_soon "$mediawiki_pid" "$mediawiki_base" && return 0
    stop_mediawiki_server
  done
  echo "MediaWiki (php -S) did not start on a loopback port:" >&2
  cat "$dir/server.log" >&2
  exit 1
}

# stop_mediawiki: stops the server start_mediawiki started (and its workers) and removes its
# database from /dev/shm.
stop_mediawiki() {
  stop_mediawiki_server
  [[ ${mediawiki_data:-} == /dev/shm/urlsieve_wiki.* ]] && rm -rf "$mediawiki_data"
  mediawiki_data=
}

stop_mediawiki_server() {
  # The workers are the server's children: a TERM to it alone leaves them serving.
  [[ -z ${mediawiki_pid:-} ]] || pkill -TERM -P "$mediawiki_pid" 2> /dev/null || true
  stop_child "${mediawiki_pid:-}"
  mediawiki_pid=
}
