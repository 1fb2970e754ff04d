#!/usr/bin/env bash
# Installs the Debian packages urlsieve builds, tests and benchmarks with.
# Idempotent and quick when everything is present. As root it runs apt-get;
# otherwise it prints the exact command to run and exits non-zero.
#   scripts/setup.sh            build + test dependencies
#   scripts/setup.sh --bench    also the peers the benchmarks compare against
set -euo pipefail

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
  packages+=(nginx-light wget2 valgrind)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
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
