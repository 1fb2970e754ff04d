#!/usr/bin/env bash
# Installs a built tree into a temporary prefix and builds examples/consumer against it — with
# find_package(urlsieve) (static, shared and the C API) and with pkg-config (shared, and a C program
# linked statically, which proves Libs.private) — then runs each consumer on the same input.
#   scripts/test_install.sh BUILD_DIR [asan|tsan]     (ctest runs it as install_consumer_test)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: test_install.sh BUILD_DIR [asan|tsan]}" && pwd)
sanitize=${2:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/urlsieve-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

flags=""
case "$sanitize" in
  asan) flags="-fsanitize=address,undefined" ;;
  tsan) flags="-fsanitize=thread" ;;
esac

fail() { echo "test_install: $*" >&2; exit 1; }
# ldd's output is matched in a variable, never piped into `grep -q`: grep -q exits at the first
# match, ldd (which writes a line per write()) then fails with EPIPE, and pipefail turned that
# into a failed check whenever the machine was loaded (1 check in 8 under ctest -j2).
# The consumers must find the installed library by their RUNPATH alone.
unset LD_LIBRARY_PATH

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(cd "$prefix" && dirname "$(find . -name liburlsieve_dedup.a | head -1)")
[[ -n "$libdir" && "$libdir" != . ]] || fail "liburlsieve_dedup.a not installed"
libdir=$prefix/${libdir#./}
# Exactly the public headers (cmake/Install.cmake): none of the internal ones (bloom_line.h,
# key_hash.h, sqlite_db.h, exact_store.h, state_dir.h ...), and none missing.
expected_headers='base/encoding/text_encoding.h
base/status.h
base/text_encoding.h
dedup/bloom/key_hash_value.h
dedup/content/content_seen_set.h
dedup/content/exact_content_index.h
dedup/content/local_content_seen_set.h
dedup/content/near_duplicate_index.h
dedup/content/simhash.h
dedup/content_seen_filter.h
dedup/key_hash_value.h
dedup/seen_filter.h
dedup/seen_set.h
dedup/state/state_identity.h
dedup/state_identity.h
dedup/url_canonicalizer.h
dedup/urlsieve.h
url/url_canonicalizer.h'
headers=$(cd "$prefix/include/urlsieve" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
[[ "$headers" == "$expected_headers" ]] \
  || fail "installed headers differ from the public API:"$'\n'"$(
       diff <(echo "$expected_headers") <(echo "$headers"))"
[[ -z "$(find "$prefix" -name '*.h' -not -path "$prefix/include/urlsieve/*")" ]] \
  || fail "headers installed outside include/urlsieve"
# Each public header compiles on its own with only the installed headers (and the C header as C);
# none reaches <xxhash.h>.
for h in $headers; do
  # A public header includes public headers only (by its quoted includes, before compiling).
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' \
                 "$prefix/include/urlsieve/$h"); do
    [[ -f "$prefix/include/urlsieve/$inc" ]] \
      || fail "installed header $h includes $inc, which is not installed (cmake/Install.cmake)"
  done
  printf '#include "%s"\n' "$h" > "$tmp/one_header.cc"
  c++ -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$prefix/include/urlsieve" \
    "$tmp/one_header.cc" || fail "$h does not compile against the installed headers"
  deps=$(c++ -std=c++20 -M -I"$prefix/include/urlsieve" "$tmp/one_header.cc")
  [[ "$deps" != *xxhash* ]] || fail "$h includes <xxhash.h>: $deps"
done
printf '#include "dedup/urlsieve.h"\n' > "$tmp/one_header.c"
cc -std=c99 -fsyntax-only -Wall -Wextra -Werror -I"$prefix/include/urlsieve" "$tmp/one_header.c" \
  || fail "dedup/urlsieve.h does not compile as C against the installed headers"
echo "test_install: public headers ok"
for f in liburlsieve_dedup.so cmake/urlsieve/urlsieveConfig.cmake pkgconfig/urlsieve.pc; do
  [[ -e "$libdir/$f" ]] || fail "$libdir/$f not installed"
done

# The input: five spellings of two URLs and one invalid line; expected: the two first spellings.
printf '%s\n' 'http://Example.com/a/./b#x' 'HTTP://example.com:80/a/b' 'http://example.com/a/%62' \
  'https://example.com/a/b' 'https://EXAMPLE.com:443/a/b?' > "$tmp/in.txt"
printf '%s\n' 'http://Example.com/a/./b#x' 'https://example.com/a/b' 'https://EXAMPLE.com:443/a/b?' \
  > "$tmp/expected.txt"
check() {  # check NAME COMMAND...: runs COMMAND on the input, compares with the expected output
  local name=$1; shift
  "$@" < "$tmp/in.txt" > "$tmp/$name.out" || fail "$name exited with $?"
  diff -u "$tmp/expected.txt" "$tmp/$name.out" || fail "$name printed the wrong URLs"
  echo "test_install: $name ok"
}
# 'https://EXAMPLE.com:443/a/b?' keeps its empty query unless drop_empty_query: a new URL.

# find_package from a project outside the source tree; CMAKE_PREFIX_PATH is its only hint.
cmake -S "$src/examples/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$tmp/consumer" -j 2 >/dev/null
grep -q -- "-I$src" "$tmp/consumer/build.ninja" && fail "consumer build sees the source tree"
check cmake_static "$tmp/consumer/consumer"
check cmake_shared "$tmp/consumer/consumer_shared"
check cmake_c "$tmp/consumer/consumer_c"
deps=$(ldd "$tmp/consumer/consumer_shared")
[[ "$deps" == *"=> $libdir/liburlsieve_dedup.so"* ]] \
  || fail "consumer_shared does not use the installed shared library: $deps"
deps=$(ldd "$tmp/consumer/consumer")
[[ "$deps" != *liburlsieve* ]] || fail "urlsieve::dedup is not the static library: $deps"

# pkg-config.
export PKG_CONFIG_PATH=$libdir/pkgconfig
c++ -std=c++20 $flags "$src/examples/consumer/consumer.cc" -o "$tmp/pc_shared" \
  $(pkg-config --cflags --libs urlsieve)
LD_LIBRARY_PATH=$libdir check pkgconfig_shared "$tmp/pc_shared"
static_libs=$(pkg-config --libs --static urlsieve | sed "s|-lurlsieve_dedup|$libdir/liburlsieve_dedup.a|")
cc -std=c99 $flags "$src/examples/consumer/consumer_c.c" -o "$tmp/pc_static_c" \
  $(pkg-config --cflags urlsieve) $static_libs
deps=$(ldd "$tmp/pc_static_c")
[[ "$deps" != *liburlsieve* ]] || fail "pc_static_c links the shared library: $deps"
check pkgconfig_static_c "$tmp/pc_static_c"

# The Python package, when it was built (not under sanitizers: the interpreter is not instrumented).
pydir=$prefix/lib/python3/dist-packages
if [[ -d "$pydir/urlsieve" && -z "$sanitize" ]]; then
  out=$(cd "$tmp" && PYTHONPATH=$pydir /usr/bin/python3 -c '
import sys, urlsieve
seen = urlsieve.SeenFilter(capacity=100)
print("\n".join(u for u in sys.stdin.read().split() if seen.insert_if_new(u)))
print(urlsieve.__file__)' < "$tmp/in.txt")
  [[ "$out" == "$(cat "$tmp/expected.txt")"$'\n'"$pydir/urlsieve/__init__.py" ]] \
    || fail "installed Python package: $out"
  echo "test_install: python ok"
fi
echo "test_install: all ok"
