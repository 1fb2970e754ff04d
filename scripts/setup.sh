#!/usr/bin/env bash
# Installs the Debian packages urlsieve builds, tests and benchmarks with.
# Idempotent and quick when everything is present. As root it runs apt-get;
# otherwise it prints the exact command to run and exits non-zero.
#   scripts/setup.sh            build + test dependencies
#   scripts/setup.sh --bench    also the peers the benchmarks compare against and the web
#                               applications bench/dust.sh crawls (gitweb, served by busybox
#                               httpd; MediaWiki with SQLite, served by PHP's built-in server)
# Then the npm package's dependencies (node/node_modules: node-addon-api, cmake-js, Crawlee for the
# tests) with npm, skipped while node/package-lock.json is unchanged since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libcurl4-openssl-dev libgumbo-dev libxxhash-dev libsqlite3-dev sqlite3 libidn2-dev libpsl-dev zlib1g-dev
  nettle-dev libdeflate-dev python3
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libcpp-httplib-dev libssl-dev
  clang libclang-rt-14-dev
  pybind11-dev python3-dev python3-pytest python3-scrapy libunistring-dev
  python3-venv python3-pip python3-setuptools python3-prometheus-client libexpat1-dev
  libhiredis-dev redis-server redis-tools
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(nginx-light wget2 valgrind simhash gitweb busybox curl mediawiki php-cli php-sqlite3)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

# Node.js and npm: any install will do (Debian's nodejs + npm, or another one already on PATH,
# whose package would conflict with Debian's npm), so the commands are checked, not the packages.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)

# node/node_modules as node/package-lock.json pins it. The lock's hash is kept beside the modules,
# so a second run costs a sha256sum; npm's own cache (~/.npm) makes a reinstall quick and lets it
# work offline once it has run.
npm_install() {
  local stamp=node/node_modules/.urlsieve-lock.sha256 want
  want=$(sha256sum node/package-lock.json | cut -d' ' -f1)
  [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && return 0
  echo "urlsieve setup: npm ci in node/ (node-addon-api, cmake-js, crawlee)" >&2
  (cd node && npm ci --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error) >&2
  echo "$want" > "$stamp"
}

if ((${#missing[@]} == 0)); then
  npm_install
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "urlsieve setup: missing Debian packages. Run:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "urlsieve setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
npm_install
