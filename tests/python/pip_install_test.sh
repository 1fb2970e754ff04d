#!/usr/bin/env bash
# The README's "Python with pip", done as a user does it: a fresh venv of PYTHON (with the system
# site packages: Debian's wheel and scrapy), `pip install --no-build-isolation SOURCE/python` with
# no package index (PIP_NO_INDEX=1: anything pip tried to download would fail), then the README's
# Python example (the block between the readme-python-example markers, so the README and this test
# cannot drift) run by the venv's interpreter. Checks that the venv's copy is what was imported,
# that its version is the CMake project's, that the example's state holds its URLs, that
# urlsieve.scrapy imports, and that the install left nothing in the checkout.
#   tests/python/pip_install_test.sh SOURCE_DIR PYTHON VERSION   (ctest: python_pip_install)
# setuptools' build tree goes to the scratch dir (DIST_EXTRA_CONFIG), not SOURCE/python/build/.
set -euo pipefail
src=$(cd "${1:?usage: pip_install_test.sh SOURCE_DIR PYTHON VERSION}" && pwd)
python=${2:?usage: pip_install_test.sh SOURCE_DIR PYTHON VERSION}
version=${3:?usage: pip_install_test.sh SOURCE_DIR PYTHON VERSION}

fail() { echo "pip_install_test: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/urlsieve-pip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Nothing from the build tree or the caller's environment: the venv's own urlsieve only.
unset PYTHONPATH PYTHONHOME PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1

"$python" -m venv --system-site-packages "$tmp/venv" \
  || fail "$python -m venv failed (Debian: python3-venv)"
venv_python=$tmp/venv/bin/python
"$venv_python" -c 'import setuptools, wheel' \
  || fail "the venv has no setuptools or wheel (Debian: python3-venv, python3-wheel)"

cat > "$tmp/dist-extra.cfg" <<EOF
[build]
build_base = $tmp/setuptools-build
[egg_info]
egg_base = $tmp
EOF
checkout_files() { (cd "$src/python" && find . | LC_ALL=C sort); }
before=$(checkout_files)
start=$SECONDS
DIST_EXTRA_CONFIG=$tmp/dist-extra.cfg "$venv_python" -m pip install --no-build-isolation \
  "$src/python" > "$tmp/pip.log" 2>&1 \
  || { cat "$tmp/pip.log" >&2; fail "pip install --no-build-isolation $src/python failed"; }
echo "pip_install_test: pip install took $((SECONDS - start)) s"
after=$(checkout_files)
[[ "$before" == "$after" ]] \
  || fail "pip install changed $src/python:"$'\n'"$(diff <(echo "$before") <(echo "$after"))"

# The README's example, verbatim.
awk '/^<!-- \/readme-python-example/ { inside = 0 }
     inside && !/^```/ { print }
     /^<!-- readme-python-example/ { inside = 1 }' "$src/README.md" > "$tmp/example.py"
grep -q 'import urlsieve' "$tmp/example.py" \
  || fail "no Python example between the readme-python-example markers in $src/README.md"
mkdir "$tmp/run"
(cd "$tmp/run" && "$venv_python" "$tmp/example.py") || fail "the README's Python example failed"

# What the example did, seen from a new process: the venv's package, the state it saved.
(cd "$tmp/run" && "$venv_python" - "$tmp/venv" "$version") <<'EOF' || fail "checks after the example failed"
import os, sys
import urlsieve
import urlsieve.scrapy  # the Scrapy dupefilter: needs scrapy (python3-scrapy, system site packages)

venv, version = os.path.realpath(sys.argv[1]), sys.argv[2]
assert os.path.realpath(urlsieve.__file__).startswith(venv + os.sep), urlsieve.__file__
assert os.path.realpath(urlsieve._core.__file__).startswith(venv + os.sep), urlsieve._core.__file__
assert urlsieve.__version__ == version, (urlsieve.__version__, version)
# The content-seen test and its Scrapy middleware are in the package too.
assert urlsieve.ContentSeenSet().test(b"body", "some text", "http://example.com/a").kind == "first"
assert urlsieve.scrapy.ContentSeenMiddleware.process_response
with urlsieve.SeenFilter(state_dir="seen") as seen:  # reopened with the example's parameters
    assert "http://example.com/a" in seen and "http://example.com/b" in seen
    assert "http://example.com/c" not in seen
print("pip_install_test: the README example ran in", sys.prefix, "(urlsieve", version + ")")
EOF
shown=$("$venv_python" -m pip show urlsieve) || fail "pip show urlsieve failed"
[[ $'\n'"$shown"$'\n' == *$'\n'"Version: $version"$'\n'* ]] \
  || fail "pip show urlsieve: not version $version:"$'\n'"$shown"
echo "pip_install_test: ok"
